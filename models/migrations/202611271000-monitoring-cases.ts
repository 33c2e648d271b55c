import type { Migration } from '../migrator';

/**
 * Monitoring cases (docs/compliance.md#cases): alerts (evaluations that decided `review` or `refuse`) grouped
 * per customer, worked by compliance staff and closed by two of them. The database keeps one open case per
 * customer (`monitoring_cases_one_open`, a partial unique index), so two alerts filed at once join one case.
 * A closure is first requested (`closure_*`) and then confirmed by a different staff member; the CHECKs keep
 * a closed case's outcome, confirmer and report consistent. Alerts and notes are append-only.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE monitoring_cases (
      id uuid PRIMARY KEY,
      customer_id uuid NOT NULL REFERENCES users (id),
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
      assignee_id uuid REFERENCES users (id),
      opened_at timestamptz NOT NULL DEFAULT now(),
      closure_requested_by uuid,
      closure_requested_at timestamptz,
      closure_outcome text CHECK (closure_outcome IN ('false_positive', 'reported')),
      closure_note text CHECK (char_length(closure_note) BETWEEN 1 AND 2000),
      closed_by uuid,
      closed_at timestamptz,
      report_id uuid REFERENCES goaml_reports (id),
      CONSTRAINT monitoring_cases_closure_request CHECK (
        (closure_requested_by IS NULL) = (closure_outcome IS NULL)
        AND (closure_requested_by IS NULL) = (closure_requested_at IS NULL)
        AND (closure_requested_by IS NULL) = (closure_note IS NULL)
      ),
      CONSTRAINT monitoring_cases_closed CHECK (
        (status = 'open' AND closed_by IS NULL AND closed_at IS NULL AND report_id IS NULL)
        OR (status = 'closed' AND closed_by IS NOT NULL AND closed_at IS NOT NULL AND closure_outcome IS NOT NULL
            AND closed_by <> closure_requested_by
            AND (closure_outcome = 'reported') = (report_id IS NOT NULL))
      )
    );
    CREATE UNIQUE INDEX monitoring_cases_one_open ON monitoring_cases (customer_id) WHERE status = 'open';
    CREATE INDEX monitoring_cases_status ON monitoring_cases (status, id);
    CREATE INDEX monitoring_cases_customer ON monitoring_cases (customer_id, id);
    CREATE INDEX monitoring_cases_assignee ON monitoring_cases (assignee_id, id) WHERE assignee_id IS NOT NULL;

    CREATE TABLE monitoring_case_alerts (
      evaluation_id uuid PRIMARY KEY REFERENCES monitoring_evaluations (id),
      case_id uuid NOT NULL REFERENCES monitoring_cases (id),
      filed_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX monitoring_case_alerts_case ON monitoring_case_alerts (case_id, evaluation_id);
    CREATE TRIGGER monitoring_case_alerts_append_only BEFORE UPDATE OR DELETE ON monitoring_case_alerts
      FOR EACH ROW EXECUTE FUNCTION audit_append_only();
    CREATE TRIGGER monitoring_case_alerts_no_truncate BEFORE TRUNCATE ON monitoring_case_alerts
      FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();

    CREATE TABLE monitoring_case_notes (
      id uuid PRIMARY KEY,
      case_id uuid NOT NULL REFERENCES monitoring_cases (id),
      author_id uuid NOT NULL,
      text text NOT NULL CHECK (char_length(text) BETWEEN 1 AND 2000),
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX monitoring_case_notes_case ON monitoring_case_notes (case_id, id);
    CREATE TRIGGER monitoring_case_notes_append_only BEFORE UPDATE OR DELETE ON monitoring_case_notes
      FOR EACH ROW EXECUTE FUNCTION audit_append_only();
    CREATE TRIGGER monitoring_case_notes_no_truncate BEFORE TRUNCATE ON monitoring_case_notes
      FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query('DROP TABLE IF EXISTS monitoring_case_notes, monitoring_case_alerts, monitoring_cases');
};
