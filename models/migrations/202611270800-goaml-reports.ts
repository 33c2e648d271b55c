import type { Migration } from '../migrator';

/**
 * goAML reports to the Financial Reporting Centre (docs/compliance.md#goaml-reports): one row per report, with
 * the XML exactly as it was rendered, who made it and when, and what it covers. Append-only (POCAMLA keeps
 * records 7 years): UPDATE, DELETE and TRUNCATE are refused by the same `audit_append_only()` triggers as the
 * audit trail. No foreign key to users: a report outlives the account that made it.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE goaml_reports (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('CTR', 'STR')),
      period_from timestamptz,
      period_to timestamptz,
      created_by uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      transaction_count integer NOT NULL CHECK (transaction_count >= 0),
      total_kes_minor numeric(38, 0) NOT NULL CHECK (total_kes_minor >= 0),
      threshold_kes_minor numeric(38, 0) CHECK (threshold_kes_minor >= 0),
      xml text NOT NULL CHECK (char_length(xml) > 0),
      CONSTRAINT goaml_reports_period CHECK (
        (period_from IS NULL AND period_to IS NULL) OR (period_from IS NOT NULL AND period_to IS NOT NULL AND period_from < period_to)
      ),
      CONSTRAINT goaml_reports_ctr CHECK (kind <> 'CTR' OR (period_from IS NOT NULL AND threshold_kes_minor IS NOT NULL))
    );
    CREATE INDEX goaml_reports_by_time ON goaml_reports (created_at);

    CREATE TRIGGER goaml_reports_append_only BEFORE UPDATE OR DELETE ON goaml_reports
      FOR EACH ROW EXECUTE FUNCTION audit_append_only();
    CREATE TRIGGER goaml_reports_no_truncate BEFORE TRUNCATE ON goaml_reports
      FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query('DROP TABLE IF EXISTS goaml_reports');
};
