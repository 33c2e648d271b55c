import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PaymentActivities } from './activities';
import { LOCAL_DB_STEP, RAIL_CALL, withNonRetryable } from './presets';
import type { ComplianceActivities } from './activities/compliance';
import type { P2pActivities } from './activities/p2p';
import {
  paymentStageQuery,
  railOutcomeSignal,
  screeningDecisionSignal,
  type AwaitingOutcome,
  type PaymentResult,
  type PaymentStage,
  type PaymentWorkflowInput,
  type RailOutcomeSignal,
  type ScreeningDecisionSignal,
} from './shared';
import { PAYGATE_ORDER_ID, PAYGATE_OVERDUE, PAYGATE_STATUS } from './search-attributes';

/**
 * Quick, idempotent database steps run as local activities: they touch only our own Postgres, take
 * milliseconds, and are keyed on the order id, so re-running one after a worker crash is harmless.
 */
const db = proxyLocalActivities<PaymentActivities>(LOCAL_DB_STEP);

/** Calls to the outside world go through the task queue, with their own timeouts and retries. */
const rail = proxyActivities<PaymentActivities>(RAIL_CALL);

/** Screening reads the in-memory blocklist and writes one row: a local activity like the other DB steps. */
const compliance = proxyLocalActivities<ComplianceActivities>(LOCAL_DB_STEP);

/** A P2P trade's escrow and its DB steps are local activities; its fiat leg goes through the rail connectors. */
const p2pDb = proxyLocalActivities<P2pActivities>(LOCAL_DB_STEP);
const p2pRail = proxyActivities<P2pActivities>(withNonRetryable(RAIL_CALL, ['TradeNotFound', 'OrderNotFound']));

const MAX_POLL_INTERVAL_MS = 60_000;
/** Continue as new past this many history events, unless Temporal suggests it sooner (~1 poll a minute: days). */
const HISTORY_LIMIT = 10_000;
/** Past this patch, a missed settle deadline flags the order overdue and the run keeps asking the rail. */
const OVERDUE_KEEPS_WAITING = 'overdue-keeps-waiting';
/** Runs that decide a failed trade's compensation in the workflow (release the hold, return the escrow, then fail). */
const TRADE_COMPENSATION_IN_WORKFLOW = 'trade-compensation-in-workflow';
/** Trades past this patch settle both legs between wallets in one step; earlier runs used escrow per trade and a rail. */
const P2P_ON_WALLETS = 'p2p-on-wallets';
/** Runs that decide a failed payment's compensation in the workflow (release the hold, then fail the order). */
const COMPENSATION_IN_WORKFLOW = 'compensation-in-workflow';

/** The order status as this workflow moves it, shown as search attribute `PaygateStatus`. */
type TrackedStatus = 'screening' | 'processing' | 'completed' | 'failed' | 'rejected';
type ReportStatus = (status: TrackedStatus) => void;

/**
 * Keep `PaygateStatus` in step with the order. Only a run started with Paygate's search attributes does
 * it (its namespace knows them; an upsert of an unknown attribute would fail the workflow task), and only
 * past the patch: an upsert is a command, so runs begun before it replay without one.
 */
function statusReporter(): ReportStatus {
  const tracked = workflowInfo().typedSearchAttributes.get(PAYGATE_ORDER_ID) !== undefined && patched('status-search-attribute');
  return (status) => {
    if (tracked) upsertSearchAttributes([{ key: PAYGATE_STATUS, value: status }]);
  };
}

