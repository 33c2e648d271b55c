import { config } from '../platform/config';
import { isUuid } from '../platform/ids';
import { AppError, validationError, type FieldError } from '../platform/errors';
import { componentLogger } from '../platform/logger';
import {
  BLOCKLIST_SOURCES,
  BLOCKLIST_TYPES,
  BLOCKLIST_VALUE_HINTS,
  isBlocklistSource,
  isBlocklistType,
  normaliseBlocklistValue,
  type BlocklistSource,
  type BlocklistType,
} from '../domain/compliance/normalise';
import { reportToCsv, usdToKesMinorCeil, type ReportSections } from '../domain/compliance/report';
import { REPORT_SECTIONS, type ComplianceReportInput } from '../domain/compliance/report-contract';
import { type ReviewStatus, type ScreeningContext } from '../domain/compliance/screening';
import {
  addEntry,
  decideReview,
  reviewParties,
  findReview,
  listEntries,
  listReviews,
  type ReviewRow,
  type EntryFilter,
  type EntryRow,
} from '../repositories/compliance';
import { findCompletedReport } from '../repositories/compliance-reports';
import { complianceReportResult, signalScreeningDecision } from '../workflows/client';
import { releaseClearedDeposit } from './money-in';
import { inTransaction } from '../repositories/transaction';
import { screener } from './screening';
import { limitScreeningSearch } from './rate-limits';
import type { Caller } from '../domain/caller';
import { recordStaffAction } from './audit';
import { parseInstant } from './instants';
import { refuseOwnInterest } from './own-interest';
import { screenedValueParty } from '../domain/own-interest';
import { decodeCursor, filterOneOf, keysetPage, pageLimit, type Page } from './paging';

const log = componentLogger('compliance');

// ---------------------------------------------------------------------------------------------
// Blocklist (docs/compliance.md#blocklist)

export interface BlocklistEntryView {
  entry_id: string;
  type: BlocklistType;
  /** Normalised: lower-cased e-mails and names, E.164 phones, upper-cased codes, single spaces. */
  value: string;
  reason: string;
  source: BlocklistSource;
  /** The compliance officer who added it; null for imported lists. */
  created_by: string | null;
  created_at: string;
  /** After this instant the entry no longer matches; null: never expires. */
  expires_at: string | null;
  active: boolean;
}

export interface BlocklistEntryInput {
  type: string;
  value: string;
  reason: string;
  source?: string;
  expires_at?: string;
}

const toEntryView = (row: EntryRow): BlocklistEntryView => ({
  entry_id: row.id,
  type: row.type,
  value: row.value,
  reason: row.reason,
  source: row.source,
  created_by: row.created_by,
  created_at: new Date(row.created_at).toISOString(),
  expires_at: row.expires_at ? new Date(row.expires_at).toISOString() : null,
  active: row.active,
});

/**
 * Add a value to the blocklist. The same (type, normalised value) again returns the existing entry
 * (`created: false`); an entry that had expired is renewed with the new reason, source and expiry.
 */
export async function addBlocklistEntry(
  caller: Caller,
  input: BlocklistEntryInput,
): Promise<{ entry: BlocklistEntryView; created: boolean }> {
  const errors: FieldError[] = [];
  const type = input.type;
  if (!isBlocklistType(type)) errors.push({ field: 'type', message: `must be one of ${BLOCKLIST_TYPES.join(', ')}` });
  const normalised = isBlocklistType(type) && typeof input.value === 'string' ? normaliseBlocklistValue(type, input.value) : null;
  if (isBlocklistType(type) && !normalised) errors.push({ field: 'value', message: `must be ${BLOCKLIST_VALUE_HINTS[type]}` });
  const reason = typeof input.reason === 'string' ? input.reason.trim() : '';
  if (reason.length === 0 || reason.length > 500) errors.push({ field: 'reason', message: 'must be 1 to 500 characters' });
  const source = input.source ?? 'manual';
  if (!isBlocklistSource(source)) errors.push({ field: 'source', message: `must be one of ${BLOCKLIST_SOURCES.join(', ')}` });
  let expiresAt: Date | null = null;
  if (input.expires_at !== undefined && input.expires_at !== null) {
    try {
      expiresAt = parseInstant(input.expires_at, 'expires_at');
    } catch (err) {
      errors.push(...((err as AppError).options.errors ?? []));
    }
  }
  if (errors.length > 0 || !normalised || !isBlocklistType(type) || !isBlocklistSource(source)) {
    throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  }

  const added = await inTransaction(async (tx) => {
    const entry = await addEntry(
      { type, value: normalised.value, matchKey: normalised.matchKey, reason, source, createdBy: caller.id, expiresAt },
      tx,
    );
    if (entry && (entry.created || entry.renewed)) {
      const view = toEntryView(entry.row);
      const after = { type: view.type, value: view.value, reason: view.reason, source: view.source, expires_at: view.expires_at };
      await recordStaffAction(tx, {
        by: caller,
        action: 'blocklist.changed',
        subjectType: 'blocklist_entry',
        subjectId: entry.row.id,
        before: entry.created ? null : { type, value: entry.row.value, active: false },
        after,
      });
    }
    return entry;
  });
  if (!added) throw new AppError('conflict', 'the entry changed while it was being added; retry');
  return { entry: toEntryView(added.row), created: added.created };
}

