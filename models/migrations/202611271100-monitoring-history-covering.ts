import type { Migration } from '../migrator';

/**
 * Monitoring's history counts (docs/monitoring.md#history-windows): the norm and dormant windows count a
 * customer's orders and deposits that were not refused or failed, about a hundred rows for an ordinary
 * customer, each on its own heap page. With the status and the id in the (customer, time) indexes those
 * counts are index-only scans.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE INDEX orders_user_created_status ON orders (user_id, created_at) INCLUDE (status, id);
    CREATE INDEX deposits_user_created_status ON deposits (user_id, created_at) INCLUDE (status, id) WHERE user_id IS NOT NULL;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP INDEX IF EXISTS deposits_user_created_status;
    DROP INDEX IF EXISTS orders_user_created_status;
  `);
};
