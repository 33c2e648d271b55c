import type { Migration } from '../migrator';

/**
 * The rail an order was submitted on (`sandbox`, `jenga`, `daraja`, `ccxt`), so a provider callback is taken
 * only for orders of the rail that sends it; results that arrive after an order closed, kept for operators;
 * and the ids of the M-Pesa Transaction Status queries, so their results are tied to a query Paygate sent.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE orders ADD COLUMN rail text;
    -- Orders already submitted: the rail that holds their request.
    UPDATE orders o SET rail = r.rail
      FROM (SELECT DISTINCT ON (order_id) order_id, rail FROM rail_requests ORDER BY order_id, created_at) r
     WHERE o.id = r.order_id;
    UPDATE orders o SET rail = 'sandbox'
     WHERE o.rail IS NULL AND EXISTS (SELECT 1 FROM sandbox_transfers s WHERE s.idempotency_key = o.id::text);

    CREATE TABLE late_rail_results (
      id bigserial PRIMARY KEY,
      order_id uuid NOT NULL,
      rail text NOT NULL,
      order_status text NOT NULL,
      outcome jsonb NOT NULL,
      verdict text NOT NULL CHECK (verdict IN ('agrees', 'contradicts', 'unsettled')),
      received_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX late_rail_results_order ON late_rail_results (order_id);

    CREATE TABLE rail_status_queries (
      rail text NOT NULL,
      order_id uuid NOT NULL,
      conversation_id text NOT NULL,
      originator_conversation_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (rail, conversation_id)
    );
    CREATE INDEX rail_status_queries_order ON rail_status_queries (order_id);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TABLE IF EXISTS rail_status_queries, late_rail_results;
    ALTER TABLE orders DROP COLUMN IF EXISTS rail;
  `);
};
