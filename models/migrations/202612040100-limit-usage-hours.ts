import type { Migration } from '../migrator';

/**
 * A payer's 24-hour usage read from hourly sums, not from every order of the day (docs/payments.md#admission).
 *
 * `order_limit_usage` summed the payer's counted orders (limits checked, not rejected or failed) created in the
 * last 24 hours, one row at a time: a business paying out 10,000 times a day read up to 10,000 orders for each
 * hold and each acceptance, so a day of payouts cost the square of its length.
 *
 * Now `order_limit_usage_hours` keeps, for each payer and UTC hour of creation, the sum of its counted orders,
 * moved by a trigger on `orders` in the same transaction as the order: an order counts as its limits are checked,
 * and stops counting when it is rejected or failed (or moved, or deleted). The read adds the whole hours of the
 * window from these sums and reads orders only for the hour the window starts in, so it reads at most 24 hours'
 * sums and one hour of orders, however busy the payer. What counts, and the answer, are unchanged.
 *
 * An hour is one or more rows, its slots; its sum is theirs. A change is made on the first slot of the hour that no
 * other transaction holds (`FOR UPDATE SKIP LOCKED`), or on a new one, so one order's change never waits on
 * another's transaction (a hold and a refund of one payer in one hour lock no row in an order that could
 * deadlock). A slot may go below zero; only the hour's sum means anything.
 *
 * Existing orders are summed into slot 0 of their hours, under a lock that keeps orders from changing meanwhile.
 * Taken back, the sums, their trigger and their function go, and the usage is read from the orders as before.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE order_limit_usage_hours (
      user_id uuid NOT NULL,
      hour timestamptz NOT NULL,
      slot integer NOT NULL,
      used_minor numeric(38, 0) NOT NULL,
      PRIMARY KEY (user_id, hour, slot) INCLUDE (used_minor)
    );

    CREATE FUNCTION order_limit_usage_count(p_user uuid, p_created timestamptz, p_delta numeric) RETURNS void
      LANGUAGE plpgsql AS $$
        DECLARE
          v_hour timestamptz := date_trunc('hour', p_created, 'UTC');
          v_slot integer;
          v_new integer := pg_backend_pid();
        BEGIN
          LOOP
            SELECT slot INTO v_slot FROM order_limit_usage_hours
             WHERE user_id = p_user AND hour = v_hour ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED;
            IF FOUND THEN
              UPDATE order_limit_usage_hours SET used_minor = used_minor + p_delta
               WHERE user_id = p_user AND hour = v_hour AND slot = v_slot;
              RETURN;
            END IF;
            -- Every slot of the hour is held by another transaction, or it has none yet: a new one. A number some
            -- other transaction took meanwhile is left to it, and the next try takes one of chance.
            INSERT INTO order_limit_usage_hours (user_id, hour, slot, used_minor) VALUES (p_user, v_hour, v_new, p_delta)
            ON CONFLICT (user_id, hour, slot) DO NOTHING;
            IF FOUND THEN RETURN; END IF;
            v_new := floor(random() * 2147483647)::integer;
          END LOOP;
        END
      $$;

    -- An order counts while its limits are checked and it is neither rejected nor failed.
    CREATE FUNCTION order_limit_usage_moved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          IF OLD.limits_checked_at IS NOT NULL AND OLD.status NOT IN ('rejected', 'failed') THEN
            PERFORM order_limit_usage_count(OLD.user_id, OLD.created_at, -OLD.kes_equivalent_minor);
          END IF;
        END IF;
        IF TG_OP <> 'DELETE' THEN
          IF NEW.limits_checked_at IS NOT NULL AND NEW.status NOT IN ('rejected', 'failed') THEN
            PERFORM order_limit_usage_count(NEW.user_id, NEW.created_at, NEW.kes_equivalent_minor);
          END IF;
        END IF;
        RETURN NULL;
      END
    $$;

    LOCK TABLE orders IN SHARE ROW EXCLUSIVE MODE;
    CREATE TRIGGER orders_limit_usage_inserted AFTER INSERT ON orders FOR EACH ROW
      WHEN (NEW.limits_checked_at IS NOT NULL AND NEW.status NOT IN ('rejected', 'failed'))
      EXECUTE FUNCTION order_limit_usage_moved();
    CREATE TRIGGER orders_limit_usage_updated AFTER UPDATE ON orders FOR EACH ROW
      WHEN ((OLD.limits_checked_at IS NOT NULL AND OLD.status NOT IN ('rejected', 'failed'))
              IS DISTINCT FROM (NEW.limits_checked_at IS NOT NULL AND NEW.status NOT IN ('rejected', 'failed'))
            OR (NEW.limits_checked_at IS NOT NULL AND NEW.status NOT IN ('rejected', 'failed')
                AND (OLD.user_id, OLD.created_at, OLD.kes_equivalent_minor)
                    IS DISTINCT FROM (NEW.user_id, NEW.created_at, NEW.kes_equivalent_minor)))
      EXECUTE FUNCTION order_limit_usage_moved();
    CREATE TRIGGER orders_limit_usage_deleted AFTER DELETE ON orders FOR EACH ROW
      WHEN (OLD.limits_checked_at IS NOT NULL AND OLD.status NOT IN ('rejected', 'failed'))
      EXECUTE FUNCTION order_limit_usage_moved();

    INSERT INTO order_limit_usage_hours (user_id, hour, slot, used_minor)
    SELECT user_id, date_trunc('hour', created_at, 'UTC'), 0, sum(kes_equivalent_minor)
      FROM orders WHERE limits_checked_at IS NOT NULL AND status NOT IN ('rejected', 'failed')
     GROUP BY 1, 2;

    -- The hour the window starts in is read from its orders (through orders_limit_usage); the whole hours after
    -- it from their sums, less the excepted order where it is in one of them.
    CREATE OR REPLACE FUNCTION order_limit_usage(p_user uuid, p_except uuid) RETURNS numeric
    LANGUAGE plpgsql STABLE AS $$
      DECLARE
        v_since timestamptz := now() - interval '24 hours';
        v_whole timestamptz := date_trunc('hour', now() - interval '24 hours', 'UTC') + interval '1 hour';
      BEGIN
        RETURN (SELECT coalesce(sum(o.kes_equivalent_minor), 0) FROM orders o
                 WHERE (CASE WHEN o.limits_checked_at IS NOT NULL THEN o.user_id END) = p_user
                   -- The index's own condition, written out so the planner may use it.
                   AND o.limits_checked_at IS NOT NULL AND o.id IS DISTINCT FROM p_except
                   AND o.status NOT IN ('rejected', 'failed') AND o.created_at > v_since AND o.created_at < v_whole)
             + (SELECT coalesce(sum(h.used_minor), 0) FROM order_limit_usage_hours h
                 WHERE h.user_id = p_user AND h.hour >= v_whole)
             - coalesce((SELECT o.kes_equivalent_minor FROM orders o
                          WHERE o.id = p_except AND o.user_id = p_user AND o.limits_checked_at IS NOT NULL
                            AND o.status NOT IN ('rejected', 'failed') AND o.created_at >= v_whole), 0);
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
                 WHERE (CASE WHEN o.limits_checked_at IS NOT NULL THEN o.user_id END) = p_user
                   -- The index's own condition, written out so the planner may use it.
                   AND o.limits_checked_at IS NOT NULL AND o.id IS DISTINCT FROM p_except
                   AND o.status NOT IN ('rejected', 'failed') AND o.created_at > now() - interval '24 hours');
      END
    $$;
    DROP TRIGGER IF EXISTS orders_limit_usage_inserted ON orders;
    DROP TRIGGER IF EXISTS orders_limit_usage_updated ON orders;
    DROP TRIGGER IF EXISTS orders_limit_usage_deleted ON orders;
    DROP FUNCTION IF EXISTS order_limit_usage_moved();
    DROP FUNCTION IF EXISTS order_limit_usage_count(uuid, timestamptz, numeric);
    DROP TABLE IF EXISTS order_limit_usage_hours;
  `);
};
