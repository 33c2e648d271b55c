import { config } from '../platform/config';
import { formatAmount, type Currency } from '../domain/money';
import { unresolvedPayouts, type UnresolvedPayoutRow } from '../repositories/orders';
import { decodeCursorKey, encodeCursor, pageLimit, UUID_PATTERN, type Page } from './paging';

/**
 * A payment whose rail has given no definite answer for longer than PAYMENT_UNRESOLVED_AFTER_MS: still
 * `processing`, its hold kept, and its rail still asked (README "Operating Paygate", docs/payments.md).
 */
export interface UnresolvedPayoutView {
  order_id: string;
  user_id: string;
  method: string;
  /** The amount sent, in its currency (the hold also keeps the fee). */
  amount: string;
  currency: string;
  /** The connector the transfer went to (`jenga`, `daraja`, `ccxt`, `sandbox`). */
  rail: string;
  /** The reference the rail saw, recorded before the request left: what to ask the rail's support about. */
  reference: string | null;
  /** The rail's own reference, when its answer to the submission came. */
  rail_reference: string | null;
  /**
   * `unknown`: the answer to the submission was lost (a timeout, a 5xx, a refusal as a duplicate, a crash):
   * the rail may or may not have the transfer. `accepted`: the rail took it and has not said how it ended.
   */
  submission: 'unknown' | 'accepted';
  /** When the first request left for the rail (RFC 3339). */
  sent_at: string;
  /** When the settle deadline passed without an answer, if it has. */
  overdue_at: string | null;
  created_at: string;
}

const toView = (row: UnresolvedPayoutRow): UnresolvedPayoutView => ({
  order_id: row.id,
  user_id: row.user_id,
  method: row.method,
  amount: formatAmount(row.amount_minor, row.currency as Currency),
  currency: row.currency,
  rail: row.rail,
  reference: row.rail_client_reference,
  rail_reference: row.rail_reference,
  submission: row.rail_submission === 'accepted' ? 'accepted' : 'unknown',
  sent_at: new Date(row.rail_sent_at).toISOString(),
  overdue_at: row.overdue_at ? new Date(row.overdue_at).toISOString() : null,
  created_at: new Date(row.created_at).toISOString(),
});

/** Unresolved payouts, oldest first, keyset-paged on (when the request left, id). */
export async function listUnresolvedPayouts(query: { limit?: number; cursor?: string }): Promise<Page<UnresolvedPayoutView>> {
  const limit = pageLimit(query.limit);
  const after = query.cursor === undefined ? null : decodeCursorKey(query.cursor, [/^\d{1,20}$/, UUID_PATTERN]);
  const sentBefore = new Date(Date.now() - config().unresolvedPayouts.afterMs);
  const rows = await unresolvedPayouts({ sentBefore, after: after && { sentAtUs: after[0], id: after[1] } }, limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map(toView),
    next_cursor: rows.length > limit && last ? encodeCursor(last.sent_at_us, last.id) : null,
  };
}
