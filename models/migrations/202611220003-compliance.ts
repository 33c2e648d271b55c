import type { Migration } from '../migrator';

/** The blocklist, screening hits, KYC records and their audit trail, and stored compliance reports. */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    -- Screening caches the blocklist in every process and asks "what changed since generation N?" before
    -- each screening. Every write takes the next generation under the lock on this one row, held until
    -- commit, so a change committed later always carries a higher generation than any already visible.
    CREATE TABLE blocklist_state (
      id integer PRIMARY KEY CHECK (id = 1),
      generation bigint NOT NULL DEFAULT 0,
      purges bigint NOT NULL DEFAULT 0
    );
    INSERT INTO blocklist_state (id) VALUES (1);

    CREATE TABLE blocklist_entries (
      id uuid PRIMARY KEY,
      type text NOT NULL
        CHECK (type IN ('name', 'email', 'phone', 'national_id', 'bank_account', 'crypto_address', 'country')),
      value text NOT NULL,
      match_key text NOT NULL,
      reason text NOT NULL,
      source text NOT NULL CHECK (source IN ('manual', 'ofac', 'un', 'eu')),
      external_ref text,
      created_by uuid REFERENCES users (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      generation bigint NOT NULL DEFAULT 0,
      CONSTRAINT blocklist_entries_once UNIQUE (type, match_key)
    );
    CREATE INDEX blocklist_entries_id_desc ON blocklist_entries (id DESC);
    CREATE INDEX blocklist_entries_type_id ON blocklist_entries (type, id DESC);
    CREATE INDEX blocklist_entries_generation ON blocklist_entries (generation);

    CREATE FUNCTION blocklist_next_generation() RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE gen bigint;
    BEGIN
      gen := nullif(current_setting('paygate.blocklist_generation', true), '')::bigint;
      IF gen IS NULL THEN
        UPDATE blocklist_state SET generation = generation + 1 WHERE id = 1 RETURNING generation INTO gen;
        PERFORM set_config('paygate.blocklist_generation', gen::text, true);
      END IF;
      RETURN gen;
    END $$;

    CREATE FUNCTION blocklist_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.generation := blocklist_next_generation();
      IF TG_OP = 'UPDATE' THEN NEW.updated_at := now(); END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER blocklist_entries_stamp BEFORE INSERT OR UPDATE ON blocklist_entries
      FOR EACH ROW EXECUTE FUNCTION blocklist_stamp();

    CREATE FUNCTION blocklist_purged() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM blocklist_next_generation();
      UPDATE blocklist_state SET purges = purges + 1 WHERE id = 1;
      RETURN NULL;
    END $$;
    CREATE TRIGGER blocklist_entries_purged AFTER DELETE OR TRUNCATE ON blocklist_entries
      FOR EACH STATEMENT EXECUTE FUNCTION blocklist_purged();

    CREATE TABLE screening_hits (
      id uuid PRIMARY KEY,
      context text NOT NULL CHECK (context IN ('registration', 'kyc', 'payment', 'ad')),
      user_id uuid REFERENCES users (id),
      order_id uuid REFERENCES orders (id),
      field text NOT NULL,
      screened_value text NOT NULL,
      entry_id uuid NOT NULL REFERENCES blocklist_entries (id),
      score numeric(5, 4) NOT NULL CHECK (score > 0 AND score <= 1),
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX screening_hits_created_at ON screening_hits (created_at);
    CREATE UNIQUE INDEX screening_hits_order ON screening_hits (order_id) WHERE order_id IS NOT NULL;

    -- A payment stopped by screening records the entry and score that stopped it.
    ALTER TABLE orders
      ADD COLUMN screening_entry_id uuid REFERENCES blocklist_entries (id),
      ADD COLUMN screening_score numeric(5, 4);
    -- Compliance reports select orders by period.
    CREATE INDEX orders_created_at ON orders (created_at);

    CREATE TABLE kyc_records (
      user_id uuid PRIMARY KEY REFERENCES users (id),
      id_type text NOT NULL CHECK (id_type IN ('national_id', 'passport', 'alien_id')),
      id_number text NOT NULL,
      date_of_birth date NOT NULL,
      kra_pin text,
      address text,
      submitted_at timestamptz NOT NULL,
      decided_at timestamptz,
      decided_by uuid REFERENCES users (id),
      reason text,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- One identity document, one account.
    CREATE UNIQUE INDEX kyc_records_document ON kyc_records (id_type, id_number);

    CREATE TABLE kyc_audit (
      id bigserial PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      actor_id uuid REFERENCES users (id),
      from_status text NOT NULL,
      to_status text NOT NULL,
      reason text,
      at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX kyc_audit_user ON kyc_audit (user_id, id);
    CREATE INDEX kyc_audit_at ON kyc_audit (at);

    CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the audit trail is append-only: % on % is not allowed', TG_OP, TG_TABLE_NAME;
    END $$;
    CREATE TRIGGER kyc_audit_append_only BEFORE UPDATE OR DELETE ON kyc_audit
      FOR EACH ROW EXECUTE FUNCTION audit_append_only();

    -- The KYC service writes its own audit rows (with actor and reason) and says so for its transaction;
    -- any other change of users.kyc_status (a console UPDATE, a script) is still recorded, by this trigger.
    CREATE FUNCTION users_kyc_status_audit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF coalesce(current_setting('paygate.kyc_audited', true), '') <> 'on' THEN
        INSERT INTO kyc_audit (user_id, actor_id, from_status, to_status, reason)
        VALUES (NEW.id, NULL, OLD.kyc_status, NEW.kyc_status, 'changed outside the KYC service');
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER users_kyc_status_audit AFTER UPDATE OF kyc_status ON users
      FOR EACH ROW WHEN (OLD.kyc_status IS DISTINCT FROM NEW.kyc_status) EXECUTE FUNCTION users_kyc_status_audit();

    -- A compliance report is kept per workflow run: the header, then one row per section.
    CREATE TABLE compliance_reports (
      id text PRIMARY KEY,
      workflow_id text NOT NULL,
      period_from timestamptz NOT NULL,
      period_to timestamptz NOT NULL,
      generated_at timestamptz NOT NULL,
      parameters jsonb NOT NULL,
      completed_at timestamptz
    );
    CREATE INDEX compliance_reports_period ON compliance_reports (period_from, period_to);
    CREATE TABLE compliance_report_sections (
      report_id text NOT NULL REFERENCES compliance_reports (id),
      section text NOT NULL,
      body jsonb NOT NULL,
      PRIMARY KEY (report_id, section)
    );

    -- Appeals by status for the report: nothing until the appeals table exists, then its counts.
    CREATE FUNCTION compliance_appeal_counts(period_from timestamptz, period_to timestamptz)
      RETURNS TABLE (status text, count bigint) LANGUAGE plpgsql STABLE AS $$
    BEGIN
      IF to_regclass('appeals') IS NULL THEN RETURN; END IF;
      RETURN QUERY EXECUTE
        'SELECT status::text, count(*) FROM appeals WHERE created_at >= $1 AND created_at < $2 GROUP BY status'
        USING period_from, period_to;
    END $$;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TABLE IF EXISTS compliance_report_sections, compliance_reports, kyc_audit, kyc_records, screening_hits CASCADE;
    DROP TRIGGER IF EXISTS users_kyc_status_audit ON users;
    DROP INDEX IF EXISTS orders_created_at;
    ALTER TABLE orders DROP COLUMN IF EXISTS screening_entry_id, DROP COLUMN IF EXISTS screening_score;
    DROP TABLE IF EXISTS blocklist_entries, blocklist_state CASCADE;
    DROP FUNCTION IF EXISTS compliance_appeal_counts, users_kyc_status_audit, audit_append_only, blocklist_purged, blocklist_stamp, blocklist_next_generation;
  `);
};
