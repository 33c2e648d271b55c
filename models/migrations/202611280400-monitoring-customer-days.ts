import type { Migration } from '../migrator';

/**
 * Monitoring's history, kept incrementally (docs/monitoring.md#history-windows): per customer and UTC day, the
 * number of movements the norm and dormant windows count (orders not `rejected` or `failed`, deposits not
 * `failed`). The database keeps it: a trigger on `orders` and one on `deposits` move a row's count from its old
 * (customer, day) to its new one whenever a row is inserted, deleted, or changes status, owner or time, in the
 * same transaction as the change, so every path that records a movement keeps it without knowing of it.
 * Existing rows are counted here.
 *
 * `monitoring_history(...)` reads every history window of one evaluation in one statement: the recent window
 * and the partial days at the windows' edges from `orders` and `deposits` by (customer, time), the whole days
 * in between from this table. It is a function so that its plan is prepared once per connection and reused.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE monitoring_customer_days (
      customer_id uuid NOT NULL,
      day date NOT NULL,
      movements integer NOT NULL CHECK (movements >= 0),
      -- The count is in the index, so that a window's whole days are an index-only read.
      PRIMARY KEY (customer_id, day) INCLUDE (movements)
    );

    -- One more (delta 1) or one fewer (-1) movement on the customer's day. A decrement only updates: an insert's
    -- row is checked (movements >= 0) before its conflict is.
    CREATE FUNCTION monitoring_customer_days_count(customer uuid, at timestamptz, delta integer) RETURNS void
      LANGUAGE plpgsql AS $$
        BEGIN
          IF delta > 0 THEN
            INSERT INTO monitoring_customer_days AS d (customer_id, day, movements)
            VALUES (customer, (at AT TIME ZONE 'UTC')::date, delta)
            ON CONFLICT (customer_id, day) DO UPDATE SET movements = d.movements + EXCLUDED.movements;
          ELSE
            UPDATE monitoring_customer_days SET movements = movements + delta
             WHERE customer_id = customer AND day = (at AT TIME ZONE 'UTC')::date;
          END IF;
        END
      $$;

    CREATE FUNCTION monitoring_orders_counted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status NOT IN ('rejected', 'failed') THEN
          PERFORM monitoring_customer_days_count(OLD.user_id, OLD.created_at, -1);
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status NOT IN ('rejected', 'failed') THEN
          PERFORM monitoring_customer_days_count(NEW.user_id, NEW.created_at, 1);
        END IF;
        RETURN NULL;
      END
    $$;
    CREATE TRIGGER orders_monitoring_counted AFTER INSERT OR DELETE ON orders
      FOR EACH ROW EXECUTE FUNCTION monitoring_orders_counted();
    -- Only a change that moves the row between days, owners or counted and not counted: a payment's own steps
    -- (pending, processing, completed) leave its day's row untouched, so they never wait on its lock.
    CREATE TRIGGER orders_monitoring_recounted AFTER UPDATE OF status, user_id, created_at ON orders
      FOR EACH ROW WHEN ((OLD.status IN ('rejected', 'failed')) IS DISTINCT FROM (NEW.status IN ('rejected', 'failed'))
                         OR OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.created_at IS DISTINCT FROM NEW.created_at)
      EXECUTE FUNCTION monitoring_orders_counted();

    CREATE FUNCTION monitoring_deposits_counted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.user_id IS NOT NULL AND OLD.status <> 'failed' THEN
          PERFORM monitoring_customer_days_count(OLD.user_id, OLD.created_at, -1);
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.user_id IS NOT NULL AND NEW.status <> 'failed' THEN
          PERFORM monitoring_customer_days_count(NEW.user_id, NEW.created_at, 1);
        END IF;
        RETURN NULL;
      END
    $$;
    CREATE TRIGGER deposits_monitoring_counted AFTER INSERT OR DELETE ON deposits
      FOR EACH ROW EXECUTE FUNCTION monitoring_deposits_counted();
    CREATE TRIGGER deposits_monitoring_recounted AFTER UPDATE OF status, user_id, created_at ON deposits
      FOR EACH ROW WHEN ((OLD.status = 'failed') IS DISTINCT FROM (NEW.status = 'failed')
                         OR OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.created_at IS DISTINCT FROM NEW.created_at)
      EXECUTE FUNCTION monitoring_deposits_counted();
    -- A truncated source leaves nothing to count.
    CREATE FUNCTION monitoring_customer_days_cleared() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        TRUNCATE monitoring_customer_days;
        INSERT INTO monitoring_customer_days (customer_id, day, movements)
        SELECT customer_id, day, count(*)::int FROM (
          SELECT user_id AS customer_id, (created_at AT TIME ZONE 'UTC')::date AS day FROM orders
           WHERE status NOT IN ('rejected', 'failed')
          UNION ALL
          SELECT user_id, (created_at AT TIME ZONE 'UTC')::date FROM deposits
           WHERE user_id IS NOT NULL AND status <> 'failed') m
        GROUP BY customer_id, day;
        RETURN NULL;
      END
    $$;
    CREATE TRIGGER orders_monitoring_cleared AFTER TRUNCATE ON orders
      FOR EACH STATEMENT EXECUTE FUNCTION monitoring_customer_days_cleared();
    CREATE TRIGGER deposits_monitoring_cleared AFTER TRUNCATE ON deposits
      FOR EACH STATEMENT EXECUTE FUNCTION monitoring_customer_days_cleared();

    CREATE FUNCTION monitoring_history(
      p_customer uuid, p_movement text, p_movement_uuid uuid, p_kind text, p_counterparty text, p_counterparty_json text,
      p_at timestamptz, p_recent_from timestamptz, p_near_from timestamptz, p_norm_high_from timestamptz,
      p_dormant_high_from timestamptz, p_norm_low_from timestamptz, p_norm_low_to timestamptz,
      p_dormant_low_from timestamptz, p_dormant_low_to timestamptz, p_norm_days_from date, p_norm_days_to date,
      p_dormant_days_from date, p_dormant_days_to date,
      p_floor numeric, p_threshold numeric, p_round_min numeric, p_round_unit numeric)
    RETURNS TABLE (
      kyc_verified boolean, account_opened_at timestamptz, out_count integer, out_sum text, in_count integer, in_sum text,
      just_below_count integer, just_below_sum text, round_count integer, distinct_payers integer, distinct_payees integer,
      counterparty_seen boolean, pair_bought integer, pair_sold integer, norm_count integer, dormant_count integer)
    LANGUAGE plpgsql STABLE AS $$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        SELECT u.kyc_status = 'verified', u.created_at,
          o.recent_count, o.recent_sum::text, i.recent_count, i.recent_sum::text,
          o.below_count + i.below_count, (o.below_sum + i.below_sum)::text, o.round_count + i.round_count,
          i.distinct_parties, o.distinct_parties,
          CASE p_kind WHEN 'deposit' THEN i.seen WHEN 'payout' THEN o.seen ELSE false END,
          CASE WHEN p_kind = 'p2p_trade' THEN
            (SELECT count(*)::int FROM p2p_trades t WHERE t.buyer_id = p_customer AND t.seller_id::text = p_counterparty
                AND t.created_at >= p_recent_from AND t.created_at < p_at AND t.order_id::text <> p_movement) ELSE 0 END,
          CASE WHEN p_kind = 'p2p_trade' THEN
            (SELECT count(*)::int FROM p2p_trades t WHERE t.seller_id = p_customer AND t.buyer_id::text = p_counterparty
                AND t.created_at >= p_recent_from AND t.created_at < p_at AND t.order_id::text <> p_movement) ELSE 0 END,
          o.norm_high + i.norm_high + e.norm_low + days.norm,
          o.dormant_high + i.dormant_high + e.dormant_low + days.dormant - own.counted
        FROM users u,
        LATERAL (
          SELECT count(*) FILTER (WHERE r.recent)::int AS recent_count,
                 coalesce(sum(r.amount) FILTER (WHERE r.recent), 0) AS recent_sum,
                 count(*) FILTER (WHERE r.recent AND r.amount >= p_floor AND r.amount < p_threshold)::int AS below_count,
                 coalesce(sum(r.amount) FILTER (WHERE r.recent AND r.amount >= p_floor AND r.amount < p_threshold), 0) AS below_sum,
                 count(*) FILTER (WHERE r.recent AND r.amount >= p_round_min AND mod(r.amount, p_round_unit) = 0)::int AS round_count,
                 count(DISTINCT r.destination) FILTER (WHERE r.recent)::int AS distinct_parties,
                 coalesce(bool_or(r.destination::text = (CAST(p_counterparty_json AS jsonb))::text) FILTER (WHERE r.recent), false) AS seen,
                 count(*) FILTER (WHERE r.created_at >= p_norm_high_from AND r.created_at < p_recent_from)::int AS norm_high,
                 count(*) FILTER (WHERE r.created_at >= p_dormant_high_from AND r.id::text <> p_movement)::int AS dormant_high
            FROM (SELECT x.kes_equivalent_minor AS amount, x.destination, x.created_at, x.id,
                         x.created_at >= p_recent_from AND x.id::text <> p_movement AS recent
                    FROM orders x
                   WHERE x.user_id = p_customer AND x.created_at >= p_near_from AND x.created_at < p_at
                     AND x.status NOT IN ('rejected', 'failed')) r) o,
        LATERAL (
          SELECT count(*) FILTER (WHERE r.recent)::int AS recent_count,
                 coalesce(sum(r.amount) FILTER (WHERE r.recent), 0) AS recent_sum,
                 count(*) FILTER (WHERE r.recent AND r.amount >= p_floor AND r.amount < p_threshold)::int AS below_count,
                 coalesce(sum(r.amount) FILTER (WHERE r.recent AND r.amount >= p_floor AND r.amount < p_threshold), 0) AS below_sum,
                 count(*) FILTER (WHERE r.recent AND r.amount >= p_round_min AND mod(r.amount, p_round_unit) = 0)::int AS round_count,
                 count(DISTINCT r.payer) FILTER (WHERE r.recent AND r.payer IS NOT NULL)::int AS distinct_parties,
                 coalesce(bool_or(r.payer = p_counterparty) FILTER (WHERE r.recent), false) AS seen,
                 count(*) FILTER (WHERE r.created_at >= p_norm_high_from AND r.created_at < p_recent_from)::int AS norm_high,
                 count(*) FILTER (WHERE r.created_at >= p_dormant_high_from AND r.id::text <> p_movement)::int AS dormant_high
            FROM (SELECT x.amount_minor AS amount, coalesce(x.payer_phone, x.payer_address, x.payer_name) AS payer, x.created_at, x.id,
                         x.created_at >= p_recent_from AND x.currency = 'KES' AND x.id::text <> p_movement AS recent
                    FROM deposits x
                   WHERE x.user_id = p_customer AND x.created_at >= p_near_from AND x.created_at < p_at
                     AND x.status <> 'failed') r) i,
        LATERAL (
          SELECT (SELECT count(*)::int FROM orders x WHERE x.user_id = p_customer AND x.created_at >= p_norm_low_from
                     AND x.created_at < p_norm_low_to AND x.status NOT IN ('rejected', 'failed'))
               + (SELECT count(*)::int FROM deposits x WHERE x.user_id = p_customer AND x.created_at >= p_norm_low_from
                     AND x.created_at < p_norm_low_to AND x.status <> 'failed') AS norm_low,
                 (SELECT count(*)::int FROM orders x WHERE x.user_id = p_customer AND x.created_at >= p_dormant_low_from
                     AND x.created_at < p_dormant_low_to AND x.status NOT IN ('rejected', 'failed') AND x.id::text <> p_movement)
               + (SELECT count(*)::int FROM deposits x WHERE x.user_id = p_customer AND x.created_at >= p_dormant_low_from
                     AND x.created_at < p_dormant_low_to AND x.status <> 'failed' AND x.id::text <> p_movement) AS dormant_low) e,
        LATERAL (
          SELECT coalesce(sum(d.movements) FILTER (WHERE d.day >= p_norm_days_from AND d.day < p_norm_days_to), 0)::int AS norm,
                 coalesce(sum(d.movements) FILTER (WHERE d.day >= p_dormant_days_from AND d.day < p_dormant_days_to), 0)::int AS dormant
            FROM monitoring_customer_days d
           WHERE d.customer_id = p_customer AND d.day >= least(p_norm_days_from, p_dormant_days_from)
             AND d.day < greatest(p_norm_days_to, p_dormant_days_to)) days,
        -- The movement itself, when it is already stored on one of the dormant window's whole days.
        LATERAL (
          SELECT (SELECT count(*)::int FROM orders x WHERE x.id = p_movement_uuid AND x.id::text = p_movement
                     AND x.user_id = p_customer AND x.status NOT IN ('rejected', 'failed')
                     AND x.created_at >= (p_dormant_days_from::timestamp AT TIME ZONE 'UTC')
                     AND x.created_at < (p_dormant_days_to::timestamp AT TIME ZONE 'UTC'))
               + (SELECT count(*)::int FROM deposits x WHERE x.id = p_movement_uuid AND x.id::text = p_movement
                     AND x.user_id = p_customer AND x.status <> 'failed'
                     AND x.created_at >= (p_dormant_days_from::timestamp AT TIME ZONE 'UTC')
                     AND x.created_at < (p_dormant_days_to::timestamp AT TIME ZONE 'UTC')) AS counted) own
        WHERE u.id = p_customer;
      END
    $$;

    LOCK TABLE orders, deposits IN SHARE MODE;
    INSERT INTO monitoring_customer_days (customer_id, day, movements)
    SELECT customer_id, day, count(*)::int FROM (
      SELECT user_id AS customer_id, (created_at AT TIME ZONE 'UTC')::date AS day FROM orders
       WHERE status NOT IN ('rejected', 'failed')
      UNION ALL
      SELECT user_id, (created_at AT TIME ZONE 'UTC')::date FROM deposits
       WHERE user_id IS NOT NULL AND status <> 'failed') m
    GROUP BY customer_id, day
    ORDER BY customer_id, day;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TRIGGER IF EXISTS deposits_monitoring_cleared ON deposits;
    DROP TRIGGER IF EXISTS orders_monitoring_cleared ON orders;
    DROP TRIGGER IF EXISTS deposits_monitoring_recounted ON deposits;
    DROP TRIGGER IF EXISTS deposits_monitoring_counted ON deposits;
    DROP TRIGGER IF EXISTS orders_monitoring_recounted ON orders;
    DROP TRIGGER IF EXISTS orders_monitoring_counted ON orders;
    DROP FUNCTION IF EXISTS monitoring_history(uuid, text, uuid, text, text, text, timestamptz, timestamptz, timestamptz,
      timestamptz, timestamptz, timestamptz, timestamptz, timestamptz, timestamptz, date, date, date, date, numeric, numeric,
      numeric, numeric);
    DROP FUNCTION IF EXISTS monitoring_customer_days_cleared();
    DROP FUNCTION IF EXISTS monitoring_deposits_counted();
    DROP FUNCTION IF EXISTS monitoring_orders_counted();
    DROP FUNCTION IF EXISTS monitoring_customer_days_count(uuid, timestamptz, integer);
    DROP TABLE IF EXISTS monitoring_customer_days;
  `);
};
