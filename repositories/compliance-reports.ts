import { QueryTypes } from 'sequelize';
import { ComplianceReport, ComplianceReportSection, models } from '../models';
import type { ComplianceReportInput, ReportSection } from '../domain/compliance/report-contract';

/**
 * Compliance reports: every read and write of `compliance_reports` and `compliance_report_sections`, and
 * the report's aggregate statements over the payment tables (read-only; `domain/compliance/report.ts`
 * shapes their rows into the sections).
 */

export interface ReportHeader {
  reportId: string;
  workflowId: string;
  from: string;
  to: string;
  generatedAt: string;
  parameters: Record<string, unknown>;
}

/** Record a report's header, once per report id (the workflow run id). */
export async function beginReport(h: ReportHeader): Promise<void> {
  await models().query(
    `INSERT INTO compliance_reports (id, workflow_id, period_from, period_to, generated_at, parameters)
     VALUES (:reportId, :workflowId, :from, :to, :generatedAt, :parameters)
     ON CONFLICT (id) DO NOTHING`,
    { replacements: { ...h, parameters: JSON.stringify(h.parameters) } },
  );
}

/** Store one section of a report (again: replaced). */
export async function saveReportSection(reportId: string, section: string, body: unknown): Promise<void> {
  await models().query(
    `INSERT INTO compliance_report_sections (report_id, section, body) VALUES (:reportId, :section, :body)
     ON CONFLICT (report_id, section) DO UPDATE SET body = EXCLUDED.body`,
    { replacements: { reportId, section, body: JSON.stringify(body) } },
  );
}

export async function completeReport(reportId: string): Promise<void> {
  await models().query('UPDATE compliance_reports SET completed_at = coalesce(completed_at, now()) WHERE id = :reportId', {
    replacements: { reportId },
  });
}

/** A completed report: its header and its sections by name; null when there is none (or it is incomplete). */
export async function findCompletedReport(reportId: string): Promise<{
  header: { workflowId: string; periodFrom: Date; periodTo: Date; generatedAt: Date; parameters: Record<string, unknown> };
  sections: Record<string, unknown>;
} | null> {
  const header = await ComplianceReport.findOne({ where: { id: reportId }, raw: true });
  if (!header || header.completedAt === null) return null;
  const rows = await ComplianceReportSection.findAll({ where: { reportId }, attributes: ['section', 'body'], raw: true });
  return {
    header: {
      workflowId: header.workflowId,
      periodFrom: header.periodFrom,
      periodTo: header.periodTo,
      generatedAt: header.generatedAt,
      parameters: header.parameters as Record<string, unknown>,
    },
    sections: Object.fromEntries(rows.map((r) => [r.section, r.body])),
  };
}

/** One of the report's read-only statements, with its bind parameters (`$1`, `$2`, …). */
export interface Statement {
  sql: string;
  bind: unknown[];
}

const period = (input: ComplianceReportInput): [string, string] => [input.from, input.to];

/**
 * The statements of each section, run in order; every number is aggregated by Postgres. The same
 * statements serve the workflow's activities and the benchmark's bare-SQL baseline.
 */
