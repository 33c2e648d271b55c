import type { Migration } from '../migrator';

/**
 * Transaction monitoring of bulk payouts (docs/monitoring.md#bulk-payouts). A batch is evaluated once, as one
 * movement of the kind `payout_batch`, when it is accepted; each of its orders is still evaluated on its own.
 *
 * `monitoring_history(...)` (same arguments and result as before, 202611280400-monitoring-customer-days) now
 * reads the recent window's orders with their batch: an order of the movement's own batch (a batch's own
 * evaluation, or one of its items being paid) is left out of it, so an item never counts its siblings; an order
 * of any other batch counts with that batch, as one movement in the window's counts and as one payee, while the
 * sums keep every amount. The movement's batch is read by primary key; the window is still read from `orders`
 * by (customer, time).
 *
 * Taken back, the function reads as before and the kind is no longer accepted for new evaluations; those kept
 * stay (evaluations are append-only), the check then covering only new rows.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE monitoring_evaluations DROP CONSTRAINT monitoring_evaluations_movement_kind_check;
    ALTER TABLE monitoring_evaluations ADD CONSTRAINT monitoring_evaluations_movement_kind_check
      CHECK (movement_kind IN ('payout', 'deposit', 'p2p_trade', 'refund', 'payout_batch'));

    CREATE OR REPLACE FUNCTION monitoring_history(
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
      DECLARE
        -- The bulk payout the movement belongs to: the batch itself, or the batch of the order being paid.
        v_batch uuid;
      BEGIN
        IF p_kind = 'payout_batch' THEN
          v_batch := p_movement_uuid;
        ELSIF p_kind = 'payout' AND p_movement_uuid IS NOT NULL THEN
          SELECT x.payout_batch_id INTO v_batch FROM orders x WHERE x.id = p_movement_uuid AND x.user_id = p_customer;
        END IF;
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
        -- In the recent window an order of a bulk payout counts with its batch: the batch is one movement (and one
        -- payee), its amounts are all counted in the sums, and the movement's own batch is left out altogether.
        LATERAL (
          SELECT count(DISTINCT r.movement) FILTER (WHERE r.recent)::int AS recent_count,
                 coalesce(sum(r.amount) FILTER (WHERE r.recent), 0) AS recent_sum,
                 count(DISTINCT r.movement) FILTER (WHERE r.recent AND r.amount >= p_floor AND r.amount < p_threshold)::int AS below_count,
                 coalesce(sum(r.amount) FILTER (WHERE r.recent AND r.amount >= p_floor AND r.amount < p_threshold), 0) AS below_sum,
                 count(DISTINCT r.movement) FILTER (WHERE r.recent AND r.amount >= p_round_min AND mod(r.amount, p_round_unit) = 0)::int
                   AS round_count,
                 count(DISTINCT coalesce(r.batch::text, r.destination::text)) FILTER (WHERE r.recent)::int AS distinct_parties,
                 coalesce(bool_or(r.batch IS NULL AND r.destination::text = (CAST(p_counterparty_json AS jsonb))::text)
                   FILTER (WHERE r.recent), false) AS seen,
                 count(*) FILTER (WHERE r.created_at >= p_norm_high_from AND r.created_at < p_recent_from)::int AS norm_high,
                 count(*) FILTER (WHERE r.created_at >= p_dormant_high_from AND r.id::text <> p_movement)::int AS dormant_high
            FROM (SELECT x.kes_equivalent_minor AS amount, x.destination, x.created_at, x.id, x.payout_batch_id AS batch,
                         coalesce(x.payout_batch_id, x.id) AS movement,
                         x.created_at >= p_recent_from AND x.id::text <> p_movement
                           AND (v_batch IS NULL OR x.payout_batch_id IS DISTINCT FROM v_batch) AS recent
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
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE monitoring_evaluations DROP CONSTRAINT monitoring_evaluations_movement_kind_check;
    ALTER TABLE monitoring_evaluations ADD CONSTRAINT monitoring_evaluations_movement_kind_check
      CHECK (movement_kind IN ('payout', 'deposit', 'p2p_trade', 'refund')) NOT VALID;

    CREATE OR REPLACE FUNCTION monitoring_history(
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
  `);
};
