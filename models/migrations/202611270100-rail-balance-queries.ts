import type { Migration } from '../migrator';

/**
 * A rail's balance asked of it when it answers later (M-Pesa's Account Balance,
 * docs/wallets.md#float-reconciliation): the query Paygate sent, with the ids its answer is taken with,
 * and the answer once it came (the balance in minor units, and each account as the rail listed it).
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE rail_balance_queries (
      id uuid PRIMARY KEY,
      rail text NOT NULL,
      method text NOT NULL CHECK (method IN ('bank_transfer', 'mobile_money', 'crypto')),
      conversation_id text NOT NULL,
      originator_conversation_id text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'answered', 'failed')),
      currency text,
      balance_minor numeric(38, 0),
      accounts jsonb,
      reason text CHECK (char_length(reason) <= 500),
      requested_at timestamptz NOT NULL DEFAULT now(),
      answered_at timestamptz,
      CONSTRAINT rail_balance_queries_answer CHECK (
        (status = 'answered') = (balance_minor IS NOT NULL AND currency IS NOT NULL)
        AND (status = 'pending') = (answered_at IS NULL)
      )
    );
    CREATE INDEX rail_balance_queries_latest ON rail_balance_queries (rail, method, status, answered_at DESC);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`DROP TABLE IF EXISTS rail_balance_queries;`);
};