/** A payment: screening → KYC/limits → hold → submit to the rail → await the outcome → settle, or compensate. */
export async function payment(input: PaymentWorkflowInput): Promise<PaymentResult> {
  const { orderId } = input;
  let stage: PaymentStage = 'screening';
  let outcome: RailOutcomeSignal | undefined;
  setHandler(paymentStageQuery, () => stage);
  setHandler(railOutcomeSignal, (signalled) => {
    outcome ??= signalled;
  });
  let reviewDecision: ScreeningDecisionSignal | undefined;
  setHandler(screeningDecisionSignal, (signalled) => {
    reviewDecision ??= signalled;
  });
  const report = statusReporter();

  // A run that continued as new while awaiting the rail's outcome goes straight back to waiting.
  if (input.resume) {
    stage = 'awaiting_outcome';
    const final = await awaitOutcome(orderId, input, () => outcome, input.p2p ? p2pRail.pollFiatLeg : rail.pollRail);
    stage = 'posting';
    const result = input.p2p ? await concludeTrade(orderId, final, report) : await concludePayment(orderId, final, report);
    stage = 'done';
    return result;
  }

  // Payments started before screening existed replay without it.
  if (patched('compliance-screening')) {
    const screening = await compliance.screenPayment({ orderId });
    report(screening.blocked ? 'rejected' : 'screening');
    if (screening.blocked) {
      stage = 'done';
      return { orderId, status: 'rejected', failureCode: 'blocked_by_compliance' };
    }
    if (screening.review) {
      // Held for compliance review: staff confirm (rejected) or clear (the payment goes on). The decision
      // is recorded before it is signalled, so the SLA timer reads it too: a lost signal costs time, never
      // the decision. Nothing is held from the wallet while the payment waits.
      stage = 'awaiting_review';
      await condition(() => reviewDecision !== undefined, input.reviewSlaMs ?? screening.review.reviewSlaMs);
      const { status } = await compliance.concludeReview({ orderId });
      if (status !== 'cleared') {
        report('rejected');
        stage = 'done';
        return { orderId, status: 'rejected', failureCode: 'blocked_by_compliance' };
      }
    }
  }

  stage = 'checking_limits';
  const breach = await db.checkLimits({ orderId });
  if (breach) {
    await db.rejectOrder({ orderId, failureCode: breach.code, reason: breach.reason });
    report('rejected');
    return { orderId, status: 'rejected', failureCode: breach.code };
  }

  // Only trades are started with `p2p` (never set before P2P existed), so other payments replay unchanged.
  if (input.p2p) {
    if (patched(P2P_ON_WALLETS)) {
      stage = 'posting';
      const result = await walletTrade(orderId, report);
      stage = 'done';
      return result;
    }
    return p2pTrade(
      input,
      () => outcome,
      (next) => {
        stage = next;
      },
      report,
    );
  }

  stage = 'holding';
  const unheld = await holdOrRefuse(orderId);
  if (unheld) {
    // Nothing was held, so there is nothing to give back: the order fails as it stands.
    await db.failOrder({ orderId, ...unheld });
    report('failed');
    stage = 'done';
    return { orderId, status: 'failed', failureCode: unheld.failureCode };
  }
  report('processing');

  stage = 'submitting';
  try {
    await rail.submitToRail({ orderId });
  } catch (err) {
    const failure = railFailure(err);
    log.warn('rail refused the payment', { orderId, ...failure });
    await compensateAndFail(orderId, failure);
    report('failed');
    return { orderId, status: 'failed', failureCode: failure.failureCode };
  }

  stage = 'awaiting_outcome';
  const final = await awaitOutcome(orderId, input, () => outcome);

  stage = 'posting';
  const result = await concludePayment(orderId, final, report);
  stage = 'done';
  return result;
}

/**
 * Hold the payment from the payer's wallet. Returns the failure when the wallet cannot cover it (the
 * database refused the hold; nothing moved), undefined once held.
 */
async function holdOrRefuse(orderId: string): Promise<{ failureCode: string; reason: string } | undefined> {
  try {
    await db.holdFunds({ orderId });
    return undefined;
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (cause instanceof ApplicationFailure && cause.type === 'InsufficientFunds') {
      return { failureCode: 'insufficient_funds', reason: 'the wallet cannot cover this payment' };
    }
    throw err;
  }
}

/** The rail's definite answer: settle the hold, or release it and fail the order. */
async function concludePayment(orderId: string, final: RailOutcomeSignal, report: ReportStatus): Promise<PaymentResult> {
  if (final.state === 'succeeded') {
    await db.settlePayment({ orderId, reference: final.reference });
    report('completed');
    return { orderId, status: 'completed' };
  }
  await compensateAndFail(orderId, { failureCode: final.failureCode, reason: final.reason });
  report('failed');
  return { orderId, status: 'failed', failureCode: final.failureCode };
}

