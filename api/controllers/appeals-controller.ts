import type { Request as ExpressRequest } from 'express';
import {
  Body,
  Controller,
  Example,
  Get,
  Path,
  Post,
  Put,
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
  OperationId,
} from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { AppealActionName, Uuid } from '../schema-types';
import { createAppeal, decideAppeal, getAppeal, listAppeals, type AppealView, type EvidenceLink } from '../../services/appeal-service';
import type { Page } from '../../services/paging';

interface CreateAppealBody {
  /** @maxLength 36 */
  order_id: string;
  /**
   * `payment_not_received`, `wrong_amount`, `unauthorized`, `compliance_rejection` or `other`.
   * @example "payment_not_received"
   * @maxLength 1000
   */
  reason: string;
  /**
   * @example "I paid by M-Pesa but the USDT never arrived."
   * @maxLength 2000
   */
  description: string;
  /**
   * Links to the evidence (statements, screenshots), each with an optional SHA-256 of the file.
   * @maxItems 20
   */
  evidence?: EvidenceLink[];
}

interface DecisionBody {
  /**
   * Why; kept with the decision.
   * @minLength 1
   * @maxLength 2000
   */
  note: string;
  /**
   * Approve only. `refund`: a completed payment is reversed (mirror ledger posting, order `reversed`);
   * `release`: a P2P trade's escrowed asset goes to the buyer; `resubmit`: a compliance-rejected payment
   * is submitted again as a new order recording the approver. Default: what fits the order's state.
   */
  action?: AppealActionName;
  /**
   * Approve with `refund` only: a partial refund of this much of the payment, as a decimal string in the
   * payment's currency. The refunds of one payment never add up to more than it paid (409 past that).
   * Default: all that is left to refund.
   * @example "500.00"
   * @maxLength 64
   */
  amount?: string;
}

@Route('appeals')
@Tags('Appeals')
@Security('jwt')
export class AppealsController extends Controller {
  /**
   * Appeal an order: its owner, or the counterparty of a P2P trade (others: 404). One open appeal per
   * order (409). Starts workflow `appeal-<appeal_id>`, which waits for a decision until the SLA
   * (`APPEAL_SLA_MS`, 72 hours by default) runs out; then the appeal is `expired`.
   * @summary Open an appeal
   */
  @Post()
  @SuccessResponse(201, 'Created')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(404, 'No such order of yours')
  @Response<Problem>(409, 'The order already has an open appeal')
  @Response<Problem>(503, 'Temporal unavailable')
  @OperationId('openAppeal')
  public async create(@Body() body: CreateAppealBody, @Request() req: ExpressRequest & { user: Caller }): Promise<AppealView> {
    const appeal = await createAppeal(req.user, body);
    this.setStatus(201);
    this.setHeader('Location', `/api/v1/appeals/${appeal.appeal_id}`);
    return appeal;
  }