export const REPORT_STATEMENTS: { [K in ReportSection]: (input: ComplianceReportInput) => Statement[] } = {
  // `set` is GROUPING(status, method, currency): which grouping set a row belongs to.
  totals: (input) => [
    {
      sql: `SELECT status, method, currency, GROUPING(status, method, currency) AS set,
                   count(*) AS count, coalesce(sum(kes_equivalent_minor), 0) AS kes_minor,
                   coalesce(sum(amount_minor), 0) AS amount_minor
              FROM orders
             WHERE created_at >= $1 AND created_at < $2
             GROUP BY GROUPING SETS ((status), (method), (currency), ())`,
      bind: period(input),
    },
  ],

  large_transactions: (input) => [
    {
      sql: `SELECT id, user_id, created_at, status, method, currency, amount_minor, kes_equivalent_minor,
                   count(*) OVER () AS total_count, sum(kes_equivalent_minor) OVER () AS total_kes
              FROM orders
             WHERE created_at >= $1 AND created_at < $2 AND kes_equivalent_minor >= $3
             ORDER BY created_at, id
             LIMIT $4`,
      bind: [...period(input), input.ctrThresholdKesMinor, input.maxRows],
    },
  ],

  // Two or more payments by one user, each below the threshold, within 24 hours of the first, adding up
  // to at least the threshold. One alert per burst: a window starting within 24 hours of the previous
  // qualifying window of the same user belongs to the same alert.
  structuring_alerts: (input) => [
    {
      sql: `WITH small AS (
              SELECT id, user_id, created_at, kes_equivalent_minor AS kes
                FROM orders
               WHERE created_at >= $1 AND created_at < $2 AND kes_equivalent_minor < $3
            ), windows AS (
              SELECT id, user_id, created_at,
                     count(*) OVER w AS payments, sum(kes) OVER w AS kes_total, max(created_at) OVER w AS last_at
                FROM small
              WINDOW w AS (PARTITION BY user_id ORDER BY created_at
                           RANGE BETWEEN CURRENT ROW AND INTERVAL '24 hours' FOLLOWING)
            ), qualifying AS (
              SELECT *, lag(created_at) OVER (PARTITION BY user_id ORDER BY created_at, id) AS previous_start
                FROM windows
               WHERE payments >= 2 AND kes_total >= $3
            )
            SELECT user_id, id AS first_order_id, created_at AS window_start, last_at AS window_end, payments, kes_total,
                   count(*) OVER () AS total_count
              FROM qualifying
             WHERE previous_start IS NULL OR previous_start <= created_at - INTERVAL '24 hours'
             ORDER BY created_at, user_id
             LIMIT $4`,
      bind: [...period(input), input.ctrThresholdKesMinor, input.maxRows],
    },
  ],

  blocklist_hits: (input) => [
    {
      sql: `SELECT context, count(*) AS count FROM screening_hits
             WHERE created_at >= $1 AND created_at < $2 AND entry_id IS NOT NULL GROUP BY context`,
      bind: period(input),
    },
    {
      sql: `SELECT h.id, h.created_at, h.context, h.user_id, h.order_id, h.field, h.screened_value, h.entry_id,
                   e.type AS entry_type, e.value AS entry_value, e.source AS entry_source, h.score
              FROM screening_hits h
              JOIN blocklist_entries e ON e.id = h.entry_id
             WHERE h.created_at >= $1 AND h.created_at < $2
             ORDER BY h.created_at, h.id
             LIMIT $3`,
      bind: [...period(input), input.maxRows],
    },
  ],

  kyc: (input) => [
    { sql: 'SELECT kyc_status AS status, count(*) AS count FROM users WHERE created_at < $1 GROUP BY kyc_status', bind: [input.to] },
    {
      sql: 'SELECT to_status AS status, count(*) AS count FROM kyc_audit WHERE at >= $1 AND at < $2 GROUP BY to_status',
      bind: period(input),
    },
  ],

  appeals: (input) => [{ sql: 'SELECT status, count FROM compliance_appeal_counts($1, $2)', bind: period(input) }],
};

/** Run one of the report's read-only aggregate statements. */
export async function runReportStatement(statement: Statement): Promise<Record<string, unknown>[]> {
  return models().query<Record<string, unknown>>(statement.sql, { bind: statement.bind, type: QueryTypes.SELECT });
}

/** A section's rows: its statements run in order, one list of rows per statement. */
export async function readReportSection(section: ReportSection, input: ComplianceReportInput): Promise<Record<string, unknown>[][]> {
  const results: Record<string, unknown>[][] = [];
  for (const statement of REPORT_STATEMENTS[section](input)) results.push(await runReportStatement(statement));
  return results;
}