export interface BlocklistQuery {
  type?: string;
  q?: string;
  source?: string;
  active?: boolean;
  limit?: number;
  cursor?: string;
}

/** The blocklist, newest first, keyset-paged; filters `type`, `q` (part of the value), `source`, `active`. */
export async function listBlocklist(query: BlocklistQuery): Promise<Page<BlocklistEntryView>> {
  const limit = pageLimit(query.limit);
  const filter: EntryFilter = {
    type: filterOneOf('type', query.type, BLOCKLIST_TYPES),
    source: filterOneOf('source', query.source, BLOCKLIST_SOURCES),
  };
  if (query.q !== undefined) {
    const q = query.q.trim().replace(/\s+/g, ' ');
    if (q.length === 0 || q.length > 200) throw validationError('q', 'must be 1 to 200 characters');
    filter.text = q;
  }
  if (query.active !== undefined) filter.active = query.active;
  if (query.cursor !== undefined) filter.before = decodeCursor(query.cursor);
  const rows = await listEntries(filter, limit + 1);
  return keysetPage(rows, limit, toEntryView);
}

// ---------------------------------------------------------------------------------------------
// Searching the lists (staff): what screening would compare, with scores

export interface ScreenMatchView {
  entry_id: string;
  /** The listed value, normalised, in the script it is listed in. */
  value: string;
  type: BlocklistType;
  /** The list: `manual`, `ofac`, `un` or `eu`. */
  source: string;
  /** The entry's reference in its list (`sdn:…`, `un:…`, `eu:…`). */
  external_ref: string | null;
  /** 0–1, to four decimals. */
  score: string;
  /** What screening would do: `block`, `review`, or `pass` (below the review band). */
  verdict: 'block' | 'review' | 'pass';
  review_reason: string | null;
  /** For names: the folded (Latin) forms that were compared. */
  compared: { screened: string; listed: string } | null;
}

export interface ScreenResultView {
  query: { type: BlocklistType; value: string };
  thresholds: { block: number; review: number };
  matches: ScreenMatchView[];
}

/** The best matches of a name (or identifier), down to a score of 0.7: `GET /compliance/screen`. */
export async function searchLists(caller: Caller, query: { name?: string; type?: string; limit?: number }): Promise<ScreenResultView> {
  const type = query.type ?? 'name';
  if (!isBlocklistType(type)) throw validationError('type', `must be one of ${BLOCKLIST_TYPES.join(', ')}`);
  const value = typeof query.name === 'string' ? query.name.trim() : '';
  if (value.length === 0 || value.length > 200) throw validationError('name', 'must be 1 to 200 characters');
  const limit = pageLimit(query.limit);
  await limitScreeningSearch(caller.id);
  const found = await screener().explain({ field: 'query', type, value }, EXPLAIN_FLOOR, limit);
  const { nameThreshold, reviewThreshold } = config().compliance.screening;
  return {
    query: { type, value },
    thresholds: { block: nameThreshold, review: reviewThreshold },
    matches: found.map((m) => ({
      entry_id: m.entryId,
      value: m.entryValue,
      type: m.entryType,
      source: m.source,
      external_ref: m.externalRef,
      score: m.score.toFixed(4),
      verdict: m.verdict,
      review_reason: m.reviewReason,
      compared: m.compared,
    })),
  };
}

