import type { Migration } from '../migrator';

/**
 * Money in (docs/wallets.md#money-in). Every user gets a `deposit_reference` to quote when paying in (M-Pesa paybill
 * `BillRefNumber`, a bank transfer's narrative): "PG" and ten Crockford base32 characters, at most 12 in
 * all as M-Pesa's account reference allows. `deposits` records each way in, unique per provider
 * transaction (`channel`, `provider_reference`), so the same M-Pesa `TransID`, bank reference or txid can
 * never be credited twice. Ledger postings are now made for a deposit as well as for an order (exactly
 * one of them), once per (deposit, kind): `deposit` (rail → wallet), `deposit_held` (rail → suspense,
 * a compliance hit or an unknown reference) and `deposit_released` (suspense → wallet).
 * An STK Push deposit (`mpesa_stk`) starts `pending` with the rail's request id in `rail_reference`, and its
 * `deposit` workflow completes or fails it. Each deposit's status change is also an event in the webhook
 * outbox, as an order's is.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE FUNCTION paygate_deposit_reference() RETURNS text LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
      bytes bytea := decode(replace(gen_random_uuid()::text, '-', ''), 'hex');
      ref text := 'PG';
    BEGIN
      FOR i IN 0..9 LOOP
        ref := ref || substr(alphabet, (get_byte(bytes, i) % 32) + 1, 1);
      END LOOP;
      RETURN ref;
    END $$;

    ALTER TABLE users ADD COLUMN deposit_reference text NOT NULL DEFAULT paygate_deposit_reference();
    ALTER TABLE users ADD CONSTRAINT users_deposit_reference_key UNIQUE (deposit_reference);

    CREATE TABLE deposits (
      id uuid PRIMARY KEY DEFAULT paygate_uuid_v7(),
      user_id uuid REFERENCES users (id),
      channel text NOT NULL CHECK (channel IN ('mpesa_stk', 'mpesa_c2b', 'bank_transfer', 'crypto')),
      rail text NOT NULL,
      currency text NOT NULL,
      amount_minor numeric(38, 0) NOT NULL CHECK (amount_minor > 0),
      status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed', 'held', 'unmatched')),
      provider_reference text,
      rail_reference text,
      quoted_reference text,
      payer_phone text,
      payer_name text,
      payer_address text,
      failure_code text,
      failure_reason text,
      assigned_by uuid REFERENCES users (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT deposits_once_per_provider_transaction UNIQUE (channel, provider_reference),
      -- Only money nobody can be credited with yet has no owner: an unknown reference, or a held payer's.
      CONSTRAINT deposits_owner CHECK (user_id IS NOT NULL OR status IN ('unmatched', 'held')),
      CONSTRAINT deposits_unmatched_unowned CHECK (status <> 'unmatched' OR user_id IS NULL)
    );
    CREATE INDEX deposits_user ON deposits (user_id, id);
    CREATE INDEX deposits_unmatched ON deposits (id) WHERE status = 'unmatched';

    ALTER TABLE ledger_transactions ALTER COLUMN order_id DROP NOT NULL;
    ALTER TABLE ledger_transactions ADD COLUMN deposit_id uuid REFERENCES deposits (id);
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_one_subject
      CHECK (num_nonnulls(order_id, deposit_id) = 1);
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_deposit_once UNIQUE (deposit_id, kind);
    ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check
      CHECK (kind IN ('hold', 'release', 'settle', 'reverse', 'escrow_lock', 'escrow_release', 'escrow_return',
                      'escrow_reverse', 'deposit', 'deposit_held', 'deposit_released'));

    ALTER TABLE screening_hits ADD COLUMN deposit_id uuid REFERENCES deposits (id);
    ALTER TABLE screening_hits DROP CONSTRAINT screening_hits_context_check;
    ALTER TABLE screening_hits ADD CONSTRAINT screening_hits_context_check
      CHECK (context IN ('registration', 'kyc', 'payment', 'ad', 'deposit'));

    ALTER TABLE webhook_events ALTER COLUMN order_id DROP NOT NULL;
    ALTER TABLE webhook_events ADD COLUMN deposit_id uuid;

    CREATE FUNCTION paygate_deposit_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.user_id IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status
                                      OR OLD.user_id IS DISTINCT FROM NEW.user_id) THEN
        INSERT INTO webhook_events (type, user_id, deposit_id, payload)
        VALUES ('deposit.status_changed', NEW.user_id, NEW.id,
                jsonb_build_object(
                  'deposit_id', NEW.id, 'status', NEW.status, 'channel', NEW.channel, 'currency', NEW.currency,
                  'amount_minor', NEW.amount_minor::text, 'at', NEW.updated_at,
                  'failure_code', NEW.failure_code, 'failure_reason', NEW.failure_reason));
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER deposits_outbox AFTER INSERT OR UPDATE ON deposits
      FOR EACH ROW EXECUTE FUNCTION paygate_deposit_outbox();
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TRIGGER IF EXISTS deposits_outbox ON deposits;
    DROP FUNCTION IF EXISTS paygate_deposit_outbox;
    DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM webhook_events WHERE deposit_id IS NOT NULL);
    DELETE FROM webhook_events WHERE deposit_id IS NOT NULL;
    ALTER TABLE webhook_events DROP COLUMN IF EXISTS deposit_id;
    ALTER TABLE webhook_events ALTER COLUMN order_id SET NOT NULL;
    DELETE FROM screening_hits WHERE context = 'deposit';
    ALTER TABLE screening_hits DROP CONSTRAINT screening_hits_context_check;
    ALTER TABLE screening_hits ADD CONSTRAINT screening_hits_context_check
      CHECK (context IN ('registration', 'kyc', 'payment', 'ad'));
    ALTER TABLE screening_hits DROP COLUMN IF EXISTS deposit_id;
    ALTER TABLE ledger_transactions DROP CONSTRAINT IF EXISTS ledger_transactions_deposit_once;
    ALTER TABLE ledger_transactions DROP CONSTRAINT IF EXISTS ledger_transactions_one_subject;
    ALTER TABLE ledger_transactions DROP COLUMN IF EXISTS deposit_id;
    ALTER TABLE ledger_transactions ALTER COLUMN order_id SET NOT NULL;
    DROP TABLE IF EXISTS deposits;
    ALTER TABLE users DROP CONSTRAINT IF EXISTS users_deposit_reference_key;
    ALTER TABLE users DROP COLUMN IF EXISTS deposit_reference;
    DROP FUNCTION IF EXISTS paygate_deposit_reference;
  `);
};
