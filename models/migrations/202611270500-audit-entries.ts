import type { Migration } from '../migrator';

/**
 * The audit trail of staff actions (README, "Audit trail"; docs/compliance.md#audit-trail): one row per
 * action, written in the action's own transaction, saying who (the account, its roles, the credential it
 * used), when, what (the action and its subject) and the subject's relevant fields before and after.
 *
 * Append-only, enforced here: UPDATE and DELETE are refused row by row, TRUNCATE by a statement trigger
 * (the same `audit_append_only()` that guards the KYC audit trail). Entries are kept 7 years (POCAMLA); a
 * purge of older ones would be a deliberate, reviewed migration that lifts the triggers for that statement.
 * No foreign key to users: an entry outlives the account it names.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE audit_entries (
      id uuid PRIMARY KEY,
      occurred_at timestamptz NOT NULL DEFAULT now(),
      actor_id uuid,
      actor_roles text[] NOT NULL DEFAULT '{}',
      credential_kind text NOT NULL CHECK (credential_kind IN ('login', 'api_key', 'operator')),
      credential_id text CHECK (char_length(credential_id) BETWEEN 1 AND 200),
      action text NOT NULL CHECK (action ~ '^[a-z][a-z_]{0,40}\\.[a-z][a-z_]{0,40}$'),
      subject_type text NOT NULL CHECK (subject_type ~ '^[a-z][a-z_]{0,62}$'),
      subject_id text NOT NULL CHECK (char_length(subject_id) BETWEEN 1 AND 200),
      before jsonb,
      after jsonb,
      request_id text CHECK (char_length(request_id) BETWEEN 1 AND 128),
      CONSTRAINT audit_entries_actor CHECK ((credential_kind = 'operator') = (actor_id IS NULL))
    );
    CREATE INDEX audit_entries_by_actor ON audit_entries (actor_id, id);
    CREATE INDEX audit_entries_by_action ON audit_entries (action, id);
    CREATE INDEX audit_entries_by_subject ON audit_entries (subject_type, subject_id, id);
    CREATE INDEX audit_entries_by_time ON audit_entries (occurred_at);

    CREATE TRIGGER audit_entries_append_only BEFORE UPDATE OR DELETE ON audit_entries
      FOR EACH ROW EXECUTE FUNCTION audit_append_only();
    CREATE TRIGGER audit_entries_no_truncate BEFORE TRUNCATE ON audit_entries
      FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query('DROP TABLE IF EXISTS audit_entries');
};