/** How far below the review band a staff search still shows matches. */
const EXPLAIN_FLOOR = 0.7;

// ---------------------------------------------------------------------------------------------
// Screening reviews: matches that are neither passed nor blocked until staff decide

export interface ScreeningReviewView {
  review_id: string;
  /** Where the screening ran: `registration`, `kyc`, `payment`, `ad`, `deposit`. */
  context: ScreeningContext;
  user_id: string | null;
  /** The payment held for this review, if it is one. */
  order_id: string | null;
  deposit_id: string | null;
  /** What was screened: `full_name`, `destination.account_name` … */
  field: string;
  /** The screened value, normalised, as it was written (any script). */
  screened_value: string;
  /** The match's score; null for a monitoring review. */
  score: string | null;
  /**
   * `near_threshold` (a score just under the threshold), `initials`, or `dropped_name`; `monitoring` when
   * transaction monitoring held the movement (docs/monitoring.md#holds), explained in `monitoring`.
   */
  review_reason: string;
  /** `needs_review`, then `confirmed` | `cleared`; `expired` when a held payment waited past its SLA. */
  status: ReviewStatus;
  decided_by: string | null;
  decided_at: string | null;
  note: string | null;
  created_at: string;
  /** The listed entry it matched, with its list (`source`) and its reference in that list; null for a monitoring review. */
  entry: { entry_id: string; value: string; source: BlocklistSource; reason: string; external_ref: string | null } | null;
  /** For a monitoring review: why the movement was held, in numbers; null for a screening review. */
  monitoring: MonitoringReviewDetail | null;
}

/** The evaluation a monitoring review was raised by (docs/monitoring.md#evaluations), for staff only. */
export interface MonitoringReviewDetail {
  evaluation_id: string;
  /** The rule-set version the evaluation used. */
  rule_set_version: number;
  /** `review` or `refuse`. */
  decision: string;
  /** Each typology's score against its alert and block thresholds, and what it decided. */
  typologies: MonitoringTypologyScore[];
  /** Each rule's band (0 none, 1 low, 2 high) and the numbers it was decided on. */
  rules: MonitoringRuleResult[];
}

export interface MonitoringTypologyScore {
  typology: string;
  score: number;
  alert_threshold: number;
  block_threshold: number;
  decision: string;
}

export interface MonitoringRuleResult {
  rule: string;
  band: number;
  /** The numbers, by name (`just_below_count`, `distinct_payers` …); amounts in minor units. */
  facts: MonitoringFact[];
}

export interface MonitoringFact {
  name: string;
  value: string;
}

const entriesOf = (value: Record<string, unknown> | null): [string, Record<string, unknown>][] =>
  Object.entries(value ?? {}).map(([k, v]) => [k, typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {}]);

const monitoringDetail = (row: ReviewRow): MonitoringReviewDetail | null =>
  row.evaluation_id === null
    ? null
    : {
        evaluation_id: row.evaluation_id,
        rule_set_version: row.evaluation_rule_set_version ?? 0,
        decision: row.evaluation_decision ?? 'review',
        typologies: entriesOf(row.evaluation_typologies).map(([typology, t]) => ({
          typology,
          score: Number(t.score),
          alert_threshold: Number(t.alert_threshold),
          block_threshold: Number(t.block_threshold),
          decision: String(t.decision),
        })),
        rules: entriesOf(row.evaluation_rules).map(([rule, r]) => ({
          rule,
          band: Number(r.band),
          facts: entriesOf({ facts: r.facts })
            .flatMap(([, facts]) => Object.entries(facts))
            .map(([name, value]) => ({ name, value: String(value) })),
        })),
      };

const REVIEW_STATUSES: readonly ReviewStatus[] = ['needs_review', 'confirmed', 'cleared', 'expired'];

