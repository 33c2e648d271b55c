import { Readable } from 'node:stream';
import type { Request as ExpressRequest } from 'express';
import {
  Body,
  Controller,
  Example,
  Get,
  Path,
  Post,
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
import type { BlocklistSourceName, BlocklistTypeName, Uuid } from '../schema-types';
import {
  addBlocklistEntry,
  complianceReport,
  decideScreeningReview,
  listBlocklist,
  listScreeningReviews,
  searchLists,
  type BlocklistEntryView,
  type ComplianceReportView,
  type ScreeningReviewView,
  type ScreenResultView,
} from '../../services/compliance-service';
import type { Page } from '../../services/paging';
import { floatReconciliation, type ReconciliationView } from '../../services/reconciliation-service';
import type { ApprovalRequestView } from '../../services/approvals';
import {
  listReconciliationBreaks,
  reconcileOnDemand,
  resolveBreak,
  type BreakView,
  type ReconciliationRunView,
} from '../../services/rail-reconciliation-service';

/** A break's state. */
type BreakStatusName = 'open' | 'resolved';

/** A payment method whose rail account is reconciled. */
type BreakMethodName = 'bank_transfer' | 'mobile_money' | 'crypto';

interface ResolveBreakBody {
  /**
   * What was found and done, for the record.
   * @example "duplicate STK and C2B credit of receipt QK7ABC123: the second credit reversed by journal 2026-118"
   * @minLength 1
   * @maxLength 1000
   */
  note: string;
}

interface ReconciliationRunBody {
  /**
   * RFC 3339; default 24 hours before `to`. A run covers at most 31 days.
   * @example "2026-11-25T00:00:00Z"
   * @maxLength 40
   */
  from?: string;
  /**
   * RFC 3339; default now.
   * @example "2026-11-26T00:00:00Z"
   * @maxLength 40
   */
  to?: string;
}

interface BlocklistEntryBody {
  /**
   * `name`, `email`, `phone`, `national_id`, `bank_account`, `crypto_address` or `country`.
   * @example "phone"
   */
  type: BlocklistTypeName;
  /**
   * Normalised before it is stored: case, E.164 phones, whitespace.
   * @example "+254 700 123 456"
   * @maxLength 500
   */
  value: string;
  /**
   * @example "confirmed fraud, case 2026-114"
   * @maxLength 1000
   */
  reason: string;
  /** `manual` (default), `ofac`, `un` or `eu`. */
  source?: BlocklistSourceName;
  /**
   * RFC 3339; after it the entry no longer matches.
   * @example "2027-01-01T00:00:00Z"
   * @maxLength 40
   */
  expires_at?: string;
}

/** A screening review's state. */
type ReviewStatusName = 'needs_review' | 'confirmed' | 'cleared' | 'expired';

interface ReviewDecisionBody {
  /** `confirm`: the match stands (a held payment is rejected); `clear`: a false match (a held payment goes on, a held deposit is credited). */
  decision: 'confirm' | 'clear';
  /**
   * Why, for the record.
   * @example "different date of birth and nationality"
   * @maxLength 500
   */
  note?: string;
}

@Route('compliance')
@Tags('Compliance')
@Security('jwt', ['compliance', 'admin'])
export class ComplianceController extends Controller {
  /**
   * Add a value to the blocklist: 201 with the new entry, or 200 with the existing one for the same type
   * and normalised value (an expired one is renewed). Screening uses it at once.
   * @summary Add a blocklist entry
   */
  @Post('blocklist')
  @SuccessResponse(201, 'Created')
  @Response<BlocklistEntryView>(200, 'Already listed: the existing entry')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @OperationId('addBlocklistEntry')
  public async addEntry(@Body() body: BlocklistEntryBody, @Request() req: ExpressRequest & { user: Caller }): Promise<BlocklistEntryView> {
    const { entry, created } = await addBlocklistEntry(req.user, body);
    this.setStatus(created ? 201 : 200);
    return entry;
  }

  /**
   * The blocklist, newest first.
   * @param type one of the entry types
   * @param q part of the (normalised) value
   * @minLength q 1
   * @maxLength q 200
   * @param source `manual`, `ofac`, `un` or `eu`
   * @param active true: only entries that match today; false: only expired ones
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @summary List blocklist entries
   * @maxLength cursor 200
   */
  @Get('blocklist')
  @Response<Problem>(400, 'Bad filter')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @OperationId('listBlocklistEntries')
  public async listEntries(
    @Query() type?: BlocklistTypeName,
    @Query() q?: string,
    @Query() source?: BlocklistSourceName,
    @Query() active?: boolean,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<BlocklistEntryView>> {
    return listBlocklist({ type, q, source, active, limit, cursor });
  }

  /**
   * Search the lists for a name (or an identifier) the way screening does: names folded to one Latin form
   * whatever their script, the best matches down to a score of 0.7, each with its list and reference, its
   * score, the verdict screening would reach (`block`, `review` or `pass`) and the folded forms compared.
   * Rate-limited per user (RATE_LIMIT_SCREEN_PER_MINUTE); nothing is recorded.
   * @param name the name or identifier to search for
   * @minLength name 1
   * @maxLength name 200
   * @param type one of the entry types; `name` by default
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @summary Search the lists
   */
  @Get('screen')
  @Response<Problem>(400, 'Bad name or type')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @Response<Problem>(429, 'Too many searches')
  @OperationId('searchLists')
  public async screen(
    @Query() name: string,
    @Request() req: ExpressRequest & { user: Caller },
    @Query() type?: BlocklistTypeName,
    @Query() limit?: number,
  ): Promise<ScreenResultView> {
    return searchLists(req.user, { name, type, limit });
  }

  /**
   * Screening matches that are neither passed nor blocked until staff decide: a score just under the
   * threshold, initials, or a dropped name. Each names the listed entry, its list and its reference.
   * @param status `needs_review`, `confirmed`, `cleared` or `expired`
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @maxLength cursor 200
   * @summary List screening reviews
   */
  @Get('reviews')
  @Response<Problem>(400, 'Bad filter')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @OperationId('listScreeningReviews')
  public async listReviews(
    @Query() status?: ReviewStatusName,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<ScreeningReviewView>> {
    return listScreeningReviews({ status, limit, cursor });
  }

  /**
   * Decide a screening review, once: `confirm` rejects a payment held for it (a deposit held for it stays
   * in compliance suspense) and makes the same pair (listed entry, screened value) block from now on;
   * `clear` lets the payment go on, credits a deposit held for it to its owner's wallet (within the KYC
   * tier's cap), and makes the pair pass from now on. Never on a screening of one's own name.
   * @summary Decide a screening review
   */
  @Post('reviews/{review_id}/decision')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, or one’s own screening')
  @Response<Problem>(404, 'No such review')
  @Response<Problem>(409, 'Already decided, or the held payment’s SLA ran out')
  @OperationId('decideScreeningReview')
  public async decideReview(
    @Path('review_id') reviewId: Uuid,
    @Body() body: ReviewDecisionBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<ScreeningReviewView> {
    return decideScreeningReview(req.user, reviewId, body);
  }

  /**
   * The compliance report of a period, computed by the Temporal workflow `compliance-report` with workflow
   * id `compliance-report-<from>_<to>`: asking again for the same period returns the same run's report
   * (same `run_id`); `refresh=true` starts a new run under the same id (unless one is running, which is
   * joined). Sections: totals by status, method and currency; large transactions at or above the CTR
   * threshold (USD equivalent); structuring alerts (two or more payments by one user within 24 hours, each
   * below the threshold, together at or above it); blocklist hits; KYC counts; appeals by status.
   * `format=csv` gives the same content as rows `section,item,field,value`.
   * @param from RFC 3339 or YYYY-MM-DD (midnight UTC), inclusive
   * @param to RFC 3339 or YYYY-MM-DD (midnight UTC), exclusive
   * @param format `json` (default) or `csv`
   * @param refresh true: compute it again
   * @summary Get the compliance report
   * @maxLength from 40
   * @maxLength to 40
   * @maxLength format 10
   */
  @Get('report')
  @Response<Problem>(400, 'Bad period or format')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @Response<Problem>(503, 'Temporal unavailable, or the report is still being computed (ask again)')
  @OperationId('getComplianceReport')
  public async report(
    @Query() from: string,
    @Query() to: string,
    @Query() format?: string,
    @Query() refresh?: boolean,
  ): Promise<ComplianceReportView | Readable> {
    const rendered = await complianceReport({ from, to, format, refresh });
    this.setHeader('X-Workflow-Id', rendered.report.workflow_id);
    this.setHeader('X-Workflow-Run-Id', rendered.report.run_id);
    if (rendered.csv === undefined) return rendered.report;
    this.setHeader('Content-Type', 'text/csv; charset=utf-8');
    this.setHeader('Content-Disposition', `attachment; filename="${rendered.filename}"`);
    return Readable.from([rendered.csv]);
  }

  /**
   * Float reconciliation: per currency, what Paygate owes its customers (wallets, holds, escrows, suspense)
   * and its fee revenue, against what the ledger says each rail holds and what each rail reports itself
   * (the primary bank's balance; the sandbox's own records), with the differences.
   * @summary Get the float reconciliation
   */
  @Get('reconciliation')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @OperationId('getFloatReconciliation')
  public async reconciliation(): Promise<ReconciliationView> {
    return floatReconciliation();
  }

  /**
   * Breaks between a rail's own record and the ledger, newest first, found by the daily `reconcile-rails`
   * job or an on-demand run: `missing_in_ledger` (money at the rail the ledger lacks: a missing credit, a
   * payout the ledger never recorded), `missing_at_rail` (the ledger has money the rail does not),
   * `amount_mismatch`, `duplicate` (a doubled credit; a transfer made twice).
   * @param rail the connector whose record was read: `sandbox`, `jenga`, `daraja` or `ccxt`
   * @param method `bank_transfer`, `mobile_money` or `crypto`
   * @param status `open` or `resolved`
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @maxLength cursor 200
   * @maxLength rail 31
   * @summary List reconciliation breaks
   */
  @Get('reconciliation/breaks')
  @Response<Problem>(400, 'Bad filter, limit or cursor')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @Example<Page<BreakView>>({
    data: [
      {
        break_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
        rail: 'jenga',
        method: 'bank_transfer',
        kind: 'missing_in_ledger',
        direction: 'in',
        reference: 'FT2611250042',
        currency: 'KES',
        rail_amount: '2500.00',
        ledger_amount: null,
        rail_lines: 1,
        ledger_lines: 0,
        day: '2026-11-25',
        deposit_ids: [],
        order_ids: [],
        status: 'open',
        found_at: '2026-11-26T00:05:12.000Z',
        resolved_by: null,
        resolved_at: null,
        resolution_note: null,
      },
    ],
    next_cursor: null,
  })
  @OperationId('listReconciliationBreaks')
  public async listBreaks(
    @Query() rail?: string,
    @Query() method?: BreakMethodName,
    @Query() status?: BreakStatusName,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<BreakView>> {
    return listReconciliationBreaks({ rail, method, status, limit, cursor });
  }

  /**
   * Resolve an open break with a note saying what was found and done. Above `FOUR_EYES_ABOVE_KES` nothing
   * changes yet: the answer is 202 with a four-eyes request, and a second, different staff member approves
   * it at `POST /compliance/approvals/{request_id}/approve`. A resolved break is 409.
   * @summary Resolve a reconciliation break
   */
  @Post('reconciliation/breaks/{break_id}/resolve')
  @SuccessResponse(200, 'Resolved')
  @Response<ApprovalRequestView>(202, 'Above FOUR_EYES_ABOVE_KES: a four-eyes request waits for a second staff member')
  @Response<Problem>(400, 'Validation failed (a note is required)')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @Response<Problem>(404, 'No such break')
  @Response<Problem>(409, 'Already resolved, or a four-eyes request already waits for it')
  @Example<BreakView>({
    break_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
    rail: 'jenga',
    method: 'bank_transfer',
    kind: 'missing_in_ledger',
    direction: 'in',
    reference: 'FT2611250042',
    currency: 'KES',
    rail_amount: '2500.00',
    ledger_amount: null,
    rail_lines: 1,
    ledger_lines: 0,
    day: '2026-11-25',
    deposit_ids: [],
    order_ids: [],
    status: 'resolved',
    found_at: '2026-11-26T00:05:12.000Z',
    resolved_by: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e90',
    resolved_at: '2026-11-26T09:14:00.000Z',
    resolution_note: 'credit of an unknown payer, returned by the bank',
  })
  @OperationId('resolveReconciliationBreak')
  public async resolveBreak(
    @Path('break_id') breakId: Uuid,
    @Body() body: ResolveBreakBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<BreakView | ApprovalRequestView> {
    const outcome = await resolveBreak(req.user, breakId, body);
    if ('resolved' in outcome) return outcome.resolved;
    this.setStatus(202);
    this.setHeader('Location', `/api/v1/compliance/approvals/${outcome.pending.request_id}`);
    return outcome.pending;
  }

  /**
   * Run the `reconcile-rails` reconciliation now, over a period (default: the last 24 hours): each
   * method's rail's own record is matched line by line with the ledger. New breaks are recorded (each an
   * event for staff); the answer lists every break the run found, new or found before.
   * @summary Reconcile the rails now
   */
  @Post('reconciliation/runs')
  @Response<Problem>(400, 'Bad period')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @Example<ReconciliationRunView>({
    from: '2026-11-25T00:00:00.000Z',
    to: '2026-11-26T00:00:00.000Z',
    rails: [{ rail: 'jenga', method: 'bank_transfer', rail_lines: 42, ledger_lines: 41, breaks: 1, new_breaks: 1 }],
    breaks: [
      {
        break_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
        rail: 'jenga',
        method: 'bank_transfer',
        kind: 'missing_in_ledger',
        direction: 'in',
        reference: 'FT2611250042',
        currency: 'KES',
        rail_amount: '2500.00',
        ledger_amount: null,
        rail_lines: 1,
        ledger_lines: 0,
        day: '2026-11-25',
        deposit_ids: [],
        order_ids: [],
        status: 'open',
        found_at: '2026-11-26T00:05:12.000Z',
        resolved_by: null,
        resolved_at: null,
        resolution_note: null,
      },
    ],
  })
  @OperationId('runRailReconciliation')
  public async runReconciliation(@Body() body: ReconciliationRunBody): Promise<ReconciliationRunView> {
    return reconcileOnDemand(body);
  }
}
