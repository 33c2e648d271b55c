import type { Migration } from '../migrator';

/**
 * Bulk payouts (docs/payments.md#bulk-payouts). A batch (`payout_batches`) is one client request of up to
 * 10,000 items (`payout_batch_items`), each an initiate body with the client's own `reference`, unique within
 * the batch. An accepted batch holds its total and fees from the payer's wallet in one posting, `batch_hold`
 * (wallet → `hold:batch:<batch_id>`), the posting's subject being the batch
 * (`ledger_transactions.payout_batch_id`). Each item becomes an order whose hold debits the batch hold; a failed
 * item's release goes back there; when the batch ends what is left goes back to the wallet in one
 * `batch_release`, so the batch hold ends at zero. An order paid for a batch names it (`orders.payout_batch_id`).
 * A batch's creation and its end are events: `payout_batch.created`, `payout_batch.completed` and
 * `payout_batch.cancelled`.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE payout_batches (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      idempotency_key text NOT NULL,
      currency text NOT NULL,
      status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'cancelled')),
      item_count integer NOT NULL CHECK (item_count BETWEEN 1 AND 10000),
      skipped_count integer NOT NULL DEFAULT 0 CHECK (skipped_count >= 0),
      total_amount_minor numeric(38, 0) NOT NULL CHECK (total_amount_minor > 0),
      total_fee_minor numeric(38, 0) NOT NULL CHECK (total_fee_minor >= 0),
      workflow_id text NOT NULL,
      workflow_started_at timestamptz,
      cancel_requested_at timestamptz,
      finished_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT payout_batches_key_once UNIQUE (user_id, idempotency_key)
    );
    CREATE INDEX payout_batches_running ON payout_batches (created_at) WHERE status = 'running';

    CREATE TABLE payout_batch_items (
      batch_id uuid NOT NULL REFERENCES payout_batches (id),
      row_number integer NOT NULL CHECK (row_number >= 1),
      reference text NOT NULL CHECK (char_length(reference) BETWEEN 1 AND 100),
      method text NOT NULL CHECK (method IN ('bank_transfer', 'mobile_money', 'crypto')),
      amount_minor numeric(38, 0) NOT NULL CHECK (amount_minor > 0),
      fee_minor numeric(38, 0) NOT NULL CHECK (fee_minor >= 0),
      body jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'sent', 'completed', 'failed', 'rejected', 'cancelled')),
      order_id uuid UNIQUE REFERENCES orders (id),
      failure_code text,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (batch_id, row_number),
      CONSTRAINT payout_batch_items_reference_once UNIQUE (batch_id, reference)
    );
    CREATE INDEX payout_batch_items_status ON payout_batch_items (batch_id, status, row_number);

    ALTER TABLE orders ADD COLUMN payout_batch_id uuid REFERENCES payout_batches (id);

    ALTER TABLE ledger_transactions ADD COLUMN payout_batch_id uuid REFERENCES payout_batches (id);
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_payout_batch_once UNIQUE (payout_batch_id, kind);

    DO $$
    DECLARE
      def text;
    BEGIN
      SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
       WHERE conrelid = 'ledger_transactions'::regclass AND conname = 'ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check '
        || replace(def, 'ARRAY[', 'ARRAY[''batch_hold''::text, ''batch_release''::text, ');

      SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
       WHERE conrelid = 'ledger_transactions'::regclass AND conname = 'ledger_transactions_one_subject';
      EXECUTE 'ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_one_subject';
      EXECUTE 'ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_one_subject CHECK ((('
        || substr(def, length('CHECK ') + 1)
        || ') AND payout_batch_id IS NULL) OR (kind IN (''batch_hold'', ''batch_release'') AND payout_batch_id IS NOT NULL'
        || ' AND order_id IS NULL AND deposit_id IS NULL AND ad_id IS NULL AND rail_charge_id IS NULL))';
    END $$;

    CREATE FUNCTION paygate_payout_batch_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' OR (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('completed', 'cancelled')) THEN
        INSERT INTO webhook_events (type, user_id, payload)
        VALUES (CASE WHEN TG_OP = 'INSERT' THEN 'payout_batch.created' ELSE 'payout_batch.' || NEW.status END,
                NEW.user_id,
                jsonb_build_object(
                  'batch_id', NEW.id, 'status', NEW.status, 'item_count', NEW.item_count, 'currency', NEW.currency,
                  'total_amount_minor', NEW.total_amount_minor::text, 'total_fee_minor', NEW.total_fee_minor::text,
                  'at', NEW.updated_at));
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER payout_batches_outbox AFTER INSERT OR UPDATE ON payout_batches
      FOR EACH ROW EXECUTE FUNCTION paygate_payout_batch_outbox();
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TRIGGER IF EXISTS payout_batches_outbox ON payout_batches;
    DROP FUNCTION IF EXISTS paygate_payout_batch_outbox();
    ALTER TABLE ledger_transactions DROP CONSTRAINT IF EXISTS ledger_transactions_payout_batch_once;
    ALTER TABLE ledger_transactions DROP COLUMN IF EXISTS payout_batch_id;
    ALTER TABLE orders DROP COLUMN IF EXISTS payout_batch_id;
    DROP TABLE IF EXISTS payout_batch_items;
    DROP TABLE IF EXISTS payout_batches;
  `);
};
