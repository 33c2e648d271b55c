import type { Migration } from '../migrator';

/**
 * Money in is proven before it is credited (docs/wallets.md#money-in-is-proven).
 * - `c2b_url_tokens`: the secret in the paybill's URLs, a new one per C2B registration (its hash only). A
 *   token stands while it is the newest, and for a grace period after a newer one was registered.
 * - `deposit_claims`: what a rail said arrived that Paygate has not (yet) credited as a deposit: every C2B
 *   confirmation (refused for its address or token, waiting for Daraja's Transaction Status, not confirmed by
 *   it, or credited), an STK Push payment that names no request Paygate recorded, and a bank-statement credit
 *   matched to one of Paygate's own payouts (its return). Each is kept once per (channel, provider reference,
 *   amount, account): a refused confirmation is kept every time, since anybody can send one.
 * - `deposits.provider_output`: a deposit is unique per (channel, provider reference, output), so each output
 *   of a batched crypto transaction counts once; every other channel leaves it empty.
 * - Deposit status `float`: the operator's own top-up of the primary bank account, posted to
 *   `operator:float` and owned by nobody.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE c2b_url_tokens (
      id bigserial PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      registered_at timestamptz
    );

    CREATE TABLE deposit_claims (
      id uuid PRIMARY KEY DEFAULT paygate_uuid_v7(),
      channel text NOT NULL CHECK (channel IN ('mpesa_c2b', 'mpesa_stk', 'bank_transfer')),
      status text NOT NULL CHECK (status IN ('rejected', 'checking', 'unconfirmed', 'credited', 'returned')),
      reason text,
      provider_reference text,
      currency text NOT NULL DEFAULT 'KES',
      amount_minor numeric(38, 0) CHECK (amount_minor > 0),
      account_reference text NOT NULL DEFAULT '',
      payer_phone text,
      payer_name text,
      source_address text,
      body jsonb NOT NULL DEFAULT '{}',
      status_conversation_id text,
      status_originator_conversation_id text,
      deposit_id uuid REFERENCES deposits (id),
      order_id uuid REFERENCES orders (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT deposit_claims_readable CHECK (status = 'rejected' OR (provider_reference IS NOT NULL AND amount_minor IS NOT NULL)),
      CONSTRAINT deposit_claims_credited CHECK ((status = 'credited') = (deposit_id IS NOT NULL))
    );
    CREATE UNIQUE INDEX deposit_claims_once ON deposit_claims (channel, provider_reference, amount_minor, account_reference)
      WHERE status <> 'rejected';
    CREATE INDEX deposit_claims_open ON deposit_claims (id) WHERE status IN ('rejected', 'checking', 'unconfirmed');

    ALTER TABLE deposits ADD COLUMN provider_output text NOT NULL DEFAULT '';
    ALTER TABLE deposits DROP CONSTRAINT deposits_once_per_provider_transaction;
    ALTER TABLE deposits ADD CONSTRAINT deposits_once_per_provider_output UNIQUE (channel, provider_reference, provider_output);
    ALTER TABLE deposits DROP CONSTRAINT deposits_status_check;
    ALTER TABLE deposits ADD CONSTRAINT deposits_status_check
      CHECK (status IN ('pending', 'completed', 'failed', 'held', 'unmatched', 'float'));
    ALTER TABLE deposits DROP CONSTRAINT deposits_owner;
    ALTER TABLE deposits ADD CONSTRAINT deposits_owner CHECK (user_id IS NOT NULL OR status IN ('unmatched', 'held', 'float'));
    ALTER TABLE deposits ADD CONSTRAINT deposits_float_unowned CHECK (status <> 'float' OR user_id IS NULL);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE deposits DROP CONSTRAINT IF EXISTS deposits_float_unowned;
    ALTER TABLE deposits DROP CONSTRAINT deposits_owner;
    ALTER TABLE deposits ADD CONSTRAINT deposits_owner CHECK (user_id IS NOT NULL OR status IN ('unmatched', 'held'));
    ALTER TABLE deposits DROP CONSTRAINT deposits_status_check;
    ALTER TABLE deposits ADD CONSTRAINT deposits_status_check
      CHECK (status IN ('pending', 'completed', 'failed', 'held', 'unmatched'));
    ALTER TABLE deposits DROP CONSTRAINT deposits_once_per_provider_output;
    ALTER TABLE deposits ADD CONSTRAINT deposits_once_per_provider_transaction UNIQUE (channel, provider_reference);
    ALTER TABLE deposits DROP COLUMN provider_output;
    DROP TABLE IF EXISTS deposit_claims;
    DROP TABLE IF EXISTS c2b_url_tokens;
  `);
};
