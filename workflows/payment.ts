import {
  ApplicationFailure,
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
import type { AdmissionActivities, AdmissionAndSubmission } from './activities/admission';
import type { PaymentAccounts } from '../domain/ledger';
import { LOCAL_DB_STEP, RAIL_CALL } from './presets';
import { CONFLICT, INSUFFICIENT_FUNDS, RAIL_OUTCOME_UNKNOWN, RAIL_REJECTED } from './failure-types';
import { admitOrder, afterMonitoringReview, orderRun, type OrderRun } from './admission';
import { awaitRailOutcome, failureOf, failureOfType, type Failure, type PolledStatus } from './outcome';
import {
  NOT_SENT_FAILURE_CODE,
  railOutcomeSignal,
  resolveOutcomeUpdate,
  type OperatorResolution,
  type PaymentResult,
  type PaymentWorkflowInput,
  type RailOutcomeSignal,
} from './shared';
import { PAYGATE_ORDER_ID, PAYGATE_OVERDUE } from './search-attributes';

/**
 * Quick, idempotent database steps run as local activities: they touch only our own Postgres, take
 * milliseconds, and are keyed on the order id, so re-running one after a worker crash is harmless.
 */
const db = proxyLocalActivities<PaymentActivities>(LOCAL_DB_STEP);
/** A settlement's first attempt alone, when `processing` is still to be reported should it fail. */
const firstAttempt = proxyLocalActivities<PaymentActivities>({ ...LOCAL_DB_STEP, retry: { ...LOCAL_DB_STEP.retry, maximumAttempts: 1 } });
const admit = proxyLocalActivities<AdmissionActivities>(LOCAL_DB_STEP);

/** Calls to the outside world go through the task queue, with their own timeouts and retries. */
const rail = proxyActivities<PaymentActivities>(RAIL_CALL);
/** Admission and the submission it ends with, as one rail call (docs/payments.md#admission). */
const admitThenRail = proxyActivities<AdmissionActivities>(RAIL_CALL);

const MAX_POLL_INTERVAL_MS = 60_000;
/** Continue as new past this many history events, unless Temporal suggests it sooner (~1 poll a minute: days). */
const HISTORY_LIMIT = 10_000;

/** A payment: screening → KYC/limits → hold → submit to the rail → await the outcome → settle, or compensate. */
export async function payment(input: PaymentWorkflowInput): Promise<PaymentResult> {
  const { orderId } = input;
  const run = orderRun();
  let outcome: RailOutcomeSignal | undefined;
  setHandler(railOutcomeSignal, (signalled) => {
    outcome ??= signalled;
  });
  const signalled = () => outcome;
  let resolution: OperatorResolution | undefined;
  setHandler(
    resolveOutcomeUpdate,
    (resolved) => {
      if (resolution?.requestId !== resolved.requestId) {
        resolution = resolved;
        outcome = operatorsAnswer(resolved);
      }
      return { taken: true };
    },
    { validator: (resolved: OperatorResolution) => acceptsResolution(run, outcome, resolution, resolved) },
  );

  // The order's ledger accounts, when its admission answered them (they never change): its settlement needs no read.
  let accounts: PaymentAccounts | undefined;
  // Whether `processing` is still to be upserted: only when the run may be seen in it (see `processingWhenSeen`).
  let processingUnreported = false;
  // A run that continued as new while awaiting the rail's outcome goes straight back to waiting.
  if (!input.resume) {
    const admission = await admitted(orderId, run, input.reviewSlaMs, input.admitWithSubmission === true);
    if ('status' in admission) return admission;
    accounts = admission.accounts;
    // The rail's answer already in (its callback came with the submission's result), the order settles in this
    // workflow task, and a `processing` upserted now would be replaced by the outcome in the same task.
    const sent = admission.submission !== undefined && 'made' in admission.submission;
    if (input.processingWhenSeen === true && sent && signalled() !== undefined) processingUnreported = true;
    else run.report('processing');

    run.stage = 'submitting';
    const submission = admission.submission ?? (await submitted(orderId));
    if ('failed' in submission) {
      const err = submission.failed;
      const failure = failureOf(err);
      if (await refusedForSure(orderId, err)) {
        log.warn('rail refused the payment', { orderId, ...failure });
        await compensateAndFail(orderId, failure);
        return finished(run, 'failed', { orderId, status: 'failed', failureCode: failure.failureCode });
      }
      // The transfer may have been executed: the hold stays, and the rail is asked until it answers.
      log.warn('the rail’s answer to the payment is unknown; asking it', { orderId, ...failure });
      await db.noteOutcomeUnknown({
        orderId,
        reason: `the rail’s answer was lost (${failure.reason}); the hold is kept and the rail is asked until it answers`,
      });
    }
  }

  run.stage = 'awaiting_outcome';
  const final = await awaitOutcome(input, signalled);

  run.stage = 'posting';
  const resolved = resolution && final === outcome ? resolution : undefined;
  if (final.state === 'succeeded') {
    const settlement = {
      orderId,
      reference: final.reference,
      ...(accounts ? { accounts } : {}),
      ...(resolved ? { note: resolvedNote(resolved) } : {}),
    };
    await settle(run, settlement, processingUnreported);
    return finished(run, 'completed', { orderId, status: 'completed' });
  }
  if (processingUnreported) run.report('processing');
  await compensateAndFail(orderId, { failureCode: final.failureCode, reason: final.reason });
  return finished(run, 'failed', { orderId, status: 'failed', failureCode: final.failureCode });
}

/**
 * Settle the payment. With `processing` unreported, its first attempt alone: should it fail, the run may be seen
 * while the settlement retries, so the order is reported `processing` before the retries.
 */
async function settle(run: OrderRun, settlement: Settlement, processingUnreported: boolean): Promise<void> {
  if (processingUnreported) {
    try {
      await firstAttempt.settlePayment(settlement);
      return;
    } catch {
      run.report('processing');
    }
  }
  await db.settlePayment(settlement);
}

type Settlement = Parameters<PaymentActivities['settlePayment']>[0];

/** A submission to the rail: made, or failed with the activity's failure (the workflow decides what follows). */
type Submission = { made: true } | { failed: unknown };

/** An order admitted and held: its ledger accounts when admission answered them, and its submission when made with it. */
interface Admitted {
  accounts?: PaymentAccounts;
  submission?: Submission;
}

/** Submit the held order to its rail. */
async function submitted(orderId: string): Promise<Submission> {
  try {
    await rail.submitToRail({ orderId });
    return { made: true };
  } catch (err) {
    return { failed: err };
  }
}

/**
 * Screening, monitoring, the KYC limits and the hold. A run started `admitWithSubmission`, or since the
 * `admit-with-submission` patch, takes them in the rail activity that then submits the held order; a run since
 * `admit-in-one` took them in one local activity; either
 * goes one by one when a compliance review holds the order, or when admission failed in the rail activity
 * (docs/payments.md#admission). A run from before replays them one by one. Returns the payment's end when it is
 * refused or cannot be held, else the order's ledger accounts when the one activity answered them, and the
 * submission when it was made with admission.
 */
async function admitted(
  orderId: string,
  run: OrderRun,
  reviewSlaMs: number | undefined,
  startedWithSubmission: boolean,
): Promise<PaymentResult | Admitted> {
  // A run started for admission with the submission takes it without asking the patch as it runs, so it records no
  // marker and no change-version upsert. Replaying, it asks (and takes it whatever the answer): a run whose first
  // task a worker from before took recorded the marker, and replays it. One that has the newer patch does not ask
  // for the older one.
  const withSubmission = startedWithSubmission ? askedInReplay('admit-with-submission') : patched('admit-with-submission');
  const inOne = withSubmission || patched('admit-in-one');
  if (inOne) {
    const admission = withSubmission ? await admittedAndSubmitted(orderId) : await admit.admitPayment({ orderId });
    switch (admission.admitted) {
      case 'submitted':
        return { accounts: admission.accounts, submission: { made: true } };
      case 'submission_failed':
        return { submission: { failed: admission.failed } };
      case 'held':
        return { accounts: admission.accounts };
      case 'rejected':
        run.report('rejected');
        run.stage = 'done';
        return { orderId, status: 'rejected', failureCode: admission.failureCode };
      case 'unheld':
        return unheldFails(orderId, run, admission);
      case 'monitoring_review': {
        run.report('screening');
        const refused = await afterMonitoringReview(orderId, run, reviewSlaMs ?? admission.reviewSlaMs);
        return refused ?? held(orderId, run);
      }
      case 'screening_review':
      case 'by_steps':
        break;
    }
  }
  const refused = await admitOrder(orderId, run, reviewSlaMs, inOne ? 'on' : 'ask');
  return refused ?? held(orderId, run);
}

/**
 * Admission and the submission in the one rail activity. Its failure is the submission's: admission's own is
 * answered `by_steps`, so a failure comes after the hold (or from the activity's last attempt timing out,
 * held or not: the compensation after it gives back a hold only when there is one).
 */
async function admittedAndSubmitted(orderId: string): Promise<AdmissionAndSubmission | { admitted: 'submission_failed'; failed: unknown }> {
  try {
    return await admitThenRail.admitAndSubmit({ orderId });
  } catch (err) {
    return { admitted: 'submission_failed', failed: err };
  }
}

/** Ask a patch only while replaying, so a marker in the history is matched and a new run records none; always true. */
function askedInReplay(patchId: string): true {
  if (workflowInfo().unsafe.isReplaying) patched(patchId);
  return true;
}

/** The hold, one step on its own. Returns the payment's end when the wallet cannot cover it. */
async function held(orderId: string, run: OrderRun): Promise<PaymentResult | Admitted> {
  run.stage = 'holding';
  const unheld = await holdOrRefuse(orderId);
  return unheld ? unheldFails(orderId, run, unheld) : {};
}

/** Nothing was held, so there is nothing to give back: the order fails as it stands. */
async function unheldFails(orderId: string, run: OrderRun, unheld: Failure): Promise<PaymentResult> {
  await db.failOrder({ orderId, failureCode: unheld.failureCode, reason: unheld.reason });
  return finished(run, 'failed', { orderId, status: 'failed', failureCode: unheld.failureCode });
}

/**
 * Operators' resolution is taken only while the workflow waits for the rail's answer and none has come: a rail
 * answer that arrived first wins (docs/payments.md#unknown-outcomes). The same request delivered again is
 * accepted, so an approval retried after a lost answer finds it taken.
 */
function acceptsResolution(
  run: OrderRun,
  outcome: RailOutcomeSignal | undefined,
  taken: OperatorResolution | undefined,
  resolved: OperatorResolution,
): void {
  if (taken?.requestId === resolved.requestId) return;
  if (outcome !== undefined || run.stage === 'posting' || run.stage === 'done') {
    throw ApplicationFailure.nonRetryable('the rail has answered already: its answer stands', CONFLICT);
  }
  if (run.stage !== 'awaiting_outcome') {
    throw ApplicationFailure.nonRetryable(`the payment is not waiting for its rail's answer (stage ${run.stage})`, CONFLICT);
  }
}

// The payer reads the order's events and failure reason: who decided and the evidence stay on the four-eyes
// request the text names.
const resolvedNote = (r: OperatorResolution): string =>
  `settled on the rail's evidence, resolved by operators (four-eyes request ${r.requestId})`;

/** Operators' resolution as the rail's definite answer: `sent` settles, `not_sent` gives the hold back and fails. */
function operatorsAnswer(r: OperatorResolution): RailOutcomeSignal {
  if (r.outcome === 'sent') return { state: 'succeeded', reference: '' };
  return {
    state: 'failed',
    reference: '',
    failureCode: NOT_SENT_FAILURE_CODE,
    reason: `the rail never sent the transfer, on its evidence, resolved by operators (four-eyes request ${r.requestId})`,
  };
}

function finished(run: OrderRun, status: 'completed' | 'failed', result: PaymentResult): PaymentResult {
  run.report(status);
  run.stage = 'done';
  return result;
}

/**
 * Hold the payment from the payer's wallet. Returns the failure when the wallet cannot cover it (the
 * database refused the hold; nothing moved), undefined once held.
 */
async function holdOrRefuse(orderId: string): Promise<Failure | undefined> {
  try {
    await db.holdFunds({ orderId });
    return undefined;
  } catch (err) {
    if (failureOfType(err, INSUFFICIENT_FUNDS)) {
      return { failureCode: 'insufficient_funds', reason: 'the wallet cannot cover this payment' };
    }
    throw err;
  }
}

/**
 * Whether a failed submission is a definite refusal, so the payment may fail: the rail refused the first
 * request, or no request ever reached it (every one was refused, or none left). A submission whose outcome is
 * unknown (a lost answer, exhausted retries after a request left, a worker gone mid-call, a refusal as a
 * duplicate) is not: docs/payments.md#unknown-outcomes.
 */
async function refusedForSure(orderId: string, err: unknown): Promise<boolean> {
  if (failureOfType(err, RAIL_REJECTED)) return true;
  if (failureOfType(err, RAIL_OUTCOME_UNKNOWN)) return false;
  const state = await db.railSubmissionOf({ orderId });
  return state === 'unsent' || state === 'refused';
}

/** A held payment that will not settle: the compensation is decided here — give the hold back, then fail the order. */
async function compensateAndFail(orderId: string, failure: Failure): Promise<void> {
  await db.releaseHold({ orderId });
  await db.failOrder({ orderId, ...failure });
}

/**
 * Only the rail's definite answer ends the wait. When the settle deadline passes without one, the transfer
 * may still complete (an RTGS can take hours), so the order is flagged overdue — an `overdue` event, the
 * `PaygateOverdue` search attribute — and stays `processing` with its hold, while the run keeps asking for
 * as long as it takes, continuing as new when its history grows.
 */
function awaitOutcome(input: PaymentWorkflowInput, signalled: () => RailOutcomeSignal | undefined): Promise<RailOutcomeSignal> {
  const { orderId } = input;
  const deadline = input.resume?.deadline ?? Date.now() + input.settleTimeoutMs;
  return awaitRailOutcome({
    signalled,
    poll: () => askTheRail(orderId),
    deadline,
    waitMs: input.resume?.waitMs ?? input.pollAfterMs,
    maxIntervalMs: input.maxPollIntervalMs ?? MAX_POLL_INTERVAL_MS,
    pastDeadline: input.resume?.overdue,
    onDeadline: async () => {
      await flagOverdue(orderId, input.settleTimeoutMs);
      return undefined;
    },
    afterPending: async ({ waitMs, pastDeadline }) => {
      // A callback that is already in is taken by the next wait, in this run.
      if (signalled() !== undefined || !historyIsLong(input)) return;
      // The workflow id stays the order's; the new run's handlers take the rail's callback from here on.
      await continueAsNew<typeof payment>({
        ...input,
        resume: { stage: 'awaiting_outcome', deadline, waitMs, overdue: pastDeadline },
      });
    },
  });
}

/**
 * The rail's answer to a poll. A poll that fails, even after its retries (the rail down for a while, a
 * status query refused), is not an answer: the order stays as it is and the rail is asked again at the next
 * interval.
 */
async function askTheRail(orderId: string): Promise<PolledStatus> {
  try {
    return await rail.pollRail({ orderId });
  } catch (err) {
    log.warn('the rail could not be asked; asking again later', { orderId, ...failureOf(err) });
    return { state: 'pending', reference: '' };
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
