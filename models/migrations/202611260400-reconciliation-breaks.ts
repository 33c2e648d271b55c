import type { Migration } from '../migrator';

/**
 * Reconciliation line by line (docs/wallets.md#reconciliation-line-by-line): every difference between a
 * rail's own record of a period and the ledger is a break, recorded once per (rail, method, direction,
 * provider reference, kind) so that a daily run and an on-demand run find the same break, not two. A break
 * is open until a staff member resolves it with a note. Each break found and each break resolved is an
 * event for every staff member (never for a customer), through the same outbox as every other event.
 *
 * The sandbox keeps its own books apart from Paygate's: money its simulators make arrive is written to
 * `sandbox_transfers` as the provider's own record (`request.direction = 'arrival'`), so that the sandbox's
 * statement is never read from `deposits`.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE reconciliation_breaks (
      id uuid PRIMARY KEY,
      rail text NOT NULL,
      method text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('missing_in_ledger', 'missing_at_rail', 'amount_mismatch', 'duplicate')),
      direction text NOT NULL CHECK (direction IN ('in', 'out')),
      reference text NOT NULL CHECK (char_length(reference) BETWEEN 1 AND 200),
      currency text NOT NULL,
      rail_amount_minor numeric(38, 0),
      ledger_amount_minor numeric(38, 0),
      rail_lines integer NOT NULL CHECK (rail_lines >= 0),
      ledger_lines integer NOT NULL CHECK (ledger_lines >= 0),
      day date NOT NULL,
      deposit_ids uuid[] NOT NULL DEFAULT '{}',
      order_ids uuid[] NOT NULL DEFAULT '{}',
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
      found_at timestamptz NOT NULL DEFAULT now(),
      resolved_by uuid REFERENCES users (id),
      resolved_at timestamptz,
      resolution_note text CHECK (char_length(resolution_note) <= 1000),
      CONSTRAINT reconciliation_breaks_resolved CHECK (
        (status = 'open') = (resolved_by IS NULL) AND (resolved_by IS NULL) = (resolved_at IS NULL)
        AND (status = 'open' OR resolution_note IS NOT NULL)
      )
    );
    CREATE UNIQUE INDEX reconciliation_breaks_once ON reconciliation_breaks (rail, method, direction, reference, kind);
    CREATE INDEX reconciliation_breaks_by_status ON reconciliation_breaks (status, id);

    CREATE FUNCTION paygate_reconciliation_break_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status THEN
        INSERT INTO webhook_events (type, user_id, payload)
        SELECT CASE WHEN TG_OP = 'INSERT' THEN 'reconciliation.break_found' ELSE 'reconciliation.break_resolved' END,
               u.id,
               jsonb_build_object(
                 'break_id', NEW.id, 'rail', NEW.rail, 'method', NEW.method, 'kind', NEW.kind,
                 'direction', NEW.direction, 'reference', NEW.reference, 'currency', NEW.currency,
                 'rail_amount_minor', NEW.rail_amount_minor::text, 'ledger_amount_minor', NEW.ledger_amount_minor::text,
                 'status', NEW.status, 'at', coalesce(NEW.resolved_at, NEW.found_at))
          FROM users u WHERE u.roles && ARRAY['compliance', 'admin']::text[];
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER reconciliation_breaks_outbox AFTER INSERT OR UPDATE ON reconciliation_breaks
      FOR EACH ROW EXECUTE FUNCTION paygate_reconciliation_break_outbox();

    CREATE INDEX sandbox_transfers_created ON sandbox_transfers (created_at);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP INDEX IF EXISTS sandbox_transfers_created;
    DROP TABLE IF EXISTS reconciliation_breaks;
    DROP FUNCTION IF EXISTS paygate_reconciliation_break_outbox();
  `);
};
