import type { Request as ExpressRequest } from 'express';
import {
  Body,
  Controller,
  Example,
  Get,
  OperationId,
  Path,
  Post,
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { Uuid } from '../schema-types';
import type { Page } from '../../services/paging';
import type { ApprovalRequestView } from '../../services/approvals';
import { listUnresolvedPayouts, type UnresolvedPayoutView } from '../../services/operations-service';
import { requestResolution } from '../../services/payout-resolution';

interface ResolveUnresolvedPayoutBody {
  /** What the rail's evidence shows: `sent` (the rail paid: the order settles) or `not_sent` (it never did: the hold is released and the order fails). */
  outcome: 'sent' | 'not_sent';
  /**
   * The rail's evidence: its reference for the transfer, or the statement line, receipt or support ticket
   * that shows what happened.
   * @minLength 1
   * @maxLength 2000
   */
  evidence: string;
  /**
   * What else the approver should know.
   * @maxLength 1000
   */
  note?: string;
}

@Route('operations')
@Tags('Operations')
@Security('jwt', ['compliance', 'admin'])
export class OperationsController extends Controller {
  /**
   * Payments whose rail has given no definite answer for longer than `PAYMENT_UNRESOLVED_AFTER_MS` (24 h by
   * default), oldest first. Each is still `processing` with its hold kept, and Paygate still asks its rail;
   * nothing resolves it by itself. `submission: unknown` means the answer to the transfer was lost, so the
   * rail may or may not have paid: check with the rail, using `reference`, before anything else.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @maxLength cursor 200
   * @summary List unresolved payouts
   */
  @Get('unresolved-payouts')
  @Example<Page<UnresolvedPayoutView>>({
    data: [
      {
        order_id: '01933b6e-4f1a-7c3e-9a51-0d2f8b7c6a10',
        user_id: '01933b6e-1111-7c3e-9a51-0d2f8b7c6a10',
        method: 'bank_transfer',
        amount: '2500.00',
        currency: 'KES',
        rail: 'jenga',
        reference: '000000004217',
        rail_reference: null,
        submission: 'unknown',
        sent_at: '2026-11-25T09:14:03.201Z',
        overdue_at: '2026-11-25T09:29:03.512Z',
        created_at: '2026-11-25T09:14:02.870Z',
      },
    ],
    next_cursor: null,
  })
  @Response<Problem>(400, 'Bad limit or cursor')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff or an admin')
  @OperationId('listUnresolvedPayouts')
  public async listUnresolved(@Query() limit?: number, @Query() cursor?: string): Promise<Page<UnresolvedPayoutView>> {
    return listUnresolvedPayouts({ limit, cursor });
  }

  /**
   * Ask to resolve an unresolved payout with the rail's evidence: `sent` settles it, `not_sent` releases its
   * hold and fails it with `resolved_not_sent`. Whatever the amount, this only records a four-eyes request
   * (202, kind `resolve_unresolved_payout`): the answer reaches the payment when a second, different staff
   * member approves it (`POST /compliance/approvals/{request_id}/approve`), and a rail answer that arrives
   * first wins (the approval is then 409). Only a listed payout is resolved; nobody resolves a payout of their
   * own.
   * @summary Resolve an unresolved payout (four eyes)
   */
  @Post('unresolved-payouts/{order_id}/resolve')
  @SuccessResponse(202, 'A pending four-eyes request: nothing moves until a second staff member approves it')
  @Example<ApprovalRequestView>({
    request_id: '01933b70-2a4c-7d1e-8f20-3b4c5d6e7f80',
    kind: 'resolve_unresolved_payout',
    subject_id: '01933b6e-4f1a-7c3e-9a51-0d2f8b7c6a10',
    currency: 'KES',
    amount: '2500.00',
    kes_equivalent: '2500.00',
    payload: { outcome: 'sent', evidence: 'Jenga statement 2026-11-25: 000000004217 KES 2,500.00 to 0123456789 completed' },
    status: 'pending',
    requested_by: '01933b6f-0a0b-7c0d-8e0f-101112131415',
    requested_at: '2026-11-26T09:00:00.000Z',
    decided_by: null,
    decided_at: null,
    decision_note: null,
    result: null,
  })
  @Response<Problem>(400, 'Malformed order id, outcome, evidence or note')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff or an admin, or the payout is your own')
  @Response<Problem>(404, 'No such order')
  @Response<Problem>(409, 'Not an unresolved payout, or a resolution of it is already pending')
  @OperationId('resolveUnresolvedPayout')
  public async resolve(
    @Path('order_id') orderId: Uuid,
    @Body() body: ResolveUnresolvedPayoutBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<ApprovalRequestView> {
    const request = await requestResolution(req.user, orderId, body);
    this.setStatus(202);
    return request;
  }
}
