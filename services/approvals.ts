import { config } from '../platform/config';
import { AppError, notFound, validationError } from '../platform/errors';
import { isUuid, uuidv7 } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { decimalToScaled, formatAmount, toKesMinor, CURRENCY_SCALE, type Currency } from '../domain/money';
import { isStaff, type Caller } from '../domain/caller';
import {
  createApprovalRequest,
  decideApprovalRequest,
  findApprovalRequest,
  listApprovalRequests,
  lockApprovalRequest,
  pendingApprovalFor,
  type ApprovalRecord,
  type ApprovalStatus,
} from '../repositories/approvals';
import { inSavepoint, inTransaction, type Tx } from '../repositories/transaction';
import { recordStaffAction } from './audit';
import { filterOneOf, keysetPage, keysetQuery, type Page } from './paging';

/**
 * Four eyes (README, "Four-eyes requests"; docs/access.md#four-eyes), built once for every money-moving staff
 * action: above `FOUR_EYES_ABOVE_KES` the first staff member's action only records an approval request (a
 * kind, the subject it acts on, the amount, and the payload the action needs), and money moves when a second,
 * different staff member approves it. The action itself runs in the approval's transaction, so a request is
 * approved exactly when its action took effect.
 */

const log = componentLogger('four-eyes');

/** What a request can ask for: one kind per money-moving staff action that waits for a second approver. */
export const APPROVAL_KINDS = [
  'assign_unmatched_deposit',
  'resolve_reconciliation_break',
  'resolve_unresolved_payout',
  'approve_payout_batch',
] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected'] as const;

export interface ApprovalRequestView {
  request_id: string;
  /** What the action is, e.g. `assign_unmatched_deposit`. */
  kind: string;
  /** What it acts on (for `assign_unmatched_deposit`, the deposit id). */
  subject_id: string;
  currency: string;
  amount: string;
  /** The amount's KES equivalent at the reference rate: what is set against `FOUR_EYES_ABOVE_KES`. */
  kes_equivalent: string;
  // What the action needs to run (for `assign_unmatched_deposit`, `{ user_id }`). A line comment: a described
  // free-form map is published inline, and the OWASP rules ask a bound of it that a $ref does not need.
  payload: Record<string, unknown>;
  status: ApprovalStatus;
  requested_by: string;
  requested_at: string;
  decided_by: string | null;
  decided_at: string | null;
  decision_note: string | null;
  /** What the approved action did (for `assign_unmatched_deposit`, the deposit as assigned). */
  result: Record<string, unknown> | null;
}

export const approvalView = (r: ApprovalRecord): ApprovalRequestView => ({
  request_id: r.id,
  kind: r.kind,
  subject_id: r.subjectId,
  currency: r.currency,
  amount: formatAmount(r.amountMinor, r.currency as Currency),
  kes_equivalent: formatAmount(r.kesEquivalentMinor, 'KES'),
  payload: r.payload,
  status: r.status,
  requested_by: r.requestedBy,
  requested_at: r.requestedAt.toISOString(),
  decided_by: r.decidedBy,
  decided_at: r.decidedAt?.toISOString() ?? null,
  decision_note: r.decisionNote,
  result: r.result,
});

const kesEquivalent = (amountMinor: bigint, currency: Currency): bigint => toKesMinor(amountMinor, currency, config().limits.fxToKes);

/** Whether a staff action moving this much takes a second staff member's approval: above `FOUR_EYES_ABOVE_KES`. */
export function needsFourEyes(amountMinor: bigint, currency: Currency): boolean {
  return kesEquivalent(amountMinor, currency) > decimalToScaled(config().fourEyes.aboveKes, CURRENCY_SCALE.KES);
}

/**
 * Whether a customer's bulk payout of this much (its total and fees) waits for a staff member's approval: at or
 * above `FOUR_EYES_ABOVE_KES`, as the README's bulk payouts say — where a staff action waits only above it.
 */
export function reachesFourEyes(amountMinor: bigint, currency: Currency): boolean {
  return kesEquivalent(amountMinor, currency) >= decimalToScaled(config().fourEyes.aboveKes, CURRENCY_SCALE.KES);
}

export interface ApprovalAsk {
  kind: ApprovalKind;
  subjectId: string;
  currency: Currency;
  amountMinor: bigint;
  payload: Record<string, unknown>;
}

/**
 * Record what `caller` asks to do, for a second staff member to approve; nothing moves yet. A subject has at
 * most one pending request of a kind: asking again while one waits is a 409 naming it.
 */
export async function requestApproval(caller: Caller, ask: ApprovalAsk, tx?: Tx): Promise<ApprovalRequestView> {
  // The request and its audit entry commit together; a duplicate (a request already waiting) undoes both.
  const write = async (t: Tx): Promise<ApprovalRecord> => {
    const made = await createApprovalRequest(
      {
        id: uuidv7(),
        kind: ask.kind,
        subjectId: ask.subjectId,
        currency: ask.currency,
        amountMinor: ask.amountMinor.toString(),
        kesEquivalentMinor: kesEquivalent(ask.amountMinor, ask.currency).toString(),
        payload: ask.payload,
        requestedBy: caller.id,
      },
      t,
    );
    if (!made) throw ALREADY_PENDING;
    await recordStaffAction(t, { by: caller, ...auditOf(made, 'approval.requested', null) });
    return made;
  };
  const created = await (tx ? inSavepoint(tx, write) : inTransaction(write)).catch((err: unknown) => {
    if (err === ALREADY_PENDING) return undefined;
    throw err;
  });
  if (!created) {
    const waiting = await pendingApprovalFor(ask.kind, ask.subjectId, tx);
    throw new AppError(
      'conflict',
      `${ask.subjectId} already has a pending ${ask.kind} request${waiting ? ` (${waiting.id})` : ''}: approve or reject that one`,
    );
  }
  log.info({ requestId: created.id, kind: ask.kind, subjectId: ask.subjectId, requestedBy: caller.id }, 'four-eyes request recorded');
  return approvalView(created);
}

