import type { Migration } from '../migrator';

/**
 * Webhook deliveries are taken a few per endpoint at a time. `leased_until`: a jobs process has the
 * delivery in hand (queued or being sent) until then; `next_attempt_at`: when its next attempt is due,
 * after the backoff of a failed one.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE webhook_deliveries
      ADD COLUMN leased_until timestamptz,
      ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now();
    CREATE INDEX webhook_deliveries_pending_by_endpoint ON webhook_deliveries (endpoint_id, id) WHERE status = 'pending';
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP INDEX IF EXISTS webhook_deliveries_pending_by_endpoint;
    ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS leased_until, DROP COLUMN IF EXISTS next_attempt_at;
  `);
};