  /**
   * Appeals, newest first (compliance and admin). `awaiting_second_approval=true` lists what waits for a second
   * pair of eyes: open appeals whose refund, at or above `FOUR_EYES_ABOVE_KES`, one staff member has approved.
   * @param status open, approved, rejected or expired
   * @param awaiting_second_approval only refunds approved once, waiting for a second staff member
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @maxLength cursor 200
   * @summary List appeals (staff)
   */
  @Get()
  @Security('jwt', ['compliance', 'admin'])
  @Response<Problem>(400, 'Bad status, limit or cursor')
  @Response<Problem>(403, 'Not compliance or admin')
  @Example<Page<AppealView>>({
    data: [
      {
        appeal_id: '01a20610-4c3d-7e2f-8a1b-2c3d4e5f6a7b',
        order_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
        reason: 'unauthorized',
        description: 'I did not make this payment.',
        evidence: [],
        status: 'open',
        created_by: '01a205e0-11aa-7bbb-8ccc-0123456789ab',
        created_at: '2026-11-26T09:00:00.000Z',
        sla_deadline: '2026-11-29T09:00:00.000Z',
        decided_by: null,
        decided_at: null,
        decision_note: null,
        resolution: null,
        awaiting_second_approval: {
          action: 'refund',
          amount: '150000.00',
          currency: 'KES',
          kes_equivalent: '150000.00',
          approved_by: '01a205d9-0a0b-7c0d-8e0f-101112131415',
          approved_at: '2026-11-26T10:00:00.000Z',
          note: 'the M-Pesa statement shows no such payment',
        },
        workflow_id: 'appeal-01a20610-4c3d-7e2f-8a1b-2c3d4e5f6a7b',
      },
    ],
    next_cursor: null,
  })
  @OperationId('listAppeals')
  public async list(
    @Query() status?: 'open' | 'approved' | 'rejected' | 'expired',
    @Query() awaiting_second_approval?: boolean,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<AppealView>> {
    return listAppeals({ status, awaitingSecondApproval: awaiting_second_approval, limit, cursor });
  }

  /**
   * One appeal: the appellant, the order's parties and staff read it; others get 404.
   * @summary Get an appeal
   */
  @Get('{appeal_id}')
  @Response<Problem>(400, 'Malformed id')
  @Response<Problem>(404, 'Not found')
  @OperationId('getAppeal')
  public async get(@Path('appeal_id') appealId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<AppealView> {
    return getAppeal(req.user, appealId);
  }

  /**
   * Approve an appeal: the Temporal Update `approve` of its workflow, whose validator admits compliance
   * staff and admins only (403), never the appellant, the order's owner or the trade's counterparty
   * (403), nor anyone with an own interest in it: a party (appellant, payer, payee) who is the staff member
   * or shares their name, phone, e-mail or ID number (403); and only while the appeal is open (409). Answers
   * 200 with the approved appeal once its resolution has run; a resolution that does not fit the order's
   * state is a 409 and the appeal stays open.
   *
   * Four eyes: a refund whose KES equivalent is at or above `FOUR_EYES_ABOVE_KES` is paid only on a second,
   * different staff member's approval. The first approval answers 202 with the appeal still `open` and
   * `awaiting_second_approval` naming the refund; the same staff member approving again is 403; another staff
   * member's approval (the workflow's `approve-second` Update) pays that refund, unchanged (an `action` or
   * `amount` that differs is 409), and answers 200.
   * @summary Approve an appeal
   */
  @Put('{appeal_id}/approve')
  @Security('jwt', ['compliance', 'admin'])
  @SuccessResponse(200, 'Approved: the resolution has run')
  @Response<AppealView>(202, 'A refund at or above FOUR_EYES_ABOVE_KES approved once: it waits for a second staff member')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(403, 'Not allowed to decide this appeal (own interest, or the refund’s first approver approving again)')
  @Response<Problem>(404, 'Not found')
  @Response<Problem>(409, 'The appeal is no longer open, the action does not fit the order, or it differs from the first approval')
  @OperationId('approveAppeal')
  public async approve(
    @Path('appeal_id') appealId: Uuid,
    @Body() body: DecisionBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<AppealView> {
    const appeal = await decideAppeal(req.user, appealId, 'approve', body);
    if (appeal.status === 'open') this.setStatus(202);
    return appeal;
  }

  /**
   * Reject an appeal: the Temporal Update `reject`, with the same validator as approval. The order is
   * left as it is; answers 200 with the rejected appeal. A refund waiting for its second approval can be
   * rejected too: nothing is paid.
   * @summary Reject an appeal
   */
  @Put('{appeal_id}/reject')
  @Security('jwt', ['compliance', 'admin'])
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(403, 'Not allowed to decide this appeal (role, party, or own interest)')
  @Response<Problem>(404, 'Not found')
  @Response<Problem>(409, 'The appeal is no longer open')
  @OperationId('rejectAppeal')
  public async reject(
    @Path('appeal_id') appealId: Uuid,
    @Body() body: DecisionBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<AppealView> {
    return decideAppeal(req.user, appealId, 'reject', body);
  }
}
