import type { Migration } from '../migrator';

/**
 * A payer's 24-hour usage read through its own index whatever the statistics say (docs/payments.md#admission).
 *
 * `order_limit_usage` sums the payer's orders whose limits were checked, created in the last 24 hours. Its index
 * was `orders_user_limits (user_id, created_at) WHERE limits_checked_at IS NOT NULL`, but three other indexes
 * lead with `user_id` too. For a payer the statistics do not know yet (a new customer, or any customer since the
 * last `ANALYZE`), the planner expects one order from each of them, finds them all equally cheap and may take
 * `orders_user_id_id`, which reads every order of the payer and filters: thousands of rows for a payer paying
 * out one order after another, each time a payment is accepted or held.
 *
 * Now the index is on an expression that only this read names: the payer of an order whose limits were checked
 * (`CASE WHEN limits_checked_at IS NOT NULL THEN user_id END`), then `created_at`, over those orders alone. No
 * other index can answer that equality, so the read goes to the payer's checked orders of the last 24 hours and
 * no further, fresh statistics or not. What counts is unchanged.
 *
 * Taken back, the former index and function body are restored.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE INDEX orders_limit_usage ON orders ((CASE WHEN limits_checked_at IS NOT NULL THEN user_id END), created_at)
      WHERE limits_checked_at IS NOT NULL;
    DROP INDEX orders_user_limits;

    CREATE OR REPLACE FUNCTION order_limit_usage(p_user uuid, p_except uuid) RETURNS numeric
    LANGUAGE plpgsql STABLE AS $$
      BEGIN
        RETURN (SELECT coalesce(sum(o.kes_equivalent_minor), 0) FROM orders o
                 WHERE (CASE WHEN o.limits_checked_at IS NOT NULL THEN o.user_id END) = p_user
                   -- The index's own condition, written out so the planner may use it.
                   AND o.limits_checked_at IS NOT NULL AND o.id IS DISTINCT FROM p_except
                   AND o.status NOT IN ('rejected', 'failed') AND o.created_at > now() - interval '24 hours');
      END
    $$;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE OR REPLACE FUNCTION order_limit_usage(p_user uuid, p_except uuid) RETURNS numeric
    LANGUAGE plpgsql STABLE AS $$
      BEGIN
        RETURN (SELECT coalesce(sum(o.kes_equivalent_minor), 0) FROM orders o
                 WHERE o.user_id = p_user AND o.id IS DISTINCT FROM p_except AND o.limits_checked_at IS NOT NULL
                   AND o.status NOT IN ('rejected', 'failed') AND o.created_at > now() - interval '24 hours');
      END
    $$;

    CREATE INDEX orders_user_limits ON orders (user_id, created_at) WHERE limits_checked_at IS NOT NULL;
    DROP INDEX orders_limit_usage;
  `);
};
