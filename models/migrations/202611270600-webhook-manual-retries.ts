import type { Migration } from '../migrator';

/**
 * A delivery is sent again on request at most WEBHOOK_MAX_MANUAL_RETRIES times (docs/events.md#webhooks):
 * each retry counts here, and the retry's conditional update refuses once the count reached the bound, so
 * that no number of requests at once turns an endpoint into a way of sending traffic at its host.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE webhook_deliveries
      ADD COLUMN manual_retries integer NOT NULL DEFAULT 0 CHECK (manual_retries >= 0);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS manual_retries;`);
};
