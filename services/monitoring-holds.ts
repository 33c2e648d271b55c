import { config } from '../platform/config';
import type { Movement } from '../domain/monitoring/rules';
import type { Tx } from '../repositories/transaction';
import { evaluateMovement } from './monitoring-service';

/**
 * Monitoring in the money's path (docs/monitoring.md#holds): each payout, trade, deposit and refund is
 * evaluated before its money moves, and what the evaluation decided tells its caller to go on, to hold the
 * movement for a review staff decide as they decide a screening review, or to refuse it. Nothing here is
 * shown to the customer: the holds and refusals it causes read as any other compliance check's.
 */

export type MonitoringVerdict =
  | { decision: 'pass' }
  /** `summary`: the typologies that fired, with their scores, for staff. */
  | { decision: 'review' | 'refuse'; evaluationId: string; summary: string };

const summaryOf = (typologies: Record<string, unknown>): string =>
  Object.entries(typologies)
    .flatMap(([name, value]) => {
      const t = value as { score?: number; alert_threshold?: number; block_threshold?: number; decision?: string };
      return t.decision === 'pass' ? [] : [`${name}: score ${t.score} (alert ${t.alert_threshold}, block ${t.block_threshold})`];
    })
    .join('; ');

/**
 * Judge one movement, once: a movement evaluated before (a retried step) keeps that evaluation's decision,
 * so a retry neither stores a second evaluation nor changes its mind (`fresh`: evaluate again all the same,
 * for a refund whose approval staff retry once the rules changed). With `MONITORING_ENABLED=false` every
 * movement passes and nothing is stored.
 */
export async function monitorMovement(movement: Movement, tx?: Tx, opts: { fresh?: boolean } = {}): Promise<MonitoringVerdict> {
  if (!config().compliance.monitoringEnabled) return { decision: 'pass' };
  // An earlier evaluation is found by the statement that would store this one (`keepEarlier`).
  const { evaluationId, decision, typologies } = await evaluateMovement(movement, tx, { keepEarlier: !opts.fresh });
  return decision === 'pass' ? { decision } : { decision, evaluationId, summary: summaryOf(typologies) };
}
