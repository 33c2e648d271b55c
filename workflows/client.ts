import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { config, type Config } from '../platform/config';
import { AppError } from '../platform/errors';
import { componentLogger } from '../platform/logger';
import { ensureTemporalConnected, startWithSearchAttributes, temporalClient } from '../platform/temporal';
import {
  COMPLIANCE_REPORT_WORKFLOW,
  complianceReportWorkflowId,
  type ComplianceReportInput,
  type ComplianceReportResult,
} from '../domain/compliance/report-contract';
import {
  APPEAL_WORKFLOW,
  appealWorkflowId,
  type AppealDecision,
  type AppealReason,
  type AppealWorkflowInput,
} from '../domain/appeals/contract';
import { paymentSummary, type OrderFacts } from '../domain/orders';
import { findOrder, markWorkflowStarted, unstartedOrders } from '../repositories/orders';
import { markPayoutBatchStarted, unstartedPayoutBatches } from '../repositories/payout-batches';
import { PAYGATE_SEARCH_ATTRIBUTES, orderSearchAttributes } from './search-attributes';
import { approveAppealUpdate, rejectAppealUpdate, secondApproveAppealUpdate } from './appeal-messages';
import {
  DEPOSIT_WORKFLOW,
  PAYMENT_WORKFLOW,
  PAYOUT_BATCH_WORKFLOW,
  TRADE_WORKFLOW,
  depositWorkflowId,
  paymentWorkflowId,
  payoutBatchWorkflowId,
  tradeWorkflowId,
  railOutcomeSignal,
  resolveOutcomeUpdate,
  screeningDecisionSignal,
  type OperatorResolution,
  type ScreeningDecisionSignal,
  type DepositWorkflowInput,
  type PaymentWorkflowInput,
  type PayoutBatchWorkflowInput,
  type RailOutcomeSignal,
  type TradeWorkflowInput,
} from './shared';

/**
 * Every call the api and the jobs make to Temporal as a client — start, signal, update, query — is in
 * this module, so how Paygate drives its workflows (ids, reuse policies, deadlines, search attributes)
 * is read in one place. The connection itself is `platform/temporal.ts`.
 */

const log = componentLogger('temporal');

/** How long one client call may take before the caller gives up (Temporal down or overloaded). */
const CALL_DEADLINE_MS = 5000;

/**
 * Start an order's workflow: `trade` for a P2P trade, `payment` for the others. Starting it twice is harmless
 * (same workflow id, and even after the first run has closed the same order never gets a second run). The
 * workflow's first status change records `workflow_started_at`, so the api spends no extra round trip on it.
 */
export async function startOrderWorkflow(order: OrderFacts, taskQueue = config().temporal.taskQueue): Promise<void> {
  await (order.method === 'p2p'
    ? startTradeWorkflow(order.id, taskQueue, { order })
    : startPaymentWorkflow(order.id, taskQueue, { order }));
}

/** How long a run waits for a rail's answer before it asks, and for how long in all (config `PAYMENT_*`). */
function railWaits(cfg: Config = config()): { pollAfterMs: number; settleTimeoutMs: number; maxPollIntervalMs: number } {
  const { pollAfterMs, settleTimeoutMs, maxPollIntervalMs } = cfg.payments;
  return { pollAfterMs, settleTimeoutMs, maxPollIntervalMs };
}

/** What a payment started today is told besides its order: the rail's waits, the review SLA, admission with its submission. */
export function paymentRunInput(cfg: Config = config()): Omit<PaymentWorkflowInput, 'orderId'> {
  return { ...railWaits(cfg), reviewSlaMs: cfg.compliance.screening.reviewSlaMs, admitWithSubmission: true, processingWhenSeen: true };
}

/** Start the payment workflow for an order (see `startOrderWorkflow`). */
export async function startPaymentWorkflow(
  orderId: string,
  taskQueue = config().temporal.taskQueue,
  options: { order?: OrderFacts } = {},
): Promise<void> {
  const input: PaymentWorkflowInput = { orderId, ...paymentRunInput() };
  await startOrderRun(PAYMENT_WORKFLOW, paymentWorkflowId(orderId), input, taskQueue, options.order ?? (await findOrder(orderId)));
}

