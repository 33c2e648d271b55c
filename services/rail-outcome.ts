import { AppError } from '../platform/errors';
import { componentLogger } from '../platform/logger';
import type { RailOutcome } from '../connectors';
import { isTerminal, type OrderStatus } from '../domain/orders';
import { statusOf, type OrderRecord } from '../repositories/orders';
import { recordLateResult as insertLateResult } from '../repositories/rails';
import { signalRailOutcome } from '../workflows/client';

const log = componentLogger('rail-outcomes');

/** How a result that came after its order closed stands against the order's final status. */
export type LateVerdict = 'agrees' | 'contradicts' | 'unsettled';

export function lateVerdict(status: OrderStatus, outcome: RailOutcome): LateVerdict {
  if (status === 'completed' || status === 'reversed') return outcome.state === 'succeeded' ? 'agrees' : 'contradicts';
  if (status === 'failed' || status === 'rejected') return outcome.state === 'failed' ? 'agrees' : 'contradicts';
  // The workflow is gone but the order never reached a final status: nobody will act on this result.
  return 'unsettled';
}

/**
 * Hand a rail's outcome to its order's workflow. When the order is already final, or its workflow has
 * closed, nobody is waiting for the outcome: it is recorded in `late_rail_results` and logged as an error
 * (counted by `paygate_late_rail_results`), never dropped. Returns whether the workflow took it.
 */
export async function deliverRailOutcome(
  order: Pick<OrderRecord, 'id' | 'workflowId' | 'status'>,
  rail: string,
  outcome: RailOutcome,
): Promise<boolean> {
  if (isTerminal(order.status)) {
    await recordLateResult(order.id, rail, order.status, outcome);
    return false;
  }
  let taken: boolean;
  try {
    taken = await signalRailOutcome(order.workflowId, outcome);
  } catch (err) {
    log.warn({ orderId: order.id, err: (err as Error).message }, 'could not signal the payment workflow');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; retry the callback');
  }
  if (!taken) await recordLateResult(order.id, rail, (await statusOf(order.id)) ?? order.status, outcome);
  return taken;
}

async function recordLateResult(orderId: string, rail: string, status: OrderStatus, outcome: RailOutcome): Promise<void> {
  const verdict = lateVerdict(status, outcome);
  await insertLateResult({ orderId, rail, orderStatus: status, outcome: { ...outcome }, verdict });
  const fields = { orderId, rail, orderStatus: status, outcome: outcome.state, railReference: outcome.reference, verdict };
  if (verdict === 'contradicts') {
    log.error(
      fields,
      `a late ${rail} result says the transfer ${outcome.state}, but the order is ${status}: an operator must reconcile the order with the rail`,
    );
  } else if (verdict === 'unsettled') {
    log.error(
      fields,
      `a late ${rail} result (${outcome.state}) arrived for an order whose workflow has closed while it is ${status}: an operator must settle it`,
    );
  } else {
    log.error(fields, `a late ${rail} result (${outcome.state}) arrived after the order closed as ${status}; recorded`);
  }
}
