import { AppError } from '../platform/errors';
import type { Caller } from '../domain/caller';
import { approveRequest, APPROVAL_KINDS, type ApprovalKind, type ApprovalRequestView, type ApprovedAction } from './approvals';
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
};

const isKind = (kind: string): kind is ApprovalKind => (APPROVAL_KINDS as readonly string[]).includes(kind);

/** Approve a pending request, running its action in the same transaction. */
export function approve(caller: Caller, requestId: string, note?: string): Promise<ApprovalRequestView> {
  return approveRequest(caller, requestId, note, (request, approver, tx) => {
    if (!isKind(request.kind)) throw new AppError('conflict', `no action is known for requests of kind ${request.kind}`);
    return ACTIONS[request.kind](request, approver, tx);
  });
}
