import type { Migration } from '../migrator';

/**
 * What a rail charged (docs/wallets.md#reconciliation-line-by-line): a charge line on a provider's own record
 * (a bank's transfer charge on its statement) is recorded once per (rail, provider reference) and posted
 * once, `expense:rail_fees → rail:<method>`, so that the rail's balance is explained by the ledger. The
 * posting's subject is the charge (`ledger_transactions.rail_charge_id`), as a deposit is a deposit posting's.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE rail_charges (
      id uuid PRIMARY KEY,
      rail text NOT NULL,
      method text NOT NULL CHECK (method IN ('bank_transfer', 'mobile_money', 'crypto')),
      provider_reference text NOT NULL CHECK (char_length(provider_reference) BETWEEN 1 AND 200),
      currency text NOT NULL,
      amount_minor numeric(38, 0) NOT NULL CHECK (amount_minor > 0),
      description text NOT NULL CHECK (char_length(description) <= 500),
      charged_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT rail_charges_once UNIQUE (rail, provider_reference)
    );
    CREATE TRIGGER rail_charges_append_only BEFORE UPDATE OR DELETE ON rail_charges
      FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

    ALTER TABLE ledger_transactions ADD COLUMN rail_charge_id uuid REFERENCES rail_charges (id);
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_rail_charge_once UNIQUE (rail_charge_id, kind);

    DO $$
    DECLARE
      def text;
    BEGIN
      SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
       WHERE conrelid = 'ledger_transactions'::regclass AND conname = 'ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check';
      EXECUTE 'ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check '
        || replace(def, 'ARRAY[', 'ARRAY[''rail_fee''::text, ');

      SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
       WHERE conrelid = 'ledger_transactions'::regclass AND conname = 'ledger_transactions_one_subject';
      EXECUTE 'ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_one_subject';
      EXECUTE 'ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_one_subject CHECK ((('
        || substr(def, length('CHECK ') + 1)
        || ') AND rail_charge_id IS NULL) OR (kind = ''rail_fee'' AND rail_charge_id IS NOT NULL'
        || ' AND order_id IS NULL AND deposit_id IS NULL AND ad_id IS NULL))';
    END $$;
  `);
};

/**
 * The exact reverse of `up`: the kind check without `rail_fee`, and the one-subject check as it was before
 * (202611250040-legacy-user-balances), restored before the column goes (dropping it would drop the check).
 */
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
        || replace(def, 'ARRAY[''rail_fee''::text, ', 'ARRAY[');
    END $$;
    ALTER TABLE ledger_transactions DROP CONSTRAINT IF EXISTS ledger_transactions_one_subject;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_one_subject
      CHECK ((num_nonnulls(order_id, deposit_id, ad_id) = 1)
             OR (kind = 'wallet_migration' AND order_id IS NULL AND deposit_id IS NULL));
    ALTER TABLE ledger_transactions DROP CONSTRAINT IF EXISTS ledger_transactions_rail_charge_once;
    ALTER TABLE ledger_transactions DROP COLUMN IF EXISTS rail_charge_id;
    DROP TABLE IF EXISTS rail_charges;
  `);
};
