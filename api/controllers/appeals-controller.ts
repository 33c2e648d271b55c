import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Get, Path, Post, Put, Request, Response, Route, Security, SuccessResponse, Tags, OperationId } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { AppealActionName, Uuid } from '../schema-types';
import { createAppeal, decideAppeal, getAppeal, type AppealView, type EvidenceLink } from '../../services/appeal-service';

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
