import type { Migration } from '../migrator';

/**
 * What Paygate sent a rail, recorded before it is sent (docs/payments.md#unknown-outcomes): the reference the
 * rail will see (unique for ever, per rail), whether a request has left and what became of it, and when the
 * first one left. `rail_reference_serials` numbers the references of rails that take a number of our
 * choosing (Jenga's 12 digits). Jenga orders from before keep the reference they were sent with, so that no
 * new number can repeat one.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE SEQUENCE rail_reference_serials AS bigint MINVALUE 1 MAXVALUE 999999999999 NO CYCLE;
    ALTER TABLE orders
      ADD COLUMN rail_client_reference text,
      ADD COLUMN rail_submission text,
      ADD COLUMN rail_sent_at timestamptz;
    ALTER TABLE orders ADD CONSTRAINT orders_rail_submission_known
      CHECK (rail_submission IS NULL OR rail_submission IN ('sending', 'refused', 'accepted'));
    UPDATE orders SET rail_client_reference = rail_reference, rail_submission = 'accepted', rail_sent_at = created_at
     WHERE id IN (SELECT DISTINCT ON (rail_reference) id FROM orders
                   WHERE rail = 'jenga' AND rail_reference IS NOT NULL ORDER BY rail_reference, created_at);
    CREATE UNIQUE INDEX orders_rail_client_reference ON orders (rail, rail_client_reference) WHERE rail_client_reference IS NOT NULL;
    CREATE INDEX orders_unresolved ON orders (rail_sent_at, id) WHERE status = 'processing' AND rail_sent_at IS NOT NULL;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP INDEX IF EXISTS orders_unresolved;
    DROP INDEX IF EXISTS orders_rail_client_reference;
    ALTER TABLE orders DROP CONSTRAINT IF EXISTS orders_rail_submission_known;
    ALTER TABLE orders DROP COLUMN IF EXISTS rail_sent_at, DROP COLUMN IF EXISTS rail_submission, DROP COLUMN IF EXISTS rail_client_reference;
    DROP SEQUENCE IF EXISTS rail_reference_serials;
  `);
};
