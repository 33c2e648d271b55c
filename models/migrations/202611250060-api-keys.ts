import type { Migration } from '../migrator';

/**
 * API keys (docs/access.md#api-keys): long-lived, scoped, revocable secrets for merchant servers. The secret is shown once;
 * only its SHA-256 is kept. `prefix` (`sk_test_` or `sk_live_` and the first characters of the random part)
 * is what lists show and how a presented key is found; the hash is then compared in constant time.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      prefix text NOT NULL,
      secret_hash bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
      scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz,
      CONSTRAINT api_keys_prefix_unique UNIQUE (prefix)
    );
    CREATE INDEX api_keys_owner ON api_keys (user_id, id);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query('DROP TABLE IF EXISTS api_keys');
};
