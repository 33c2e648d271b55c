/**
 * What the `compliance-report` workflow, its activities and the api agree on. Imported by workflow
 * code, so it imports nothing.
 */

export const COMPLIANCE_REPORT_WORKFLOW = 'compliance-report';

/** The sections of a report, each built by one activity and stored as one row. */
export const REPORT_SECTIONS = ['totals', 'large_transactions', 'structuring_alerts', 'blocklist_hits', 'kyc', 'appeals'] as const;
export type ReportSection = (typeof REPORT_SECTIONS)[number];

/** The workflow id is the period, so asking again for the same period finds the same run. */
export const complianceReportWorkflowId = (fromIso: string, toIso: string): string => `compliance-report-${fromIso}_${toIso}`;

export interface ComplianceReportInput {
  /** RFC 3339, inclusive. */
  from: string;
  /** RFC 3339, exclusive. */
  to: string;
  /** The CTR threshold in USD and the USD rate it was converted with, as configured when the run started. */
  ctrThresholdUsd: string;
  usdRateKes: string;
  /** The threshold in KES minor units (orders carry their KES equivalent): ceil(USD × rate × 100). */
  ctrThresholdKesMinor: string;
  /** Lists (large transactions, alerts, hits) keep at most this many items; counts are always complete. */
  maxRows: number;
}

export interface ComplianceReportResult {
  /** The stored report: the run id. */
  reportId: string;
  workflowId: string;
  generatedAt: string;
}
