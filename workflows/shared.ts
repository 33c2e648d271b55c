import { defineQuery, defineSignal } from '@temporalio/workflow';

/** Types and message definitions shared by the payment workflow, its activities and its clients. */

export const PAYMENT_WORKFLOW = 'payment';
export const paymentWorkflowId = (orderId: string): string => `payment-${orderId}`;

export interface PaymentWorkflowInput {
  orderId: string;
  /** How long to wait for the rail's callback before polling its status. */
  pollAfterMs: number;
  /** After this long without an outcome the payment fails with `rail_timeout`. */
  settleTimeoutMs: number;
  /** A P2P trade: escrow first, the fiat leg over the rail, then the escrow released (SPEC §7). */
  p2p?: boolean;
}

export type RailOutcomeSignal =
  | { state: 'succeeded'; reference: string; providerCode?: string }
  | { state: 'failed'; reference: string; failureCode: string; reason: string; providerCode?: string };

export interface PaymentResult {
  orderId: string;
  status: 'completed' | 'failed' | 'rejected';
  failureCode?: string;
}

export type PaymentStage = 'screening' | 'checking_limits' | 'holding' | 'submitting' | 'awaiting_outcome' | 'posting' | 'done';

/** Delivered by the rail's callback endpoint. */
export const railOutcomeSignal = defineSignal<[RailOutcomeSignal]>('railOutcome');
/** Where the workflow is, for operators and tests. */
export const paymentStageQuery = defineQuery<PaymentStage>('stage');