/**
 * A held payment that will not settle: the compensation is decided here — give the hold back to the payer,
 * then fail the order. Runs recorded before this patch made both moves in one `failPayment` activity.
 */
async function compensateAndFail(orderId: string, failure: { failureCode: string; reason: string }): Promise<void> {
  if (!patched(COMPENSATION_IN_WORKFLOW)) {
    await db.failPayment({ orderId, ...failure });
    return;
  }
  await db.releaseHold({ orderId });
  await db.failOrder({ orderId, ...failure });
}

/**
 * A trade whose fiat leg will not settle: the compensation is decided here — give the fiat hold back, return
 * the escrowed asset to the seller (and the ad), then fail the order. Runs recorded before this patch made
 * all three moves in one `failTrade` activity.
 */
async function compensateAndFailTrade(orderId: string, failure: { failureCode: string; reason: string }): Promise<void> {
  if (!patched(TRADE_COMPENSATION_IN_WORKFLOW)) {
    await p2pDb.failTrade({ orderId, ...failure });
    return;
  }
  await db.releaseHold({ orderId });
  await p2pDb.returnTradeEscrow({ orderId });
  await db.failOrder({ orderId, ...failure });
}

/**
 * A P2P trade on wallets (SPEC §7): both legs settle between wallets in one database step, no rail. A taker's
 * wallet that cannot pay fails the order here (nothing moved); an ad that no longer fits rejected it.
 */
async function walletTrade(orderId: string, report: ReportStatus): Promise<PaymentResult> {
  report('processing');
  const settled = await p2pDb.settleWalletTrade({ orderId });
  if (settled.status === 'failed') {
    const failureCode = settled.failureCode ?? 'insufficient_funds';
    await db.failOrder({ orderId, failureCode, reason: settled.reason ?? 'the trade could not settle' });
    report('failed');
    return { orderId, status: 'failed', failureCode };
  }
  report(settled.status);
  return settled.status === 'completed'
    ? { orderId, status: 'completed' }
    : { orderId, status: 'rejected', failureCode: settled.failureCode };
}

/**
 * A P2P trade as runs recorded before trades settled on wallets carry it (SPEC §7 before wallets): lock the ad's asset in escrow → hold the fiat → the fiat leg over the rail →
 * release the escrow to the buyer and post both legs; on failure or timeout the escrow returns.
 */
async function p2pTrade(
  input: PaymentWorkflowInput,
  signalled: () => RailOutcomeSignal | undefined,
  setStage: (stage: PaymentStage) => void,
  report: ReportStatus,
): Promise<PaymentResult> {
  const { orderId } = input;
  setStage('holding');
  const escrow = await p2pDb.lockEscrow({ orderId });
  if (!escrow.locked) {
    report('rejected');
    setStage('done');
    return { orderId, status: 'rejected', failureCode: 'ad_unavailable' };
  }
  const unheld = await holdOrRefuse(orderId);
  if (unheld) {
    // The escrow is locked but no fiat was held: give the escrow back, then fail the trade.
    await compensateAndFailTrade(orderId, unheld);
    report('failed');
    setStage('done');
    return { orderId, status: 'failed', failureCode: unheld.failureCode };
  }
  report('processing');

  setStage('submitting');
  try {
    await p2pRail.submitFiatLeg({ orderId });
  } catch (err) {
    const failure = railFailure(err);
    log.warn('rail refused the fiat leg of a trade', { orderId, ...failure });
    await compensateAndFailTrade(orderId, failure);
    report('failed');
    setStage('done');
    return { orderId, status: 'failed', failureCode: failure.failureCode };
  }

  setStage('awaiting_outcome');
  const final = await awaitOutcome(orderId, input, signalled, p2pRail.pollFiatLeg);

  setStage('posting');
  const result = await concludeTrade(orderId, final, report);
  setStage('done');
  return result;
}

