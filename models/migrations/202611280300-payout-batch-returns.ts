import type { Migration } from '../migrator';

/**
 * A failed or rejected item of a bulk payout gives its share back to the wallet when its outcome is recorded
 * (docs/payments.md#bulk-payouts), not when the batch ends: one `batch_return` posting per item
 * (`hold:batch:<batch_id>` → `wallet:<user_id>:<currency>`, its amount and fee), its subject being the item's
 * order, so the database's once-per-(order, kind) index makes it at most once whatever retries or replays happen.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    DO $$
    DECLARE
      def text;
    BEGIN
      SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
       WHERE conrelid = 'ledger_transactions'::regclass AND conname = 'ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check '
        || replace(def, 'ARRAY[', 'ARRAY[''batch_return''::text, ');
    END $$;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DO $$
    DECLARE
      def text;
    BEGIN
      SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
       WHERE conrelid = 'ledger_transactions'::regclass AND conname = 'ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check '
        || replace(def, '''batch_return''::text, ', '');
    END $$;
  `);
};
