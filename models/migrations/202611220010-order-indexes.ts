import type { Migration } from '../migrator';

/** Indexes for the hot paths: the 24-hour limit sum at initiation, and rail references. */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE INDEX orders_user_created ON orders (user_id, created_at);
    CREATE INDEX orders_rail_reference ON orders (rail_reference) WHERE rail_reference IS NOT NULL;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query('DROP INDEX IF EXISTS orders_user_created, orders_rail_reference');
};
