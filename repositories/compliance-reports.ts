import { QueryTypes } from 'sequelize';
import { ComplianceReport, ComplianceReportSection, models } from '../models';
import type { Statement } from '../domain/compliance/report';

/**
 * Compliance reports: every read and write of `compliance_reports` and `compliance_report_sections`, and
 * the report's aggregate statements over the payment tables (built by `domain/compliance/report.ts`, run
 * here, read-only).
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

/** Run one of the report's read-only aggregate statements. */
export async function runReportStatement(statement: Statement): Promise<Record<string, unknown>[]> {
  return models().query<Record<string, unknown>>(statement.sql, { bind: statement.bind, type: QueryTypes.SELECT });
}