/** Start the trade workflow for a P2P trade's order (see `startOrderWorkflow`). */
export async function startTradeWorkflow(
  orderId: string,
  taskQueue = config().temporal.taskQueue,
  options: { order?: OrderFacts } = {},
): Promise<void> {
  const input: TradeWorkflowInput = { orderId, reviewSlaMs: config().compliance.screening.reviewSlaMs };
  await startOrderRun(TRADE_WORKFLOW, tradeWorkflowId(orderId), input, taskQueue, options.order ?? (await findOrder(orderId)));
}

/**
 * What an order's run starts with besides its input, for the operators' view of it: a one-line summary, a memo, and
 * the order's search attributes when the namespace knows them.
 */
export function orderRunMetadata(
  order: OrderFacts,
  withAttributes: boolean,
): Pick<WorkflowStartOptions, 'staticSummary' | 'memo' | 'typedSearchAttributes'> {
  const facts = { orderId: order.id, userId: order.userId, method: order.method };
  return {
    staticSummary: paymentSummary(order),
    memo: facts,
    ...(withAttributes ? { typedSearchAttributes: orderSearchAttributes({ ...facts, status: order.status }) } : {}),
  };
}

/** One order's run, with the order's search attributes (when the namespace knows them), a memo and a one-line summary. */
async function startOrderRun(
  workflowType: string,
  workflowId: string,
  input: PaymentWorkflowInput | TradeWorkflowInput,
  taskQueue: string,
  order: OrderFacts | null,
): Promise<void> {
  const client = temporalClient();
  const start = (withAttributes: boolean) =>
    client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () =>
      client.workflow.start(workflowType, {
        workflowId,
        taskQueue,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        ...(order ? orderRunMetadata(order, withAttributes) : {}),
      }),
    );
  try {
    await ensureTemporalConnected(client);
    await startWithSearchAttributes(PAYGATE_SEARCH_ATTRIBUTES, start);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * Start a bulk payout's `payout-batch` workflow (docs/payments.md#bulk-payouts), with the per-rail concurrency
 * and page size of config `BATCH_*`. Starting it twice is harmless (same workflow id, never a second run).
 */
export async function startPayoutBatchWorkflow(batchId: string, taskQueue = config().temporal.taskQueue): Promise<void> {
  const cfg = config();
  const input: PayoutBatchWorkflowInput = {
    batchId,
    afterRow: 0,
    concurrency: cfg.batches.concurrency,
    pageSize: cfg.batches.pageSize,
    payment: paymentRunInput(cfg),
  };
  const client = temporalClient();
  try {
    await ensureTemporalConnected(client);
    await client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () =>
      client.workflow.start(PAYOUT_BATCH_WORKFLOW, {
        workflowId: payoutBatchWorkflowId(batchId),
        taskQueue,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        memo: { batchId },
      }),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  await markPayoutBatchStarted(batchId);
}

/** Start the workflow of every accepted order whose start failed (Temporal was down, the api crashed). */
export async function reconcileUnstartedOrders(graceMs = config().reconciler.graceMs, batch = 200): Promise<number> {
  // Bulk payouts accepted while Temporal was down: their batch workflow starts their orders.
  for (const { id } of await unstartedPayoutBatches(graceMs, batch)) {
    try {
      await startPayoutBatchWorkflow(id);
    } catch (err) {
      log.warn({ batchId: id, err: (err as Error).message }, 'reconciler could not start the payout batch yet');
      break;
    }
  }
  const orders = await unstartedOrders(graceMs, batch);
  let started = 0;
  for (const order of orders) {
    try {
      await startOrderWorkflow(order);
      // Also covers a workflow that was started but has not run yet: it is marked now, not restarted.
      await markWorkflowStarted(order.id);
      started += 1;
    } catch (err) {
      log.warn({ orderId: order.id, err: (err as Error).message }, 'reconciler could not start the workflow yet');
      break;
    }
  }
  if (started > 0) log.info({ started }, 'reconciler started workflows');
  return started;
}

/**
 * The one way an order's workflow is handed the rail's outcome. Returns false when the workflow
 * is gone (closed, or never existed), so the caller records the outcome as late; other errors are thrown.
 */
export async function signalRailOutcome(workflowId: string, outcome: RailOutcomeSignal): Promise<boolean> {
  try {
    await temporalClient().workflow.getHandle(workflowId).signal(railOutcomeSignal, outcome);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * Hand a payment operators' approved resolution of its unknown outcome, through its workflow's Update: the
 * answer says whether the workflow took it. `refused`: its validator said no (the rail answered first);
 * `closed`: the workflow is gone. Anything else (Temporal unreachable or too slow) is thrown.
 */
export async function resolvePaymentOutcome(workflowId: string, resolution: OperatorResolution): Promise<UpdateAnswer> {
  const client = temporalClient();
  const handle = client.workflow.getHandle(workflowId);
  return updateAnswer(
    client.connection.withDeadline(Date.now() + 2 * CALL_DEADLINE_MS, () =>
      handle.executeUpdate(resolveOutcomeUpdate, { args: [resolution], updateId: `resolve-${resolution.requestId}` }),
    ),
  );
}

/** What a workflow said to an Update: taken, `refused` by its validator (type and message), or `closed`. */
type UpdateAnswer = { refused?: { type: string; message: string }; closed?: boolean };

async function updateAnswer(update: Promise<unknown>): Promise<UpdateAnswer> {
  try {
    await update;
    return {};
  } catch (err) {
    const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type) return { refused: { type: cause.type, message: cause.message } };
    if (err instanceof WorkflowNotFoundError) return { closed: true };
    throw err;
  }
}

/**
 * Hand an order (a payment or a trade) held for screening review its decision (already recorded). False
 * when the workflow is gone: it closed meanwhile (its SLA ran out and it read the decision, or it was never held).
 */
export async function signalScreeningDecision(orderId: string, signal: ScreeningDecisionSignal): Promise<boolean> {
  const order = await findOrder(orderId);
  try {
    await temporalClient()
      .workflow.getHandle(order?.workflowId ?? paymentWorkflowId(orderId))
      .signal(screeningDecisionSignal, signal);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

// --- deposits

/**
 * Start the `deposit` workflow of a pending STK Push deposit (workflow id `deposit-<deposit_id>`, never a
 * second run for the same deposit). Throws `dependency_unavailable` when Temporal does not take it in time.
 */
/** A deposit's run's input, summary and memo. */
export function depositRunStart(
  depositId: string,
  cfg: Config = config(),
): { args: [DepositWorkflowInput] } & Pick<WorkflowStartOptions, 'staticSummary' | 'memo'> {
  return { args: [{ depositId, ...railWaits(cfg) }], staticSummary: 'M-Pesa STK Push deposit', memo: { depositId } };
}

export async function startDepositWorkflow(depositId: string): Promise<void> {
  const cfg = config();
  const client = temporalClient();
  try {
    await ensureTemporalConnected(client);
    await client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () =>
      client.workflow.start(DEPOSIT_WORKFLOW, {
        workflowId: depositWorkflowId(depositId),
        taskQueue: cfg.temporal.taskQueue,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        ...depositRunStart(depositId, cfg),
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
}

/** Deliver the rail's outcome to a deposit's workflow; false when it has no running workflow. */
export const signalDepositOutcome = (depositId: string, outcome: RailOutcomeSignal): Promise<boolean> =>
  signalRailOutcome(depositWorkflowId(depositId), outcome);

// --- the compliance report

/**
 * Start (or find) the period's run. Without `refresh`, a running run is joined and a completed one reused
 * (its result is read); only a failed one is replaced. With `refresh`, a new run starts under the same
 * workflow id unless one is running, which is joined: it is computing fresh figures already.
 */
async function reportRun(input: ComplianceReportInput, refresh: boolean): Promise<WorkflowHandle> {
  const client = temporalClient();
  const workflowId = complianceReportWorkflowId(input.from, input.to);
  try {
    await ensureTemporalConnected(client);
    return await client.workflow.start(COMPLIANCE_REPORT_WORKFLOW, {
      workflowId,
      taskQueue: config().temporal.taskQueue,
      args: [input],
      workflowIdReusePolicy: refresh ? 'ALLOW_DUPLICATE' : 'ALLOW_DUPLICATE_FAILED_ONLY',
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: `compliance report ${input.from} → ${input.to}${refresh ? ' (refresh)' : ''}`,
      memo: { from: input.from, to: input.to, ctrThresholdUsd: input.ctrThresholdUsd },
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return client.workflow.getHandle(workflowId);
    log.warn({ err }, 'could not start the compliance report');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; retry shortly', { headers: { 'Retry-After': '5' } });
  }
}

async function awaitResult(handle: WorkflowHandle, timeoutMs: number): Promise<ComplianceReportResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new AppError('dependency_unavailable', 'the report is still being computed; ask again to receive it', {
            headers: { 'Retry-After': '10' },
          }),
        ),
      timeoutMs,
    );
  });
  try {
    return (await Promise.race([handle.result(), timeout])) as ComplianceReportResult;
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (err instanceof WorkflowFailedError) {
      log.error({ err, workflowId: handle.workflowId }, 'compliance report workflow failed');
      throw new AppError('internal', 'the report could not be computed; ask again to retry it');
    }
    log.warn({ err, workflowId: handle.workflowId }, 'could not read the compliance report result');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; retry shortly', { headers: { 'Retry-After': '5' } });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The period's compliance report: its run started (or joined, or reused: see `reportRun`) and its result
 * awaited for at most `timeoutMs` (then 503, to ask again).
 */
export async function complianceReportResult(
  input: ComplianceReportInput,
  refresh: boolean,
  timeoutMs: number,
): Promise<ComplianceReportResult> {
  return awaitResult(await reportRun(input, refresh), timeoutMs);
}

// --- appeals

/**
 * Start workflow `appeal-<appeal_id>`, found with its order in the Web UI: PaygateOrderId, and PaygateStatus
 * open → approved | rejected | expired.
 */
export async function startAppealWorkflow(input: AppealWorkflowInput, meta: { reason: AppealReason; method: string }): Promise<void> {
  const client = temporalClient();
  await startWithSearchAttributes(PAYGATE_SEARCH_ATTRIBUTES, (withAttributes) =>
    client.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, () =>
      client.workflow.start(APPEAL_WORKFLOW, {
        workflowId: appealWorkflowId(input.appealId),
        taskQueue: config().temporal.taskQueue,
        args: [input],
        staticSummary: `appeal of order ${input.orderId}: ${meta.reason}`,
        memo: { appealId: input.appealId, orderId: input.orderId, appellantId: input.appellantId, reason: meta.reason },
        ...(withAttributes
          ? {
              typedSearchAttributes: orderSearchAttributes({
                orderId: input.orderId,
                userId: input.appellantId,
                method: meta.method,
                status: 'open',
              }),
            }
          : {}),
      }),
    ),
  );
}

const APPEAL_UPDATES = { approve: approveAppealUpdate, 'approve-second': secondApproveAppealUpdate, reject: rejectAppealUpdate };

/**
 * Approve or reject an appeal through its workflow's Update (`approve-second`: the second approval of a refund
 * at or above `FOUR_EYES_ABOVE_KES`); the answer comes once the resolution has run. `refused`: the workflow's
 * validator said no (its failure type and message); `closed`: the workflow has closed (the appeal was decided
 * or expired). Anything else (Temporal unreachable) is thrown.
 */
export async function decideAppealWorkflow(
  workflowId: string,
  decision: keyof typeof APPEAL_UPDATES,
  args: AppealDecision,
): Promise<UpdateAnswer> {
  const handle = temporalClient().workflow.getHandle(workflowId);
  return updateAnswer(handle.executeUpdate(APPEAL_UPDATES[decision], { args: [args] }));
}