const toReviewView = (row: ReviewRow): ScreeningReviewView => ({
  review_id: row.id,
  context: row.context,
  user_id: row.user_id,
  order_id: row.order_id,
  deposit_id: row.deposit_id,
  field: row.field,
  screened_value: row.screened_value,
  score: row.score,
  review_reason: row.review_reason,
  status: row.status,
  decided_by: row.decided_by,
  decided_at: row.decided_at ? new Date(row.decided_at).toISOString() : null,
  note: row.decision_note,
  created_at: new Date(row.created_at).toISOString(),
  entry:
    row.entry_id === null || row.entry_value === null || row.entry_source === null || row.entry_reason === null
      ? null
      : {
          entry_id: row.entry_id,
          value: row.entry_value,
          source: row.entry_source,
          reason: row.entry_reason,
          external_ref: row.entry_external_ref,
        },
  monitoring: monitoringDetail(row),
});

/** Screening reviews, newest first, keyset-paged; `status` filters (e.g. `needs_review`). */
export async function listScreeningReviews(query: {
  status?: string;
  limit?: number;
  cursor?: string;
}): Promise<Page<ScreeningReviewView>> {
  const limit = pageLimit(query.limit);
  const status = filterOneOf('status', query.status, REVIEW_STATUSES);
  const rows = await listReviews({ status, before: query.cursor === undefined ? undefined : decodeCursor(query.cursor) }, limit + 1);
  return keysetPage(rows, limit, toReviewView);
}

export interface ReviewDecisionInput {
  decision: string;
  note?: string;
}

/**
 * A review is never decided by a staff member who is, or shares a name, phone, e-mail or ID number with, the
 * customer screened, the payee of the held payment (its destination, or the trade's other side), the payer
 * of the held deposit, or the screened value itself (docs/compliance.md#own-interest).
 */
async function refuseOwnReviewInterest(caller: Caller, reviewId: string): Promise<void> {
  const parties = await reviewParties(reviewId);
  if (!parties) return;
  const destination = parties.destination ?? {};
  await refuseOwnInterest(
    caller,
    'a screening review',
    [
      { role: 'customer under review', userId: parties.user_id ?? parties.order_owner ?? parties.deposit_owner },
      { role: 'payer', userId: parties.order_owner },
      { role: 'payee', userId: parties.counterparty },
      { role: 'deposit’s owner', userId: parties.deposit_owner },
    ],
    [
      { role: 'payee', name: destination.account_name, phone: destination.phone },
      { role: 'payer', name: parties.payer_name, phone: parties.payer_phone },
      screenedValueParty(parties.screened_value),
    ],
  );
}

/**
 * Decide a review: `confirm` (the match stands: a held payment is rejected, and the pair blocks from now
 * on) or `clear` (a false match: a held payment goes on, and the pair passes from now on). Never on one's
 * own screening; once only (409 after that, or when a held payment's SLA ran out first).
 */
export async function decideScreeningReview(caller: Caller, reviewId: string, input: ReviewDecisionInput): Promise<ScreeningReviewView> {
  if (!isUuid(reviewId)) throw validationError('review_id', 'must be a UUID');
  const errors: FieldError[] = [];
  if (input.decision !== 'confirm' && input.decision !== 'clear') errors.push({ field: 'decision', message: 'must be confirm or clear' });
  const note = typeof input.note === 'string' ? input.note.trim() : '';
  if (note.length > 500) errors.push({ field: 'note', message: 'must be at most 500 characters' });
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });

  const review = await findReview(reviewId);
  if (!review) throw new AppError('not_found', `screening review ${reviewId} not found`);
  if (review.user_id === caller.id) throw new AppError('forbidden', 'a screening of one’s own name is decided by someone else');
  await refuseOwnReviewInterest(caller, reviewId);
  const status = input.decision === 'confirm' ? 'confirmed' : 'cleared';
  // A deposit held for the review is released with a `clear`, in the decision's transaction: decided and
  // released together, or neither.
  const decided =
    review.status === 'needs_review'
      ? await inTransaction(async (tx) => {
          const row = await decideReview({ hitId: reviewId, status, decidedBy: caller.id, note: note || null }, tx);
          if (row?.deposit_id && status === 'cleared') await releaseClearedDeposit(row.deposit_id, tx);
          if (row) {
            await recordStaffAction(tx, {
              by: caller,
              action: 'review.decided',
              subjectType: 'screening_review',
              subjectId: reviewId,
              before: { status: 'needs_review' },
              after: { status, note: note || null, order_id: row.order_id, deposit_id: row.deposit_id },
            });
          }
          return row;
        })
      : null;
  if (!decided) throw new AppError('conflict', `screening review ${reviewId} is no longer waiting for a decision`);
  log.info(
    { reviewId, decision: status, orderId: decided.order_id, depositId: decided.deposit_id, decidedBy: caller.id },
    'screening review decided',
  );
  if (decided.order_id) {
    // The decision is recorded: a signal that does not arrive costs the payment time (its SLA timer reads
    // the decision), never the decision.
    try {
      await signalScreeningDecision(decided.order_id, { decision: status });
    } catch (err) {
      log.warn(
        { err, orderId: decided.order_id },
        'could not signal the screening decision; the payment reads it when its SLA timer fires',
      );
    }
  }
  return toReviewView(decided);
}

