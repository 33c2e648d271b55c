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
import {
  assignMonitoringCase,
  closeMonitoringCase,
  getMonitoringCase,
  listMonitoringCases,
  noteMonitoringCase,
  type CaseDetailView,
  type CaseNoteView,
  type CaseView,
} from '../../services/cases-service';

interface AssignBody {
  /** The compliance or admin staff member who works the case. */
  assignee_id: Uuid;
}

interface NoteBody {
  /**
   * @minLength 1
   * @maxLength 2000
   * @example "Payer phones belong to one household; asked the customer's employer letter"
   */
  text: string;
}

interface CloseBody {
  /** `false_positive`: nothing suspicious; `reported`: an STR is filed to the FRC. */
  outcome: 'false_positive' | 'reported';
  /**
   * Why: the grounds, kept on the case (and, for `reported`, in the STR's reason).
   * @minLength 1
   * @maxLength 2000
   * @example "Three deposits of KES 950,000 in a day, paid out to a third party within the hour"
   */
  note: string;
}

/**
 * Monitoring cases (docs/compliance.md#cases): alerts grouped per customer, worked by compliance staff with
 * their login (never an API key). Closing takes two different staff members; closing as `reported` files a
 * goAML STR. Nothing about a case ever reaches the customer.
 */
@Route('compliance/cases')
@Tags('Compliance')
@Security('jwt', ['compliance', 'admin'])
export class CasesController extends Controller {
  /**
   * Cases, newest first.
   * @param status Only `open` or `closed` cases
   * @param assignee Only cases given to this staff member (a user id)
   * @param customer Only cases about this customer (a user id)
   * @param limit 1 to 100, default 20
   * @param cursor `next_cursor` of the previous page
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @maxLength cursor 200
   * @summary List monitoring cases
   */
  @Get()
  @Response<Problem>(400, 'Bad status, assignee, customer, limit or cursor')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, or an API key')
  @Example<Page<CaseView>>({
    data: [
      {
        case_id: '01a20720-3c4d-7e5f-8061-717273747576',
        customer_id: '01a205e0-11aa-7bbb-8ccc-0123456789ab',
        status: 'open',
        assignee_id: '01a205da-1b2c-7d3e-8f40-515253545556',
        opened_at: '2026-11-27T08:00:00.000Z',
        alert_count: 2,
        last_alert_at: '2026-11-27T09:30:00.000Z',
        closure: null,
        closed_by: null,
        closed_at: null,
        report_id: null,
      },
    ],
    next_cursor: null,
  })
  @OperationId('listMonitoringCases')
  public async list(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() status?: 'open' | 'closed',
    @Query() assignee?: Uuid,
    @Query() customer?: Uuid,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<CaseView>> {
    return listMonitoringCases(req.user, { status, assignee, customer, limit, cursor });
  }

  /**
   * One case: its alerts (each rule's band and numbers, each typology's score, the rules' version) and notes.
   * @param case_id the case's id
   * @summary Get a monitoring case
   */
  @Get('{case_id}')
  @Response<Problem>(400, 'Malformed case id')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, or an API key')
  @Response<Problem>(404, 'No such case')
  @Example<CaseDetailView>({
    case_id: '01a20720-3c4d-7e5f-8061-717273747576',
    customer_id: '01a205e0-11aa-7bbb-8ccc-0123456789ab',
    status: 'open',
    assignee_id: '01a205da-1b2c-7d3e-8f40-515253545556',
    opened_at: '2026-11-27T08:00:00.000Z',
    alert_count: 2,
    last_alert_at: '2026-11-27T09:30:00.000Z',
    closure: null,
    closed_by: null,
    closed_at: null,
    report_id: null,
    alerts: [
      {
        evaluation_id: '01a20721-4d5e-7f60-8172-828384858687',
        movement_kind: 'deposit',
        movement_id: '01a20722-5e6f-7071-8283-939495969798',
        decision: 'review',
        rule_set_version: 3,
        evaluated_at: '2026-11-27T08:00:00.000Z',
        rules: {
          structuring: {
            band: 2,
            facts: { just_below_count: 3, just_below_sum_minor: '285000000', reporting_threshold_minor: '100000000' },
          },
        },
        typologies: { structuring: { score: 100, decision: 'review' } },
      },
    ],
    notes: [
      {
        note_id: '01a20723-6f70-7182-8394-a4a5a6a7a8a9',
        author_id: '01a205da-1b2c-7d3e-8f40-515253545556',
        text: 'Asked for source of funds',
        created_at: '2026-11-27T10:00:00.000Z',
      },
    ],
  })
  @OperationId('getMonitoringCase')
  public async get(@Path('case_id') caseId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<CaseDetailView> {
    return getMonitoringCase(req.user, caseId);
  }

  /**
   * Give an open case to a compliance or admin staff member. Nobody works a case about themselves.
   * @param case_id the case's id
   * @summary Assign a monitoring case
   */
  @Post('{case_id}/assign')
  @Response<Problem>(400, 'Malformed id, or the assignee is not staff')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, an API key, or a case about the caller')
  @Response<Problem>(404, 'No such case')
  @Response<Problem>(409, 'The case is closed')
  @Example<CaseView>({
    case_id: '01a20720-3c4d-7e5f-8061-717273747576',
    customer_id: '01a205e0-11aa-7bbb-8ccc-0123456789ab',
    status: 'open',
    assignee_id: '01a205da-1b2c-7d3e-8f40-515253545556',
    opened_at: '2026-11-27T08:00:00.000Z',
    alert_count: 2,
    last_alert_at: '2026-11-27T09:30:00.000Z',
    closure: null,
    closed_by: null,
    closed_at: null,
    report_id: null,
  })
  @OperationId('assignMonitoringCase')
  public async assign(
    @Path('case_id') caseId: Uuid,
    @Body() body: AssignBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<CaseView> {
    return assignMonitoringCase(req.user, caseId, body.assignee_id);
  }

  /**
   * Add a note to a case.
   * @param case_id the case's id
   * @summary Note on a monitoring case
   */
  @Post('{case_id}/notes')
  @SuccessResponse(201, 'Created')
  @Response<Problem>(400, 'Malformed id, or an empty or too long text')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, an API key, or a case about the caller')
  @Response<Problem>(404, 'No such case')
  @Example<CaseNoteView>({
    note_id: '01a20723-6f70-7182-8394-a4a5a6a7a8a9',
    author_id: '01a205da-1b2c-7d3e-8f40-515253545556',
    text: 'Asked for source of funds',
    created_at: '2026-11-27T10:00:00.000Z',
  })
  @OperationId('noteMonitoringCase')
  public async note(
    @Path('case_id') caseId: Uuid,
    @Body() body: NoteBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<CaseNoteView> {
    const note = await noteMonitoringCase(req.user, caseId, body.text);
    this.setStatus(201);
    return note;
  }

  /**
   * Close a case, with four eyes: the first staff member's closure is recorded and waits (202, `closure`
   * set); a different staff member sending the same outcome closes it (200). The one who asked cannot confirm
   * (403). Closing as `reported` files a goAML STR from the case's alerts and movements: its id is
   * `report_id`, its XML at `GET /compliance/goaml/{report_id}.xml`.
   * @param case_id the case's id
   * @summary Close a monitoring case
   */
  @Post('{case_id}/close')
  @SuccessResponse(200, 'Closed by the second staff member')
  @Response<CaseView>(202, 'Closure recorded: it waits for a second, different staff member')
  @Response<Problem>(400, 'Malformed id, outcome or note')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, an API key, a case about the caller, or the one who asked to close it')
  @Response<Problem>(404, 'No such case')
  @Response<Problem>(409, 'Already closed, a different outcome waits, or nothing to report')
  @Response<Problem>(503, 'goAML reporting is not configured (GOAML_RENTITY_ID and the reporting person)')
  @Example<CaseView>({
    case_id: '01a20720-3c4d-7e5f-8061-717273747576',
    customer_id: '01a205e0-11aa-7bbb-8ccc-0123456789ab',
    status: 'closed',
    assignee_id: '01a205da-1b2c-7d3e-8f40-515253545556',
    opened_at: '2026-11-27T08:00:00.000Z',
    alert_count: 2,
    last_alert_at: '2026-11-27T09:30:00.000Z',
    closure: {
      requested_by: '01a205da-1b2c-7d3e-8f40-515253545556',
      requested_at: '2026-11-27T11:00:00.000Z',
      outcome: 'reported',
      note: 'Structuring',
    },
    closed_by: '01a205db-2c3d-7e4f-8051-626364656667',
    closed_at: '2026-11-27T11:30:00.000Z',
    report_id: '01a20710-2b3c-7d4e-8f50-616263646566',
  })
  @OperationId('closeMonitoringCase')
  public async close(
    @Path('case_id') caseId: Uuid,
    @Body() body: CloseBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<CaseView> {
    const { pending, view } = await closeMonitoringCase(req.user, caseId, body);
    if (pending) this.setStatus(202);
    return view;
  }
}
