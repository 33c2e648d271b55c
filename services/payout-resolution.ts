import { config } from '../platform/config';
import { AppError, notFound, validationError } from '../platform/errors';
import { isUuid } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { isStaff, type Caller } from '../domain/caller';
import { isTerminal } from '../domain/orders';
import type { Currency } from '../domain/money';
import { findOrder, type OrderRecord } from '../repositories/orders';
import type { ApprovalRecord } from '../repositories/approvals';
import { resolvePaymentOutcome } from '../workflows/client';
import { CONFLICT } from '../workflows/failure-types';
import { requestApproval, type ApprovalKind, type ApprovalRequestView } from './approvals';

/**
 * Resolving an unresolved payout by hand (README "Unresolved payouts"; docs/payments.md#unknown-outcomes): a
 * staff member reads the rail's evidence and asks for `sent` or `not_sent`; whatever the amount, the answer
 * reaches the payment's workflow only when a second, different staff member approves it, and never when
 * either of them is the payer. The workflow takes it as the rail's definite answer unless the rail answered
 * first.
 */

const log = componentLogger('payout-resolution');

export const RESOLUTION_KIND: ApprovalKind = 'resolve_unresolved_payout';

export type ResolutionOutcome = 'sent' | 'not_sent';

export interface ResolutionAsk {
  outcome: ResolutionOutcome;
  evidence: string;
  note?: string;
}

/** What an approved resolution did, kept as the request's `result`. */
export interface ResolutionResult {
  order_id: string;
  outcome: ResolutionOutcome;
  evidence: string;
  requested_by: string;
  approved_by: string;
  /** The payment's workflow took the answer: it settles or fails the order now. */
  delivered: true;
}

const OUTCOMES: readonly string[] = ['sent', 'not_sent'];
const isOutcome = (value: unknown): value is ResolutionOutcome => typeof value === 'string' && OUTCOMES.includes(value);

function cleanAsk(ask: ResolutionAsk): ResolutionAsk {
  if (!isOutcome(ask.outcome)) throw validationError('outcome', 'must be sent or not_sent');
  const evidence = typeof ask.evidence === 'string' ? ask.evidence.trim() : '';
  if (evidence === '') throw validationError('evidence', "is required: the rail's reference or statement line");
  if (evidence.length > 2000) throw validationError('evidence', 'must be at most 2000 characters');
  const note = ask.note?.trim() ?? '';
  if (note.length > 1000) throw validationError('note', 'must be at most 1000 characters');
  return { outcome: ask.outcome, evidence, ...(note === '' ? {} : { note }) };
}

const notAboutOneself = (caller: Caller, order: OrderRecord): void => {
  if (caller.id === order.userId) {
    throw new AppError('forbidden', 'no staff member resolves a payout of their own');
  }
};

/** Listed as unresolved: still `processing`, its first request gone longer than PAYMENT_UNRESOLVED_AFTER_MS ago. */
const isUnresolved = (order: OrderRecord): boolean =>
  order.status === 'processing' &&
  order.railSentAt !== null &&
  new Date(order.railSentAt).getTime() < Date.now() - config().unresolvedPayouts.afterMs;

/** A staff member asks to resolve an unresolved payout: a pending four-eyes request, nothing delivered yet. */
export async function requestResolution(caller: Caller, orderId: string, ask: ResolutionAsk): Promise<ApprovalRequestView> {
  if (!isUuid(orderId)) throw validationError('order_id', 'must be a UUID');
  if (!isStaff(caller)) throw new AppError('forbidden', 'only compliance or admin staff resolve payouts');
  const clean = cleanAsk(ask);
  const order = await findOrder(orderId);
  if (!order) throw notFound(`order ${orderId}`);
  notAboutOneself(caller, order);
  if (!isUnresolved(order)) {
    throw new AppError('conflict', `order ${orderId} is not an unresolved payout (it is ${order.status}); only listed ones are resolved`);
  }
  const request = await requestApproval(caller, {
    kind: RESOLUTION_KIND,
    subjectId: orderId,
    currency: order.currency as Currency,
    amountMinor: BigInt(order.amountMinor),
    payload: { ...clean },
  });
  log.info({ orderId, requestId: request.request_id, outcome: clean.outcome, requestedBy: caller.id }, 'payout resolution requested');
  return request;
}

/**
 * The approved resolution's action, run in the approval's transaction: the answer goes to the payment's
 * workflow, which takes it once (the update id is the request's). The rail having answered first, or the
 * workflow being gone, refuses the approval (409) and the request stays pending, to be rejected.
 */
export async function performApprovedResolution(request: ApprovalRecord, approver: Caller): Promise<Record<string, unknown>> {
  const { outcome, evidence } = request.payload;
  if (!isOutcome(outcome) || typeof evidence !== 'string') throw new AppError('conflict', 'the request carries no resolution');
  const order = await findOrder(request.subjectId);
  if (!order) throw notFound(`order ${request.subjectId}`);
  notAboutOneself(approver, order);
  if (isTerminal(order.status)) {
    throw new AppError('conflict', `the rail answered first: order ${order.id} is ${order.status}, and its answer stands`);
  }
  let delivered: Awaited<ReturnType<typeof resolvePaymentOutcome>>;
  try {
    delivered = await resolvePaymentOutcome(order.workflowId, {
      requestId: request.id,
      outcome,
      evidence,
      requestedBy: request.requestedBy,
      approvedBy: approver.id,
    });
  } catch (err) {
    log.warn({ orderId: order.id, requestId: request.id, err: (err as Error).message }, 'could not deliver the resolution');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; approve again shortly', {
      headers: { 'Retry-After': '5' },
    });
  }
  if (delivered.closed) throw new AppError('conflict', `the payment's workflow has closed: order ${order.id} is no longer waiting`);
  if (delivered.refused) {
    throw new AppError(delivered.refused.type === CONFLICT ? 'conflict' : 'forbidden', delivered.refused.message);
  }
  log.info(
    { orderId: order.id, requestId: request.id, outcome, requestedBy: request.requestedBy, approvedBy: approver.id },
    'payout resolution delivered to its workflow',
  );
  const result: ResolutionResult = {
    order_id: order.id,
    outcome,
    evidence,
    requested_by: request.requestedBy,
    approved_by: approver.id,
    delivered: true,
  };
  return { ...result };
}