const ALREADY_PENDING = new Error('a request of this kind already waits on this subject');

/** A request's audit entry (docs/compliance.md#audit-trail): what was asked, and its state before and after. */
const auditOf = (r: ApprovalRecord, action: 'approval.requested' | 'approval.decided', before: ApprovalRecord | null) => ({
  action,
  subjectType: 'approval_request' as const,
  subjectId: r.id,
  before: before ? { status: before.status } : null,
  after: {
    status: r.status,
    kind: r.kind,
    subject_id: r.subjectId,
    currency: r.currency,
    amount_minor: r.amountMinor,
    payload: r.payload,
    requested_by: r.requestedBy,
    ...(r.decidedBy ? { decided_by: r.decidedBy, decision_note: r.decisionNote, result: r.result } : {}),
  },
});

/** Approval requests, newest first (staff); `status` filters, e.g. `pending`. */
export async function listApprovals(q: { status?: string; limit?: number; cursor?: string }): Promise<Page<ApprovalRequestView>> {
  const status = filterOneOf('status', q.status, APPROVAL_STATUSES);
  const { limit, before } = keysetQuery(q);
  return keysetPage(await listApprovalRequests(status ?? null, before, limit + 1), limit, approvalView);
}

export async function getApproval(requestId: string): Promise<ApprovalRequestView> {
  if (!isUuid(requestId)) throw validationError('request_id', 'must be a UUID');
  const found = await findApprovalRequest(requestId);
  if (!found) throw notFound(`approval request ${requestId}`);
  return approvalView(found);
}

/**
 * An approved request's action, run in the approval's transaction: what it did, for the request's `result`.
 * Throwing refuses the approval (the request stays pending, nothing moved).
 */
export type ApprovedAction = (request: ApprovalRecord, approver: Caller, tx: Tx) => Promise<Record<string, unknown>>;

/**
 * What a rejection undoes, run in the rejection's transaction (for a bulk payout, the batch is cancelled and its
 * hold returned): what it did, for the request's `result`, or null. Throwing refuses the rejection.
 */
export type RejectedAction = (request: ApprovalRecord, decider: Caller, tx: Tx) => Promise<Record<string, unknown> | null>;

/** Lock a request for a decision by `caller`: staff, never the requester, and only while it is pending. */
async function lockForDecision(caller: Caller, requestId: string, tx: Tx): Promise<ApprovalRecord> {
  if (!isUuid(requestId)) throw validationError('request_id', 'must be a UUID');
  if (!isStaff(caller)) throw new AppError('forbidden', 'only compliance or admin staff decide four-eyes requests');
  const request = await lockApprovalRequest(requestId, tx);
  if (!request) throw notFound(`approval request ${requestId}`);
  if (request.requestedBy === caller.id) {
    throw new AppError('forbidden', 'a four-eyes request is decided by a second staff member, never by the one who asked');
  }
  if (request.status !== 'pending') throw new AppError('conflict', `the request is already ${request.status}`);
  return request;
}

const cleanNote = (note: string | undefined): string | null => {
  const trimmed = note?.trim() ?? '';
  if (trimmed.length > 1000) throw validationError('note', 'must be at most 1000 characters');
  return trimmed === '' ? null : trimmed;
};

/** Approve a pending request: its action runs (`perform`), and the request is approved with what it did, together. */
export async function approveRequest(
  caller: Caller,
  requestId: string,
  note: string | undefined,
  perform: ApprovedAction,
): Promise<ApprovalRequestView> {
  const decisionNote = cleanNote(note);
  const approved = await inTransaction(async (tx) => {
    const request = await lockForDecision(caller, requestId, tx);
    const result = await perform(request, caller, tx);
    const decided = await decideApprovalRequest(request.id, { status: 'approved', decidedBy: caller.id, note: decisionNote, result }, tx);
    if (!decided) throw new AppError('conflict', 'the request was decided meanwhile');
    await recordStaffAction(tx, { by: caller, ...auditOf(decided, 'approval.decided', request) });
    return decided;
  });
  log.info({ requestId, kind: approved.kind, approvedBy: caller.id }, 'four-eyes request approved: its action ran');
  return approvalView(approved);
}

/**
 * Reject a pending request: nothing moves (or, with `undo`, what the request held back is undone in the same
 * transaction), and the subject may be asked about again.
 */
export async function rejectRequest(
  caller: Caller,
  requestId: string,
  note: string | undefined,
  undo?: RejectedAction,
): Promise<ApprovalRequestView> {
  const decisionNote = cleanNote(note);
  const rejected = await inTransaction(async (tx) => {
    const request = await lockForDecision(caller, requestId, tx);
    const result = undo ? await undo(request, caller, tx) : null;
    const decided = await decideApprovalRequest(request.id, { status: 'rejected', decidedBy: caller.id, note: decisionNote, result }, tx);
    if (!decided) throw new AppError('conflict', 'the request was decided meanwhile');
    await recordStaffAction(tx, { by: caller, ...auditOf(decided, 'approval.decided', request) });
    return decided;
  });
  log.info({ requestId, kind: rejected.kind, rejectedBy: caller.id }, 'four-eyes request rejected');
  return approvalView(rejected);
}
