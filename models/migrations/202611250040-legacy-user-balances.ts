import type { Migration } from '../migrator';

/**
 * Carry the postings made before wallets existed into wallets (docs/wallets.md#balances-from-before-wallets). Until then a payment's hold
 * debited `user:<user_id>` with nothing behind it, and a P2P buyer's asset was credited there, where nobody
 * could read or spend it. Each such account is brought to zero by one `wallet_migration` transaction:
 *
 * - a positive balance (money the user was owed, such as a P2P buyer's asset) moves to the user's wallet,
 *   `wallet:<user_id>:<currency>`, where it is theirs to read and spend;
 * - a negative balance (payouts the operator's float paid for) is taken over by `operator:float`, which
 *   says how much of the operator's own money went out before customers' money came in. Float
 *   reconciliation shows it among "other" accounts.
 *
 * Nothing is rewritten: the old entries stay as they were and the carry-over is new, balanced entries.
 * `wallet_migration` transactions belong to no order and no deposit.
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
        || replace(def, 'ARRAY[', 'ARRAY[''wallet_migration''::text, ');

      SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
       WHERE conrelid = 'ledger_transactions'::regclass AND conname = 'ledger_transactions_one_subject';
      EXECUTE 'ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_one_subject';
      EXECUTE 'ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_one_subject CHECK (('
        || substr(def, length('CHECK ') + 1)
        || ') OR (kind = ''wallet_migration'' AND order_id IS NULL AND deposit_id IS NULL))';
    END $$;

    DO $$
    DECLARE
      r record;
      t uuid;
    BEGIN
      FOR r IN SELECT account, currency, balance_minor FROM accounts
                WHERE account LIKE 'user:%' AND balance_minor <> 0 ORDER BY account, currency LOOP
        t := gen_random_uuid();
        INSERT INTO ledger_transactions (id, kind, currency) VALUES (t, 'wallet_migration', r.currency);
        IF r.balance_minor > 0 THEN
          INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor) VALUES
            (t, r.account, r.currency, 'debit', r.balance_minor),
            (t, 'wallet:' || substr(r.account, length('user:') + 1) || ':' || r.currency, r.currency, 'credit', r.balance_minor);
        ELSE
          INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor) VALUES
            (t, 'operator:float', r.currency, 'debit', -r.balance_minor),
            (t, r.account, r.currency, 'credit', -r.balance_minor);
        END IF;
      END LOOP;
    END $$;
  `);
};

/** The carry-over is money moved in an append-only ledger: it is not taken back. */
export const down: Migration = () =>
  Promise.reject(new Error('202611250040-legacy-user-balances moved balances in the append-only ledger and cannot be reverted'));
