import { condition, patched, proxyLocalActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { PaymentActivities } from './activities';
import type { ComplianceActivities } from './activities/compliance';
import { LOCAL_DB_STEP } from './presets';
import { paymentStageQuery, screeningDecisionSignal, type PaymentResult, type PaymentStage, type ScreeningDecisionSignal } from './shared';
import { PAYGATE_ORDER_ID, PAYGATE_STATUS } from './search-attributes';

/**
 * What a payment and a trade do alike before any money moves: answer the `stage` query, take the screening
 * decision signal, keep `PaygateStatus` in step, screen the order (and wait for a review it is held for),
 * then check the payer's KYC limits.
 */

/** Screening reads the in-memory blocklist and writes one row; monitoring and limits are short transactions: local activities. */
const compliance = proxyLocalActivities<ComplianceActivities>(LOCAL_DB_STEP);
const db = proxyLocalActivities<PaymentActivities>(LOCAL_DB_STEP);

/** The order status as a workflow moves it, shown as search attribute `PaygateStatus`. */
export type TrackedStatus = 'screening' | 'processing' | 'completed' | 'failed' | 'rejected';

export interface OrderRun {
  /** Where the workflow is, as the `stage` query answers. */
  stage: PaymentStage;
  /** Keep `PaygateStatus` in step with the order. */
  report: (status: TrackedStatus) => void;
  /** Staff's decision on the screening review the order is held for, once signalled. */
  reviewDecision?: ScreeningDecisionSignal;
}

/**
 * The run's shared state and handlers. Only a run started with Paygate's search attributes reports its
 * status (its namespace knows them; an upsert of an unknown attribute would fail the workflow task).
 */
export function orderRun(): OrderRun {
  const tracked = workflowInfo().typedSearchAttributes.get(PAYGATE_ORDER_ID) !== undefined;
  const run: OrderRun = {
    stage: 'screening',
    report: (status) => {
      if (tracked) upsertSearchAttributes([{ key: PAYGATE_STATUS, value: status }]);
    },
  };
  setHandler(paymentStageQuery, () => run.stage);
  setHandler(screeningDecisionSignal, (signalled) => {
    run.reviewDecision ??= signalled;
  });
  return run;
}

/**
 * Whether monitoring runs: `on` in a run that asked its patches before its first step (it began after monitoring
 * existed), `ask` (the `monitoring` patch, asked after screening) in a run from before. A patch asked right after
 * a local activity does not replay when a query split the workflow task between the two (the SDK announces the
 * patch with the next task, after the activity's result), so runs now ask theirs first.
 */
export type MonitoringPatch = 'on' | 'ask';

/**
 * Screening, a review it holds the order for, monitoring and a review it holds the order for, then the KYC limits. Returns the order's refusal (`rejected`),
 * or undefined once the order may go on.
 */
export async function admitOrder(
  orderId: string,
  run: OrderRun,
  reviewSlaMs: number | undefined,
  monitoring: MonitoringPatch = 'ask',
): Promise<PaymentResult | undefined> {
  const screening = await compliance.screenPayment({ orderId });
  run.report(screening.blocked ? 'rejected' : 'screening');
  if (screening.blocked) return refused(run, { orderId, status: 'rejected', failureCode: 'blocked_by_compliance' });
  if (screening.review) {
    const held = await heldForReview(orderId, run, reviewSlaMs ?? screening.review.reviewSlaMs);
    if (held) return held;
  }

  // Transaction monitoring (docs/monitoring.md#holds), before anything is held: a run that started before it
  // existed replays without it. Its refusal and its review read to the payer as screening's do.
  if (monitoring === 'on' || patched('monitoring')) {
    const monitoring = await compliance.monitorOrder({ orderId });
    if (monitoring.refused) {
      run.report('rejected');
      return refused(run, { orderId, status: 'rejected', failureCode: 'blocked_by_compliance' });
    }
    if (monitoring.review) {
      run.reviewDecision = undefined;
      const held = await heldForReview(orderId, run, reviewSlaMs ?? monitoring.review.reviewSlaMs);
      if (held) return held;
    }
  }

  return withinLimits(orderId, run);
}

/**
 * The rest of `admitOrder` once monitoring held a screened order for review (in a run that took screening and
 * monitoring in one activity): the review, then the KYC limits. Returns the refusal, or undefined.
 */
export async function afterMonitoringReview(orderId: string, run: OrderRun, slaMs: number): Promise<PaymentResult | undefined> {
  const held = await heldForReview(orderId, run, slaMs);
  if (held) return held;
  return withinLimits(orderId, run);
}

/** The payer's KYC limits: a breach rejects the order. Returns the refusal, or undefined. */
async function withinLimits(orderId: string, run: OrderRun): Promise<PaymentResult | undefined> {
  run.stage = 'checking_limits';
  const breach = await db.checkLimits({ orderId });
  if (breach) {
    await db.rejectOrder({ orderId, failureCode: breach.code, reason: breach.reason });
    run.report('rejected');
    return refused(run, { orderId, status: 'rejected', failureCode: breach.code });
  }
  return undefined;
}

/**
 * Held for compliance review: staff confirm (rejected) or clear (the order goes on). The decision is recorded
 * before it is signalled, so the SLA timer reads it too: a lost signal costs time, never the decision.
 * Nothing is held from the wallet while the order waits. Returns the refusal, or undefined once cleared.
 */
async function heldForReview(orderId: string, run: OrderRun, slaMs: number): Promise<PaymentResult | undefined> {
  run.stage = 'awaiting_review';
  await condition(() => run.reviewDecision !== undefined, slaMs);
  const { status } = await compliance.concludeReview({ orderId });
  if (status === 'cleared') return undefined;
  run.report('rejected');
  return refused(run, { orderId, status: 'rejected', failureCode: 'blocked_by_compliance' });
}

function refused(run: OrderRun, result: PaymentResult): PaymentResult {
  run.stage = 'done';
  return result;
}
