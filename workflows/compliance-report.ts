import { proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { ComplianceActivities } from './activities/compliance';
import { REPORT_SECTIONS, type ComplianceReportInput, type ComplianceReportResult } from '../domain/compliance/report-contract';

/** Header and completion are single-row writes to our own Postgres. */
const db = proxyLocalActivities<ComplianceActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 10 },
});

/** A section aggregates over the period's orders: minutes at most, heartbeating while the SQL runs. */
const sections = proxyActivities<ComplianceActivities>({
  startToCloseTimeout: '15m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
});

/**
 * The compliance report of a period (docs/compliance.md#compliance-report). The workflow id is derived from the period, so a repeated
 * request finds this run; the report is stored under the run id and the result only points at it (a
 * report can be larger than a workflow result may be).
 */
export async function complianceReport(input: ComplianceReportInput): Promise<ComplianceReportResult> {
  const { workflowId, runId } = workflowInfo();
  const generatedAt = new Date().toISOString();
  await db.beginReport({ reportId: runId, workflowId, input, generatedAt });
  await Promise.all(REPORT_SECTIONS.map((section) => sections.buildReportSection({ reportId: runId, section, input })));
  await db.completeReport({ reportId: runId });
  return { reportId: runId, workflowId, generatedAt };
}
