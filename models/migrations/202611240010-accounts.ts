import type { Migration } from '../migrator';

/**
 * Balances the database guards (docs/wallets.md#balances-kept-by-the-database). `accounts` carries every ledger account's balance (credits −
 * debits, in minor units), kept by a trigger on `ledger_entries` in the same transaction as each entry:
 * no code path can post an entry without moving the balance, and each entry stores the balance it left
 * behind (`balance_after_minor`). A CHECK keeps the accounts that hold customers' money — `wallet:`,
 * `hold:`, `escrow:` and `suspense:` — at or above zero, so an overdraft is refused by Postgres under any
 * concurrency, not by code that reads and then writes. (The TigerBeetle rule: debits must not exceed
 * credits.)
 *
 * Existing entries are replayed in posting order to fill `balance_after_minor` and the balances: the
 * new column is derived data, so the append-only trigger is set aside for that one backfill.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE accounts (
      account text NOT NULL,
      currency text NOT NULL,
      balance_minor numeric(38, 0) NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account, currency),
      CONSTRAINT accounts_funds_never_negative
        CHECK (balance_minor >= 0 OR split_part(account, ':', 1) NOT IN ('wallet', 'hold', 'escrow', 'suspense'))
    );

    ALTER TABLE ledger_entries ADD COLUMN balance_after_minor numeric(38, 0);

    ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only;
    UPDATE ledger_entries e SET balance_after_minor = r.balance
      FROM (SELECT id, sum(CASE direction WHEN 'credit' THEN amount_minor ELSE -amount_minor END)
                         OVER (PARTITION BY account, currency ORDER BY id) AS balance
              FROM ledger_entries) r
     WHERE r.id = e.id;
    ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only;
    ALTER TABLE ledger_entries ALTER COLUMN balance_after_minor SET NOT NULL;

    INSERT INTO accounts (account, currency, balance_minor)
    SELECT account, currency, sum(CASE direction WHEN 'credit' THEN amount_minor ELSE -amount_minor END)
      FROM ledger_entries GROUP BY account, currency;

    -- Each entry moves its account's balance and records where it left it. The upsert takes the
    -- account's row lock (held to commit), so entries on one account apply one after another; the entry
    -- takes its id only then, so on every account ids follow the order the balances moved in.
    CREATE FUNCTION ledger_entry_apply() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      delta numeric := CASE NEW.direction WHEN 'credit' THEN NEW.amount_minor ELSE -NEW.amount_minor END;
    BEGIN
      UPDATE accounts SET balance_minor = balance_minor + delta, updated_at = now()
       WHERE account = NEW.account AND currency = NEW.currency
      RETURNING balance_minor INTO NEW.balance_after_minor;
      IF NOT FOUND THEN
        -- A new account opens at zero and then moves like any other (an upsert would check its CHECK
        -- against the proposed opening row, not the balance it ends with).
        INSERT INTO accounts (account, currency, balance_minor, updated_at) VALUES (NEW.account, NEW.currency, 0, now())
        ON CONFLICT (account, currency) DO NOTHING;
        UPDATE accounts SET balance_minor = balance_minor + delta, updated_at = now()
         WHERE account = NEW.account AND currency = NEW.currency
        RETURNING balance_minor INTO NEW.balance_after_minor;
      END IF;
      NEW.id := nextval('ledger_entries_id_seq');
      RETURN NEW;
    END $$;
    CREATE TRIGGER ledger_entries_apply BEFORE INSERT ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION ledger_entry_apply();

    -- A statement reads one account newest first.
    CREATE INDEX ledger_entries_statement ON ledger_entries (account, currency, id DESC);
    DROP INDEX ledger_entries_account;

    -- Balances are only ever moved by ledger entries.
    CREATE FUNCTION accounts_moved_by_entries_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF pg_trigger_depth() < 2 THEN
        RAISE EXCEPTION 'account balances move only through ledger entries: % on accounts is not allowed', TG_OP;
      END IF;
      RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
    END $$;
    CREATE TRIGGER accounts_guarded BEFORE INSERT OR UPDATE OR DELETE ON accounts
      FOR EACH ROW EXECUTE FUNCTION accounts_moved_by_entries_only();
    CREATE TRIGGER accounts_no_truncate BEFORE TRUNCATE ON accounts
      FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TRIGGER IF EXISTS ledger_entries_apply ON ledger_entries;
    DROP FUNCTION IF EXISTS ledger_entry_apply;
    CREATE INDEX IF NOT EXISTS ledger_entries_account ON ledger_entries (account, currency);
    DROP INDEX IF EXISTS ledger_entries_statement;
    ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only;
    ALTER TABLE ledger_entries DROP COLUMN IF EXISTS balance_after_minor;
    ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only;
    DROP TABLE IF EXISTS accounts;
    DROP FUNCTION IF EXISTS accounts_moved_by_entries_only;
  `);
};
