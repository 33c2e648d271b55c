import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { QueryTypes } from 'sequelize';
import { config } from '../../platform/config';
import { database } from '../../platform/database';
import { AppError, validationError, type FieldError } from '../../platform/errors';
import { uuidv7 } from '../../platform/ids';
import { componentLogger } from '../../platform/logger';
import { ensureTemporalConnected, temporalClient } from '../../platform/temporal';
import {
  BLOCKLIST_SOURCES,
  BLOCKLIST_TYPES,
  BLOCKLIST_VALUE_HINTS,
  isBlocklistSource,
  isBlocklistType,
  normaliseBlocklistValue,
  type BlocklistSource,
  type BlocklistType,
} from '../../domain/compliance/normalise';
import { reportToCsv, usdToKesMinorCeil, type ReportSections } from '../../domain/compliance/report';
import {
  COMPLIANCE_REPORT_WORKFLOW,
  complianceReportWorkflowId,
  REPORT_SECTIONS,
  type ComplianceReportInput,
  type ComplianceReportResult,
} from '../../domain/compliance/report-contract';
import { recordScreeningHit, screener, type ScreeningContext, type ScreeningItem } from '../../domain/compliance/screening';
import type { Caller } from '../auth/authentication';
import { decodeCursor, encodeCursor, pageLimit, type Page } from './paging';

const log = componentLogger('compliance');

// ---------------------------------------------------------------------------------------------
// Screening outside workflows: registration, KYC submission (and ad posting, with P2P)

/** Screen the items; on a hit, record it and refuse with 422 `blocked_by_compliance` (without saying which entry). */
export async function refuseOnScreeningHit(context: ScreeningContext, userId: string | null, items: ScreeningItem[]): Promise<void> {
  const [best] = await screener().screen(items);
  if (!best) return;
  await recordScreeningHit(database(), { context, match: best, userId });
  log.info({ context, userId, entryId: best.entryId, field: best.field, score: best.score }, 'screening hit');
  throw new AppError('blocked_by_compliance', 'this request cannot be accepted; contact support if you think this is a mistake');
}

// ---------------------------------------------------------------------------------------------
// Blocklist (SPEC §8)

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

interface EntryRow {
  id: string;
  type: BlocklistType;
  value: string;
  reason: string;
  source: BlocklistSource;
  created_by: string | null;
  created_at: Date;
  expires_at: Date | null;
  active: boolean;
}

const ENTRY_COLUMNS = `id, type, value, reason, source, created_by, created_at, expires_at,
  (expires_at IS NULL OR expires_at > now()) AS active`;

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

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function parseInstant(value: string, field: string, allowDate = false): Date {
  const dateOnly = allowDate && /^\d{4}-\d{2}-\d{2}$/.test(value);
  const date = new Date(dateOnly ? `${value}T00:00:00Z` : value);
  if ((!dateOnly && !RFC3339.test(value)) || Number.isNaN(date.getTime())) {
    throw validationError(field, `must be an RFC 3339 timestamp, e.g. 2026-01-31T00:00:00Z${allowDate ? ', or a date' : ''}`);
  }
  return date;
}

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
  if (errors.length > 0 || !normalised) {
    throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  }

  const sequelize = database();
  const values = {
    id: uuidv7(),
    type,
    value: normalised.value,
    matchKey: normalised.matchKey,
    reason,
    source,
    createdBy: caller.id,
    expiresAt,
  };
  const [inserted] = await sequelize.query<EntryRow>(
    `INSERT INTO blocklist_entries (id, type, value, match_key, reason, source, created_by, expires_at)
     VALUES (:id, :type, :value, :matchKey, :reason, :source, :createdBy, :expiresAt)
     ON CONFLICT (type, match_key) DO NOTHING
     RETURNING ${ENTRY_COLUMNS}`,
    { replacements: values, type: QueryTypes.SELECT },
  );
  if (inserted) return { entry: toEntryView(inserted), created: true };
  const [renewed] = await sequelize.query<EntryRow>(
    `UPDATE blocklist_entries SET reason = :reason, source = :source, expires_at = :expiresAt
      WHERE type = :type AND match_key = :matchKey AND expires_at IS NOT NULL AND expires_at <= now()
     RETURNING ${ENTRY_COLUMNS}`,
    { replacements: values, type: QueryTypes.SELECT },
  );
  if (renewed) return { entry: toEntryView(renewed), created: false };
  const [existing] = await sequelize.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM blocklist_entries WHERE type = :type AND match_key = :matchKey`,
    { replacements: values, type: QueryTypes.SELECT },
  );
  if (!existing) throw new AppError('conflict', 'the entry changed while it was being added; retry');
  return { entry: toEntryView(existing), created: false };
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
  const where: string[] = [];
  const replacements: Record<string, unknown> = { limit: limit + 1 };
  if (query.type !== undefined) {
    if (!isBlocklistType(query.type)) throw validationError('type', `must be one of ${BLOCKLIST_TYPES.join(', ')}`);
    where.push('type = :type');
    replacements.type = query.type;
  }
  if (query.source !== undefined) {
    if (!isBlocklistSource(query.source)) throw validationError('source', `must be one of ${BLOCKLIST_SOURCES.join(', ')}`);
    where.push('source = :source');
    replacements.source = query.source;
  }
  if (query.q !== undefined) {
    const q = query.q.trim().replace(/\s+/g, ' ');
    if (q.length === 0 || q.length > 200) throw validationError('q', 'must be 1 to 200 characters');
    where.push(`value ILIKE :pattern ESCAPE '\\'`);
    replacements.pattern = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  }
  if (query.active !== undefined) where.push(query.active ? '(expires_at IS NULL OR expires_at > now())' : 'expires_at <= now()');
  if (query.cursor !== undefined) {
    where.push('id < :after');
    replacements.after = decodeCursor(query.cursor);
  }
  const rows = await database().query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM blocklist_entries ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY id DESC LIMIT :limit`,
    { replacements, type: QueryTypes.SELECT },
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(toEntryView), next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}

