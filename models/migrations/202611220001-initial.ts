import type { Migration } from '../migrator';

/** Users, orders and their events, the double-entry ledger, idempotency keys and the sandbox rail's own state. */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE users (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      password_hash text NOT NULL,
      full_name text NOT NULL,
      phone text,
      roles text[] NOT NULL DEFAULT ARRAY['user'],
      kyc_status text NOT NULL DEFAULT 'unverified'
        CHECK (kyc_status IN ('unverified', 'pending', 'verified', 'rejected')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT users_email_lower CHECK (email = lower(email)),
      CONSTRAINT users_roles_known CHECK (roles <@ ARRAY['user', 'compliance', 'admin'])
    );
    CREATE UNIQUE INDEX users_email_key ON users (email);

    CREATE TABLE orders (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      idempotency_key text NOT NULL,
      amount_minor numeric(38, 0) NOT NULL CHECK (amount_minor > 0),
      kes_equivalent_minor numeric(38, 0) NOT NULL CHECK (kes_equivalent_minor >= 0),
      currency text NOT NULL,
      method text NOT NULL CHECK (method IN ('bank_transfer', 'mobile_money', 'crypto', 'p2p')),
      destination jsonb NOT NULL,
      description text,
      reference text,
      status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'screening', 'processing', 'completed', 'rejected', 'failed', 'reversed')),
      failure_code text,
      failure_reason text,
      rail_reference text,
      workflow_id text NOT NULL,
      workflow_started_at timestamptz,
      limits_checked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT orders_user_idempotency_key UNIQUE (user_id, idempotency_key)
    );
    CREATE INDEX orders_user_id_id ON orders (user_id, id DESC);
    CREATE INDEX orders_id_desc ON orders (id DESC);
    CREATE INDEX orders_unstarted ON orders (created_at) WHERE workflow_started_at IS NULL;
    CREATE INDEX orders_user_limits ON orders (user_id, created_at) WHERE limits_checked_at IS NOT NULL;

    CREATE TABLE order_events (
      id bigserial PRIMARY KEY,
      order_id uuid NOT NULL REFERENCES orders (id),
      status text NOT NULL,
      detail text,
      at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT order_events_once UNIQUE (order_id, status)
    );

    CREATE TABLE ledger_transactions (
      id uuid PRIMARY KEY,
      order_id uuid NOT NULL REFERENCES orders (id),
      kind text NOT NULL CHECK (kind IN ('hold', 'release', 'settle', 'reverse')),
      currency text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT ledger_transactions_once UNIQUE (order_id, kind)
    );

    CREATE TABLE ledger_entries (
      id bigserial PRIMARY KEY,
      transaction_id uuid NOT NULL REFERENCES ledger_transactions (id),
      account text NOT NULL,
      currency text NOT NULL,
      direction text NOT NULL CHECK (direction IN ('debit', 'credit')),
      amount_minor numeric(38, 0) NOT NULL CHECK (amount_minor > 0),
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);
    CREATE INDEX ledger_entries_account ON ledger_entries (account, currency);

    -- The ledger is append-only: corrections are new, mirrored transactions.
    CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the ledger is append-only: % on % is not allowed', TG_OP, TG_TABLE_NAME;
    END $$;
    CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
      FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
    CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

    -- Every ledger transaction balances (debits = credits) when its database transaction commits.
    CREATE FUNCTION ledger_transaction_balances() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE imbalance numeric;
    BEGIN
      SELECT coalesce(sum(CASE direction WHEN 'debit' THEN amount_minor ELSE -amount_minor END), 0)
        INTO imbalance FROM ledger_entries WHERE transaction_id = NEW.transaction_id;
      IF imbalance <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % does not balance (debits - credits = %)', NEW.transaction_id, imbalance;
      END IF;
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_transaction_balances();

    CREATE TABLE idempotency_keys (
      scope text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      state text NOT NULL DEFAULT 'in_progress' CHECK (state IN ('in_progress', 'completed')),
      response_status integer,
      response_headers jsonb,
      response_body text,
      locked_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (scope, method, path, key)
    );
    CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

    -- State of the simulated outside world (the sandbox rails): what a real provider would hold.
    CREATE TABLE sandbox_transfers (
      id uuid PRIMARY KEY,
      idempotency_key text NOT NULL UNIQUE,
      method text NOT NULL,
      reference text NOT NULL UNIQUE,
      request jsonb NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
      failure_code text,
      provider_code text,
      sends_callback boolean NOT NULL,
      settles_at timestamptz NOT NULL,
      submissions integer NOT NULL DEFAULT 1,
      callback_sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TABLE IF EXISTS sandbox_transfers, idempotency_keys, ledger_entries, ledger_transactions,
      order_events, orders, users CASCADE;
    DROP FUNCTION IF EXISTS ledger_append_only, ledger_transaction_balances;
  `);
};
