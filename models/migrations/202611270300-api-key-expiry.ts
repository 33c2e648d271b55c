import type { Migration } from '../migrator';

/**
 * An API key may be given an expiry when it is made (docs/access.md#api-keys): from then on it is refused like a
 * revoked key. The expiry is always after the key was made.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
    ALTER TABLE api_keys ADD CONSTRAINT api_keys_expires_after_creation CHECK (expires_at IS NULL OR expires_at > created_at);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query('ALTER TABLE api_keys DROP COLUMN IF EXISTS expires_at');
};
