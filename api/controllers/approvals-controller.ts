import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Example, Get, OperationId, Path, Post, Query, Request, Response, Route, Security, Tags } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { Uuid } from '../schema-types';
import type { Page } from '../../services/paging';
import { getApproval, listApprovals, type ApprovalRequestView } from '../../services/approvals';
import { approve, reject } from '../../services/approval-actions';

interface ApprovalDecisionBody {
  /**
   * Why: what was checked before deciding.
   * @maxLength 1000
   */
  note?: string;
}

/**
 * Four-eyes requests (docs/access.md#four-eyes): a money-moving staff action above `FOUR_EYES_ABOVE_KES` waits
 * here until a second, different staff member approves it (its action then runs) or rejects it (nothing
 * moves). Compliance and admin only; the staff member who asked never decides.
 */
@Route('compliance/approvals')
@Tags('Compliance')
@Security('jwt', ['compliance', 'admin'])
export class ApprovalsController extends Controller {
  /**
   * Four-eyes requests, newest first; `status=pending` lists those waiting for a second staff member.
   * @param status pending, approved or rejected
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @maxLength cursor 200
   * @summary List four-eyes requests
   */
  @Get()
  @Response<Problem>(400, 'Bad status, limit or cursor')
  @Response<Problem>(403, 'Not compliance or admin')
  @Example<Page<ApprovalRequestView>>({
    data: [
      {
        request_id: '01a205f0-4c3d-7e2f-8a1b-2c3d4e5f6a7b',
        kind: 'assign_unmatched_deposit',
        subject_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
        currency: 'KES',
        amount: '250000.00',
        kes_equivalent: '250000.00',
        payload: { user_id: '01a205e0-11aa-7bbb-8ccc-0123456789ab' },
        status: 'pending',
        requested_by: '01a205d9-0a0b-7c0d-8e0f-101112131415',
        requested_at: '2026-11-26T09:00:00.000Z',
        decided_by: null,
        decided_at: null,
        decision_note: null,
        result: null,
      },
    ],
    next_cursor: null,
  })
  @OperationId('listApprovalRequests')
  public async list(
    @Query() status?: 'pending' | 'approved' | 'rejected',
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<ApprovalRequestView>> {
    return listApprovals({ status, limit, cursor });
  }

  /**
   * One four-eyes request.
   * @summary Get a four-eyes request
   */
  @Get('{request_id}')
  @Response<Problem>(400, 'Malformed request id')
  @Response<Problem>(403, 'Not compliance or admin')
  @Response<Problem>(404, 'No such request')
  @OperationId('getApprovalRequest')
  public async get(@Path('request_id') requestId: Uuid): Promise<ApprovalRequestView> {
    return getApproval(requestId);
  }

  /**
   * Approve a pending request as the second staff member: its action runs now (for
   * `assign_unmatched_deposit`, the assignment, within the wallet's cap; for `resolve_unresolved_payout`, the
   * resolution handed to the payment, which settles or fails it; for `approve_payout_batch`, the bulk payout
   * starts) and the request is `approved` with what it did. The staff member who asked, or the payer of the
   * payout or owner of the batch, gets 403; an action that cannot run (the cap: 422 `kyc_required` or
   * `limit_exceeded`; the deposit no longer unmatched, the rail answered the payout first, or the batch's owner
   * cancelled it: 409) leaves the request pending, to be rejected.
   * @summary Approve a four-eyes request
   */
  @Post('{request_id}/approve')
  @Response<Problem>(400, 'Malformed request id or note')
  @Response<Problem>(403, 'Not compliance or admin, or the staff member who asked')
  @Response<Problem>(404, 'No such request')
  @Response<Problem>(409, 'Already decided, or the action no longer applies')
  @Response<Problem>(422, 'kyc_required or limit_exceeded: the action would take a wallet past its cap')
  @Example<ApprovalRequestView>({
    request_id: '01a205f0-4c3d-7e2f-8a1b-2c3d4e5f6a7b',
    kind: 'assign_unmatched_deposit',
    subject_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
    currency: 'KES',
    amount: '250000.00',
    kes_equivalent: '250000.00',
    payload: { user_id: '01a205e0-11aa-7bbb-8ccc-0123456789ab' },
    status: 'approved',
    requested_by: '01a205d9-0a0b-7c0d-8e0f-101112131415',
    requested_at: '2026-11-26T09:00:00.000Z',
    decided_by: '01a205da-1b2c-7d3e-8f40-515253545556',
    decided_at: '2026-11-26T09:05:00.000Z',
    decision_note: 'payer confirmed by phone',
    result: { deposit: { deposit_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f', status: 'completed' } },
  })
  @OperationId('approveApprovalRequest')
  public async approve(
    @Path('request_id') requestId: Uuid,
    @Body() body: ApprovalDecisionBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<ApprovalRequestView> {
    return approve(req.user, requestId, body.note);
  }

  /**
   * Reject a pending request as the second staff member: nothing moves (for `approve_payout_batch`, the bulk
   * payout is cancelled and its whole hold goes back to the wallet), and the subject may be asked about again.
   * The staff member who asked, or the owner of the batch, gets 403.
   * @summary Reject a four-eyes request
   */
  @Post('{request_id}/reject')
  @Response<Problem>(400, 'Malformed request id or note')
  @Response<Problem>(403, 'Not compliance or admin, the staff member who asked, or the batch’s owner')
  @Response<Problem>(404, 'No such request')
  @Response<Problem>(409, 'Already decided')
  @OperationId('rejectApprovalRequest')
  public async reject(
    @Path('request_id') requestId: Uuid,
    @Body() body: ApprovalDecisionBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<ApprovalRequestView> {
    return reject(req.user, requestId, body.note);
  }
}