// ---------------------------------------------------------------------------------------------
// Compliance report (SPEC §8), computed by the `compliance-report` workflow

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

interface HeaderRow {
  workflow_id: string;
  period_from: Date;
  period_to: Date;
  generated_at: Date;
  parameters: ReportParameters;
}

async function loadReport(runId: string): Promise<ComplianceReportView | null> {
  const sequelize = database();
  const [header] = await sequelize.query<HeaderRow>(
    'SELECT workflow_id, period_from, period_to, generated_at, parameters FROM compliance_reports WHERE id = :runId AND completed_at IS NOT NULL',
    { replacements: { runId }, type: QueryTypes.SELECT },
  );
  if (!header) return null;
  const rows = await sequelize.query<{ section: string; body: unknown }>(
    'SELECT section, body FROM compliance_report_sections WHERE report_id = :runId',
    { replacements: { runId }, type: QueryTypes.SELECT },
  );
  const sections = Object.fromEntries(rows.map((r) => [r.section, r.body])) as Partial<ReportSections>;
  if (REPORT_SECTIONS.some((s) => sections[s] === undefined)) return null;
  return {
    workflow_id: header.workflow_id,
    run_id: runId,
    period: { from: new Date(header.period_from).toISOString(), to: new Date(header.period_to).toISOString() },
    generated_at: new Date(header.generated_at).toISOString(),
    parameters: header.parameters,
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

/**
 * Start (or find) the period's run. Without `refresh`, a running run is joined and a completed one reused
 * (its result is read); only a failed one is replaced. With `refresh`, a new run starts under the same
 * workflow id unless one is running, which is joined: it is computing fresh figures already.
 */
async function reportRun(input: ComplianceReportInput, refresh: boolean): Promise<WorkflowHandle> {
  const client = temporalClient();
  const workflowId = complianceReportWorkflowId(input.from, input.to);
  try {
    await ensureTemporalConnected(client);
    return await client.workflow.start(COMPLIANCE_REPORT_WORKFLOW, {
      workflowId,
      taskQueue: config().temporal.taskQueue,
      args: [input],
      workflowIdReusePolicy: refresh ? 'ALLOW_DUPLICATE' : 'ALLOW_DUPLICATE_FAILED_ONLY',
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: `compliance report ${input.from} → ${input.to}${refresh ? ' (refresh)' : ''}`,
      memo: { from: input.from, to: input.to, ctrThresholdUsd: input.ctrThresholdUsd },
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return client.workflow.getHandle(workflowId);
    log.warn({ err }, 'could not start the compliance report');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; retry shortly', { headers: { 'Retry-After': '5' } });
  }
}

async function awaitResult(handle: WorkflowHandle, timeoutMs: number): Promise<ComplianceReportResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new AppError('dependency_unavailable', 'the report is still being computed; ask again to receive it', {
            headers: { 'Retry-After': '10' },
          }),
        ),
      timeoutMs,
    );
  });
  try {
    return (await Promise.race([handle.result(), timeout])) as ComplianceReportResult;
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (err instanceof WorkflowFailedError) {
      log.error({ err, workflowId: handle.workflowId }, 'compliance report workflow failed');
      throw new AppError('internal', 'the report could not be computed; ask again to retry it');
    }
    log.warn({ err, workflowId: handle.workflowId }, 'could not read the compliance report result');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; retry shortly', { headers: { 'Retry-After': '5' } });
  } finally {
    clearTimeout(timer);
  }
}

export async function complianceReport(query: ReportQuery): Promise<RenderedReport> {
  const from = parseInstant(query.from, 'from', true);
  const to = parseInstant(query.to, 'to', true);
  if (from >= to) throw validationError('to', 'must be after from');
  const format = query.format ?? 'json';
  if (format !== 'json' && format !== 'csv') throw validationError('format', 'must be json or csv');
  const input = reportInput(from, to);
  const timeoutMs = config().compliance.reportTimeoutMs;

  let result = await awaitResult(await reportRun(input, query.refresh === true), timeoutMs);
  let report = await loadReport(result.reportId);
  if (!report) {
    // The run's stored report is gone (the database was restored or rebuilt): compute it again.
    result = await awaitResult(await reportRun(input, true), timeoutMs);
    report = await loadReport(result.reportId);
    if (!report) throw new AppError('internal', 'the report could not be stored; ask again to retry it');
  }
  const filename = `compliance-report-${input.from.slice(0, 10)}-${input.to.slice(0, 10)}.${format}`;
  if (format === 'csv') {
    return { report, filename, csv: reportToCsv(report) };
  }
  return { report, filename };
}
