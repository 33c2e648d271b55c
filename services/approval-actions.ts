import { AppError } from '../platform/errors';
import type { Caller } from '../domain/caller';
import {
  approveRequest,
  rejectRequest,
  APPROVAL_KINDS,
  type ApprovalKind,
  type ApprovalRequestView,
  type ApprovedAction,
  type RejectedAction,
} from './approvals';
import { performApprovedBatch, performRejectedBatch, startApprovedBatch } from './payout-batch-service';
import { performApprovedBreakResolution } from './rail-reconciliation-service';
import { performApprovedAssignment } from './wallet-service';
import { performApprovedResolution } from './payout-resolution';

/**
 * What each kind of four-eyes request does once a second staff member approves it (docs/access.md#four-eyes).
 * A new money-moving staff action adds its kind to `APPROVAL_KINDS` and its action here.
 */
const ACTIONS: Record<ApprovalKind, ApprovedAction> = {
  assign_unmatched_deposit: performApprovedAssignment,
  resolve_reconciliation_break: performApprovedBreakResolution,
  resolve_unresolved_payout: performApprovedResolution,
  approve_payout_batch: performApprovedBatch,
};

/** What a kind does once its approval has committed (work outside the database, such as starting a workflow). */
const AFTER_APPROVAL: Partial<Record<ApprovalKind, (request: ApprovalRequestView) => Promise<void>>> = {
  approve_payout_batch: startApprovedBatch,
};

/** What a kind undoes when its request is rejected, in the rejection's transaction; the others move nothing. */
const UNDO_ON_REJECT: Partial<Record<ApprovalKind, RejectedAction>> = {
  approve_payout_batch: performRejectedBatch,
};

const isKind = (kind: string): kind is ApprovalKind => (APPROVAL_KINDS as readonly string[]).includes(kind);

/** Approve a pending request, running its action in the same transaction, and what follows it once committed. */
export async function approve(caller: Caller, requestId: string, note?: string): Promise<ApprovalRequestView> {
  const approved = await approveRequest(caller, requestId, note, (request, approver, tx) => {
    if (!isKind(request.kind)) throw new AppError('conflict', `no action is known for requests of kind ${request.kind}`);
    return ACTIONS[request.kind](request, approver, tx);
  });
  if (isKind(approved.kind)) await AFTER_APPROVAL[approved.kind]?.(approved);
  return approved;
}

/** Reject a pending request, undoing in the same transaction what its kind held back (a bulk payout's hold). */
export function reject(caller: Caller, requestId: string, note?: string): Promise<ApprovalRequestView> {
  return rejectRequest(caller, requestId, note, (request, decider, tx) => {
    const undo = isKind(request.kind) ? UNDO_ON_REJECT[request.kind] : undefined;
    return undo ? undo(request, decider, tx) : Promise.resolve(null);
  });
}
