import type { Migration } from '../migrator';

/**
 * Refunds that move money (docs/appeals.md#refunds): an approved appeal credits the payer's wallet from the rail account,
 * in full or in part. Each refund is a `refunds` row (one per approving appeal) and one `refund` ledger
 * posting for it. The order keeps the running total in `refunded_minor`, raised by a conditional UPDATE and
 * held by a CHECK at or below the amount paid: two refunds racing on one order can never add up to more.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE refunds (
      id uuid PRIMARY KEY,
      order_id uuid NOT NULL REFERENCES orders (id),
      appeal_id uuid NOT NULL REFERENCES appeals (id),
      amount_minor numeric(38, 0) NOT NULL CHECK (amount_minor > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT refunds_once_per_appeal UNIQUE (appeal_id)
    );
    CREATE INDEX refunds_order ON refunds (order_id, id);

    ALTER TABLE orders ADD COLUMN refunded_minor numeric(38, 0) NOT NULL DEFAULT 0;
    ALTER TABLE orders ADD CONSTRAINT orders_refunds_within_amount CHECK (refunded_minor >= 0 AND refunded_minor <= amount_minor);

    ALTER TABLE ledger_transactions ADD COLUMN refund_id uuid REFERENCES refunds (id);
    ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_once;
    CREATE UNIQUE INDEX ledger_transactions_once ON ledger_transactions (order_id, kind) WHERE refund_id IS NULL;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_refund_once UNIQUE (refund_id, kind);
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_refund_of_order
      CHECK (refund_id IS NULL OR order_id IS NOT NULL);

    DO $$
    DECLARE
      def text;
    BEGIN
      SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
       WHERE conrelid = 'ledger_transactions'::regclass AND conname = 'ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check '
        || replace(def, 'ARRAY[', 'ARRAY[''refund''::text, ');
    END $$;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE ledger_transactions DROP CONSTRAINT IF EXISTS ledger_transactions_refund_of_order;
    ALTER TABLE ledger_transactions DROP CONSTRAINT IF EXISTS ledger_transactions_refund_once;
    DROP INDEX IF EXISTS ledger_transactions_once;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_once UNIQUE (order_id, kind);
    ALTER TABLE ledger_transactions DROP COLUMN IF EXISTS refund_id;
    ALTER TABLE orders DROP CONSTRAINT IF EXISTS orders_refunds_within_amount;
    ALTER TABLE orders DROP COLUMN IF EXISTS refunded_minor;
    DROP TABLE IF EXISTS refunds;
  `);
};