/** The fiat leg's definite answer: settle it and release the escrow, or release the hold and return the escrow. */
async function concludeTrade(orderId: string, final: RailOutcomeSignal, report: ReportStatus): Promise<PaymentResult> {
  if (final.state === 'succeeded') {
    await p2pDb.settleTrade({ orderId, reference: final.reference });
    report('completed');
    return { orderId, status: 'completed' };
  }
  await compensateAndFailTrade(orderId, { failureCode: final.failureCode, reason: final.reason });
  report('failed');
  return { orderId, status: 'failed', failureCode: final.failureCode };
}

/**
 * The rail's callback (signal) or, when it is late, its status polled with a growing interval (capped).
 *
 * Only the rail's definite answer ends the wait. When the settle deadline passes without one, the transfer
 * may still complete (an RTGS can take hours), so the order is flagged overdue — an `overdue` event, the
 * `PaygateOverdue` search attribute — and stays `processing` with its hold, while the run keeps asking for
 * as long as it takes, continuing as new when its history grows. Runs begun before this behaviour (no
 * patch marker) still fail with `rail_timeout` at the deadline.
 */
async function awaitOutcome(
  orderId: string,
  input: PaymentWorkflowInput,
  signalled: () => RailOutcomeSignal | undefined,
  poll: (ref: { orderId: string }) => Promise<RailOutcomeSignal | { state: 'pending'; reference: string }> = rail.pollRail,
): Promise<RailOutcomeSignal> {
  const keepsWaiting = input.resume !== undefined || patched(OVERDUE_KEEPS_WAITING);
  const deadline = input.resume?.deadline ?? Date.now() + input.settleTimeoutMs;
  const maxInterval = input.maxPollIntervalMs ?? MAX_POLL_INTERVAL_MS;
  let wait = input.resume?.waitMs ?? input.pollAfterMs;
  let overdue = input.resume?.overdue ?? false;
  for (;;) {
    const timeout = overdue ? wait : Math.max(1, Math.min(wait, deadline - Date.now()));
    if (await condition(() => signalled() !== undefined, timeout)) {
      const outcome = signalled();
      if (outcome) return outcome;
    }
    const polled = await poll({ orderId });
    if (polled.state !== 'pending') return signalled() ?? polled;
    if (Date.now() >= deadline) {
      if (!keepsWaiting) {
        return { state: 'failed', reference: polled.reference, failureCode: 'rail_timeout', reason: 'no outcome from the rail in time' };
      }
      if (!overdue) {
        overdue = true;
        await flagOverdue(orderId, input.settleTimeoutMs);
      }
    }
    wait = Math.min(wait * 2, maxInterval);
    if (keepsWaiting && historyIsLong(input)) {
      const late = signalled();
      if (late) return late;
      const resume: AwaitingOutcome = { stage: 'awaiting_outcome', deadline, waitMs: wait, overdue };
      // The workflow id stays the order's; the new run's handlers take the rail's callback from here on.
      await continueAsNew<typeof payment>({ ...input, resume });
    }
  }
}

/** The order is overdue: recorded on the order (event, `overdue_at`) and, when the run carries them, in its search attributes. */
async function flagOverdue(orderId: string, settleTimeoutMs: number): Promise<void> {
  log.warn('no definite answer from the rail by the settle deadline; the payment stays processing', { orderId });
  await db.flagOverdue({
    orderId,
    reason: `no definite answer from the rail within ${Math.round(settleTimeoutMs / 1000)} s; the transfer may still complete, so the hold is kept and the rail is still asked`,
  });
  if (workflowInfo().typedSearchAttributes.get(PAYGATE_ORDER_ID) !== undefined) {
    upsertSearchAttributes([{ key: PAYGATE_OVERDUE, value: 'true' }]);
  }
}

/** Whether this run should hand over to a new one before its history grows further. */
function historyIsLong(input: PaymentWorkflowInput): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= (input.historyLimit ?? HISTORY_LIMIT);
}

function railFailure(err: unknown): { failureCode: string; reason: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const [details] = (cause.details ?? []) as { failureCode?: string }[];
    return { failureCode: details?.failureCode ?? 'rail_error', reason: cause.message };
  }
  return { failureCode: 'rail_error', reason: err instanceof Error ? err.message : 'the rail failed' };
}
