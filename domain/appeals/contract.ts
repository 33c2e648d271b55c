/**
 * The appeal workflow's contract, shared by the workflow, its activities and the api. Its Temporal
 * messages (the Updates and the Query) are the workflows' (`workflows/appeal-messages.ts`).
 */

import type { AuditActor } from '../audit';

export const APPEAL_WORKFLOW = 'appeal';
export const appealWorkflowId = (appealId: string): string => `appeal-${appealId}`;

export const APPEAL_REASONS = ['payment_not_received', 'wrong_amount', 'unauthorized', 'compliance_rejection', 'other'] as const;
export type AppealReason = (typeof APPEAL_REASONS)[number];
export const APPEAL_STATUSES = ['open', 'approved', 'rejected', 'expired'] as const;
export type AppealStatus = (typeof APPEAL_STATUSES)[number];
export const APPEAL_ACTIONS = ['refund', 'release', 'resubmit'] as const;
export type AppealAction = (typeof APPEAL_ACTIONS)[number];

export interface AppealWorkflowInput {
  appealId: string;
  orderId: string;
  /** Who appealed, who owns the order, and (P2P) the other side of the trade: none of them may decide. */
  appellantId: string;
  orderOwnerId: string;
  counterpartyId: string | null;
  /** The appealed order's method (a resubmission keeps it); absent in appeals begun before it was passed. */
  orderMethod?: string;
  /** Undecided after this long, the appeal is `expired`. */
  slaMs: number;
  /** For a resubmitted payment's workflow. */
  pollAfterMs: number;
  settleTimeoutMs: number;
}

export interface AppealDecision {
  deciderId: string;
  deciderRoles: string[];
  note: string;
  action?: AppealAction;
  /** A partial refund: how much of the payment to give back (minor units). The rest of it when absent. */
  amountMinor?: string;
  /** Who decides, as the audit trail records them (docs/compliance.md#audit-trail). */
  actor?: AuditActor;
}

export interface AppealResolution {
  action: AppealAction | null;
  /** What happened, for the appeal's reader. */
  summary: string;
  order_status: string;
  resubmitted_order_id?: string;
  /** A refund: what it gave back, and what the payment's refunds add up to now (minor units). */
  refunded_minor?: string;
  total_refunded_minor?: string;
  /** The payment's fee, given back with the refund that completes its amount (minor units). */
  fee_refunded_minor?: string;
}

/**
 * A refund at or above `FOUR_EYES_ABOVE_KES`, approved once: it waits for a second, different staff member
 * (the `approve-second` Update), who pays exactly this refund.
 */
export interface FirstApproval {
  approverId: string;
  action: AppealAction;
  /** The refund, in minor units of the payment's currency, and its KES equivalent (KES cents). */
  amountMinor: string;
  currency: string;
  kesEquivalentMinor: string;
}

export interface AppealDecided {
  appealId: string;
  status: AppealStatus;
  resolution: AppealResolution | null;
  /** Set when the approval was a first one: the appeal stays open until a second staff member approves. */
  awaitingSecondApproval?: FirstApproval;
}

/** Error types an update is refused with; the api maps them to problem codes. */
export const APPEAL_REFUSALS = ['forbidden', 'conflict'] as const;
