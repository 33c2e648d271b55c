import type { Migration } from '../migrator';

/**
 * An order whose rail gave no definite answer by the settle deadline stays `processing` (the money may
 * still arrive) and is flagged overdue: `overdue_at` records when, and `paygate_payments_overdue` counts them.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE orders ADD COLUMN overdue_at timestamptz;
    CREATE INDEX orders_overdue ON orders (overdue_at) WHERE overdue_at IS NOT NULL AND status = 'processing';
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP INDEX IF EXISTS orders_overdue;
    ALTER TABLE orders DROP COLUMN IF EXISTS overdue_at;
  `);
};
