import type { Migration } from '../migrator';

/**
 * A paybill claim waiting for Daraja's Transaction Status is asked again, with back-off, until the rail
 * answers (docs/wallets.md#money-in-is-proven):
 * - `deposit_claims.status_queries`: how many status queries were sent (or tried) for the claim;
 * - `deposit_claims.next_status_query_at`: when a claim still `checking` is due to be asked again (empty: at
 *   once).
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE deposit_claims ADD COLUMN status_queries integer NOT NULL DEFAULT 0 CHECK (status_queries >= 0);
    ALTER TABLE deposit_claims ADD COLUMN next_status_query_at timestamptz;
    CREATE INDEX deposit_claims_due_status_query ON deposit_claims (next_status_query_at NULLS FIRST) WHERE status = 'checking';
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP INDEX IF EXISTS deposit_claims_due_status_query;
    ALTER TABLE deposit_claims DROP COLUMN IF EXISTS next_status_query_at;
    ALTER TABLE deposit_claims DROP COLUMN IF EXISTS status_queries;
  `);
};