// ---------------------------------------------------------------------------------------------
// Compliance report (docs/compliance.md#compliance-report), computed by the `compliance-report` workflow

export interface ReportParameters {
  ctr_threshold_usd: string;
  usd_rate_kes: string;
  max_rows: number;
}

export interface ComplianceReportView extends ReportSections {
  /** `compliance-report-<from>_<to>`: find it in the Temporal Web UI. */
  workflow_id: string;
  /** The run that computed this report; the same for repeated requests until `refresh=true`. */
  run_id: string;
  period: { from: string; to: string };
  generated_at: string;
  parameters: ReportParameters;
}

export interface ReportQuery {
  from: string;
  to: string;
  format?: string;
  refresh?: boolean;
}

export interface RenderedReport {
  report: ComplianceReportView;
  /** Set when `format=csv`. */
  csv?: string;
  filename: string;
}

async function loadReport(runId: string): Promise<ComplianceReportView | null> {
  const found = await findCompletedReport(runId);
  if (!found) return null;
  const sections = found.sections as Partial<ReportSections>;
  if (REPORT_SECTIONS.some((s) => sections[s] === undefined)) return null;
  const { header } = found;
  return {
    workflow_id: header.workflowId,
    run_id: runId,
    period: { from: new Date(header.periodFrom).toISOString(), to: new Date(header.periodTo).toISOString() },
    generated_at: new Date(header.generatedAt).toISOString(),
    parameters: header.parameters as unknown as ReportParameters,
    ...(sections as ReportSections),
  };
}

function reportInput(from: Date, to: Date): ComplianceReportInput {
  const cfg = config();
  const usdRateKes = cfg.limits.fxToKes.USD;
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    ctrThresholdUsd: cfg.compliance.ctrThresholdUsd,
    usdRateKes,
    ctrThresholdKesMinor: usdToKesMinorCeil(cfg.compliance.ctrThresholdUsd, usdRateKes).toString(),
    maxRows: cfg.compliance.reportMaxRows,
  };
}

export async function complianceReport(query: ReportQuery): Promise<RenderedReport> {
  const from = parseInstant(query.from, 'from', true);
  const to = parseInstant(query.to, 'to', true);
  if (from >= to) throw validationError('to', 'must be after from');
  const format = query.format ?? 'json';
  if (format !== 'json' && format !== 'csv') throw validationError('format', 'must be json or csv');
  const input = reportInput(from, to);
  const timeoutMs = config().compliance.reportTimeoutMs;

  let result = await complianceReportResult(input, query.refresh === true, timeoutMs);
  let report = await loadReport(result.reportId);
  if (!report) {
    // The run's stored report is gone (the database was restored or rebuilt): compute it again.
    result = await complianceReportResult(input, true, timeoutMs);
    report = await loadReport(result.reportId);
    if (!report) throw new AppError('internal', 'the report could not be stored; ask again to retry it');
  }
  const filename = `compliance-report-${input.from.slice(0, 10)}-${input.to.slice(0, 10)}.${format}`;
  if (format === 'csv') {
    return { report, filename, csv: reportToCsv(report) };
  }
  return { report, filename };
}
