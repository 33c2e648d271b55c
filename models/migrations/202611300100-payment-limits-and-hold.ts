import type { Migration } from '../migrator';

/**
 * A payment's KYC limits check and its hold in one round trip (docs/payments.md#admission).
 *
 * `order_limit_usage(user, except)` is the one definition of what counts towards a user's 24-hour limit, in KES
 * minor units: every order whose limits were checked (so two racing payments never count each other twice), not
 * rejected or failed, created in the last 24 hours, other than `except`.
 *
 * `payment_limits_and_hold(order, limits, ledger transaction, currency, accounts, directions, amounts)` does what
 * was five statements (`BEGIN`, the order and its payer locked, the usage read, the hold posted with the order's
 * move to `processing` and its event, `COMMIT`) as one. Being one statement it is one transaction; being a
 * volatile function, each statement in it takes a fresh snapshot, so the usage read after the locks still sees a
 * payment of the same payer that committed while this one waited for them. `limits` are the tiers' limits in KES
 * minor units: unverified per payment, unverified per 24 hours, verified per payment, verified per 24 hours. It
 * answers one row:
 * - `missing`: no such order, or its payer is gone;
 * - `rejected` (with the order's failure code) or `failed`: the order had already ended so;
 * - `held`: the order was already past its hold, or is now held: posted and `processing`, its event recorded;
 * - `over_limits`, with the payer's KYC status and usage: nothing was written; the caller says which limit and
 *   rejects the order.
 * A wallet that cannot cover the hold raises the overdraft refusal (`accounts_funds_never_negative`) and the whole
 * statement is undone. The posting's lines are the caller's (an order's accounts never change); as in any posting,
 * it is made once per (order, kind).
 *
 * Taken back, both functions are dropped; nothing they wrote depends on them.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE FUNCTION order_limit_usage(p_user uuid, p_except uuid) RETURNS numeric
    LANGUAGE plpgsql STABLE AS $$
      BEGIN
        RETURN (SELECT coalesce(sum(o.kes_equivalent_minor), 0) FROM orders o
                 WHERE o.user_id = p_user AND o.id IS DISTINCT FROM p_except AND o.limits_checked_at IS NOT NULL
                   AND o.status NOT IN ('rejected', 'failed') AND o.created_at > now() - interval '24 hours');
      END
    $$;

    CREATE FUNCTION payment_limits_and_hold(
      p_order uuid, p_limits numeric[], p_transaction uuid, p_currency text,
      p_accounts text[], p_directions text[], p_amounts numeric[])
    RETURNS TABLE (outcome text, failure_code text, kyc_status text, used text)
    LANGUAGE plpgsql VOLATILE AS $$
      #variable_conflict use_column
      DECLARE
        v_user uuid;
        v_status text;
        v_failure text;
        v_checked timestamptz;
        v_kes numeric;
        v_kyc text;
        v_used numeric;
        v_posted uuid;
      BEGIN
        SELECT o.user_id, o.status, o.failure_code, o.limits_checked_at, o.kes_equivalent_minor, u.kyc_status
          INTO v_user, v_status, v_failure, v_checked, v_kes, v_kyc
          FROM orders o JOIN users u ON u.id = o.user_id WHERE o.id = p_order FOR UPDATE OF o, u;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'missing', NULL::text, NULL::text, NULL::text;
          RETURN;
        END IF;
        IF v_status IN ('rejected', 'failed') THEN
          RETURN QUERY SELECT v_status, v_failure, v_kyc, NULL::text;
          RETURN;
        END IF;
        IF v_status NOT IN ('pending', 'screening') THEN
          RETURN QUERY SELECT 'held', NULL::text, v_kyc, NULL::text;
          RETURN;
        END IF;
        IF v_checked IS NULL THEN
          v_used := order_limit_usage(v_user, p_order);
          IF v_kes > (CASE WHEN v_kyc = 'verified' THEN p_limits[3] ELSE p_limits[1] END)
             OR v_used + v_kes > (CASE WHEN v_kyc = 'verified' THEN p_limits[4] ELSE p_limits[2] END) THEN
            RETURN QUERY SELECT 'over_limits', NULL::text, v_kyc, v_used::text;
            RETURN;
          END IF;
        END IF;
        UPDATE orders o
           SET status = 'processing',
               workflow_started_at = coalesce(o.workflow_started_at, now()),
               limits_checked_at = coalesce(o.limits_checked_at, now()),
               updated_at = now()
         WHERE o.id = p_order;
        INSERT INTO order_events (order_id, status, detail) VALUES (p_order, 'processing', 'funds held')
          ON CONFLICT (order_id, status) DO NOTHING;
        INSERT INTO ledger_transactions (id, order_id, kind, currency) VALUES (p_transaction, p_order, 'hold', p_currency)
          ON CONFLICT DO NOTHING RETURNING id INTO v_posted;
        IF v_posted IS NOT NULL THEN
          INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor)
          SELECT v_posted, l.account, p_currency, l.direction, l.amount_minor
            FROM unnest(p_accounts, p_directions, p_amounts) WITH ORDINALITY AS l (account, direction, amount_minor, n)
           ORDER BY l.n;
        END IF;
        RETURN QUERY SELECT 'held', NULL::text, v_kyc, NULL::text;
      END
    $$;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP FUNCTION IF EXISTS payment_limits_and_hold(uuid, numeric[], uuid, text, text[], text[], numeric[]);
    DROP FUNCTION IF EXISTS order_limit_usage(uuid, uuid);
  `);
};
