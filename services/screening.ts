import { config } from '../platform/config';
import { AppError } from '../platform/errors';
import { componentLogger } from '../platform/logger';
import { Screener, type ScreeningContext, type ScreeningItem, type ScreeningMatch } from '../domain/compliance/screening';
import { blocklistChangesSince, recordScreeningHit, screenRemembering } from '../repositories/compliance';
import type { Tx } from '../repositories/transaction';

/**
 * Screening a counterparty outside the workflows: registration, KYC submission, ad posting and money in.
 * The payment and trade workflows screen in their own activities, through the same screener.
 */

const log = componentLogger('screening');

let shared: Screener | undefined;

/**
 * This process's one screener: the blocklist in memory, brought up to date from its change feed before
 * each screening. The api, the jobs process and the worker's activities all screen through it.
 */
export function screener(): Screener {
  shared ??= new Screener(blocklistChangesSince, config().compliance.screening);
  return shared;
}

/**
 * Screen the items. A block is recorded and refused with 422 `blocked_by_compliance` (without saying which
 * entry). A review is recorded for staff (`needs_review`) and the request goes on: what is decided on it
 * applies to the next screenings of the same value (a confirmed pair blocks, a cleared one passes), and
 * every payment screens its payer again.
 */
export async function refuseOnScreeningHit(context: ScreeningContext, userId: string | null, items: ScreeningItem[]): Promise<void> {
  const review = await refuseIfBlocked(context, userId, items);
  if (review) await recordScreeningReview(context, review, userId);
}

/** Record a review match for staff (`needs_review`), in `tx` when given. */
export async function recordScreeningReview(
  context: ScreeningContext,
  match: ScreeningMatch,
  userId: string | null,
  tx?: Tx,
): Promise<void> {
  await recordScreeningHit({ context, match, userId }, tx);
  log.info(
    { context, userId, entryId: match.entryId, field: match.field, score: match.score, reason: match.reviewReason },
    'screening review',
  );
}

/**
 * Screen the items: a block is recorded and refused as `refuseOnScreeningHit` does; the best review match
 * is returned, not yet recorded. Registration records it with the new account's id, once that exists, so
 * staff see whose it is and its user can never decide it.
 */
export async function refuseIfBlocked(
  context: ScreeningContext,
  userId: string | null,
  items: ScreeningItem[],
): Promise<ScreeningMatch | null> {
  const [best] = await screenRemembering(screener(), items, userId);
  if (!best) return null;
  if (best.verdict === 'review') return best;
  await recordScreeningHit({ context, match: best, userId });
  log.info({ context, userId, entryId: best.entryId, field: best.field, score: best.score }, 'screening hit');
  throw new AppError('blocked_by_compliance', 'this request cannot be accepted; contact support if you think this is a mistake');
}
