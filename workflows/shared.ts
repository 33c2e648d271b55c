import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/** Types and message definitions shared by the order workflows (payment, trade), their activities and their clients. */

export const PAYMENT_WORKFLOW = 'payment';
export const paymentWorkflowId = (orderId: string): string => `payment-${orderId}`;

/** A P2P trade (an order with method `p2p`) runs its own workflow: no hold, no rail, both legs between wallets. */
export const TRADE_WORKFLOW = 'trade';
export const tradeWorkflowId = (orderId: string): string => `trade-${orderId}`;

/** The workflow id an order of this method runs under. */
export const orderWorkflowId = (method: string, orderId: string): string =>
  method === 'p2p' ? tradeWorkflowId(orderId) : paymentWorkflowId(orderId);

export interface PaymentWorkflowInput {
  orderId: string;
  /** How long to wait for the rail's callback before polling its status. */
  pollAfterMs: number;
  /**
   * After this long without a definite answer from the rail the order is flagged overdue and stays
   * `processing`, its hold kept, while the workflow keeps asking the rail.
   */
  settleTimeoutMs: number;
  /** The cap of the growing interval between status polls; 60 s when absent. */
  maxPollIntervalMs?: number;
  /** How long a payment held for screening review waits for staff; the worker's setting when absent. */
  reviewSlaMs?: number;
  /** Continue as new once the run's history holds this many events (or when Temporal suggests it). */
  historyLimit?: number;
  /** Set by continue-as-new: the new run goes straight back to awaiting the rail's outcome. */
  resume?: AwaitingOutcome;
  /**
   * Set by every start of today but an appeal's resubmission: the run admits the order in the rail activity that
   * submits it without asking the `admit-with-submission` patch as it runs, so its first workflow task records no
   * patch marker and upserts no `TemporalChangeVersion` (replaying, it asks: see docs/payments.md#admission). A run
   * started without it (before it, or on appeal) asks the patch.
   */
  admitWithSubmission?: true;
  /**
   * Set by every start of today but an appeal's resubmission: when the rail's answer is in by the time the order
   * is held and sent, the run settles it in the same workflow task without upserting `PaygateStatus =
   * 'processing'` first, a status no one could see before the outcome replaced it; it is upserted only when the
   * run then waits, when the settlement's first attempt fails, or before a refusal gives the hold back
   * (docs/payments.md#admission). A run started without it upserts `processing` as soon as the order is held.
   */
  processingWhenSeen?: true;
}

export interface TradeWorkflowInput {
  orderId: string;
  /** How long a trade held for screening review waits for staff; the worker's setting when absent. */
  reviewSlaMs?: number;
}

/** Where a run that continued as new left its wait for the rail's outcome. */
export interface AwaitingOutcome {
  stage: 'awaiting_outcome';
  /** Workflow time (epoch ms) of the settle deadline. */
  deadline: number;
  /** The next wait before polling the rail. */
  waitMs: number;
  /** The deadline passed: the order is already flagged overdue. */
  overdue: boolean;
}

export type RailOutcomeSignal =
  | { state: 'succeeded'; reference: string; providerCode?: string }
  | { state: 'failed'; reference: string; failureCode: string; reason: string; providerCode?: string };

export interface PaymentResult {
  orderId: string;
  status: 'completed' | 'failed' | 'rejected';
  failureCode?: string;
}

export type PaymentStage =
  'screening' | 'awaiting_review' | 'checking_limits' | 'holding' | 'submitting' | 'awaiting_outcome' | 'posting' | 'done';

/** Staff decided the screening review a payment is held for (sent once the decision is recorded). */
export interface ScreeningDecisionSignal {
  decision: 'confirmed' | 'cleared';
}

/** Delivered by the screening review endpoint. */
export const screeningDecisionSignal = defineSignal<[ScreeningDecisionSignal]>('screeningDecision');

/** Delivered by the rail's callback endpoint. */
export const railOutcomeSignal = defineSignal<[RailOutcomeSignal]>('railOutcome');
/**
 * Operators' answer for a payout whose rail never gave one (docs/payments.md#unknown-outcomes): approved by a
 * second staff member, with the rail's evidence. The workflow takes it as the rail's definite answer unless
 * the rail answered first.
 */
export interface OperatorResolution {
  /** The four-eyes request that carried it: delivering the same one again is taken as already delivered. */
  requestId: string;
  outcome: 'sent' | 'not_sent';
  /** The rail's reference or statement line the operators read. */
  evidence: string;
  requestedBy: string;
  approvedBy: string;
}

export const NOT_SENT_FAILURE_CODE = 'resolved_not_sent';

/** Delivered by the approval of an operators' resolution; refused (`conflict`) once the rail has answered. */
export const resolveOutcomeUpdate = defineUpdate<{ taken: true }, [OperatorResolution]>('resolveOutcome');

/** Where the workflow is, for operators and tests. */
export const paymentStageQuery = defineQuery<PaymentStage>('stage');

// --- the deposit workflow (docs/wallets.md#m-pesa-stk-push): an STK Push collection, signalled like a payment by the rail's callback

export const DEPOSIT_WORKFLOW = 'deposit';
export const depositWorkflowId = (depositId: string): string => `deposit-${depositId}`;

export interface DepositWorkflowInput {
  depositId: string;
  /** How long to wait for the callback before asking the rail. */
  pollAfterMs: number;
  /** How long a prompt may stay unanswered before the deposit fails. */
  settleTimeoutMs: number;
  /** The cap of the growing interval between polls; 60 s when absent. */
  maxPollIntervalMs?: number;
}

export interface DepositResult {
  depositId: string;
  status: 'completed' | 'failed';
  failureCode?: string;
}

// --- the payout-batch workflow (docs/payments.md#bulk-payouts): a bulk payout's items, each paid by its own `payment` child

export const PAYOUT_BATCH_WORKFLOW = 'payout-batch';
export const payoutBatchWorkflowId = (batchId: string): string => `payout-batch-${batchId}`;

export type PayoutMethod = 'bank_transfer' | 'mobile_money' | 'crypto';

export interface PayoutBatchWorkflowInput {
  batchId: string;
  /** Items up to this row were started or done: a run that continued as new reads the items after it. */
  afterRow: number;
  /** How many items are in flight at once on each rail. */
  concurrency: Record<PayoutMethod, number>;
  /** Items fetched at a time, and items one run starts before it continues as new. */
  pageSize: number;
  /** What each item's `payment` child is started with, less its order id. */
  payment: Omit<PaymentWorkflowInput, 'orderId' | 'resume'>;
  /** Items whose payment an earlier run started and that had no outcome when it continued as new. */
  inFlight?: PayoutBatchInFlightItem[];
}

/** An item of a batch in flight: its order exists and its payment was started. */
export interface PayoutBatchInFlightItem {
  row: number;
  method: PayoutMethod;
  orderId: string;
}

export interface PayoutBatchResult {
  batchId: string;
  status: 'completed' | 'cancelled';
}
