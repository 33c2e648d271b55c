import type { Migration } from '../migrator';

/**
 * Events (docs/events.md#events): every state change a merchant can see becomes one `webhook_events` row, written by a
 * trigger in the same transaction as the change (the outbox the order and deposit triggers started), so
 * `GET /events` and the webhooks carry the same ids. Added here, beside `order.status_changed` and
 * `deposit.status_changed`:
 * - `wallet.credited`: every credit to a wallet (a deposit, a released hold, a refund, an escrow returned, a
 *   trade's proceeds), with the transaction's kind and the balance after it;
 * - `appeal.opened`, then `appeal.approved` | `appeal.rejected` | `appeal.expired`, to whoever opened it;
 * - `kyc.status_changed`, to the user;
 * - `p2p.trade.created` and `p2p.trade.<escrow state>` (locked, released, returned, refused), to both parties;
 * - `p2p.ad.<event>` (created, paused, resumed, edited, filled, closed), to the ad's owner.
 * Events are kept `EVENTS_RETENTION_DAYS` (30 by default); the `prune-events` job deletes older ones and their
 * deliveries.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE INDEX webhook_events_user ON webhook_events (user_id, id);
    CREATE INDEX webhook_events_created ON webhook_events (created_at);

    CREATE FUNCTION paygate_wallet_credit_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.direction = 'credit' AND NEW.account LIKE 'wallet:%' THEN
        INSERT INTO webhook_events (type, user_id, order_id, deposit_id, payload)
        SELECT 'wallet.credited', split_part(NEW.account, ':', 2)::uuid, t.order_id, t.deposit_id,
               jsonb_build_object(
                 'currency', NEW.currency, 'amount_minor', NEW.amount_minor::text,
                 'balance_after_minor', NEW.balance_after_minor::text, 'kind', t.kind, 'transaction_id', t.id,
                 'order_id', t.order_id, 'deposit_id', t.deposit_id, 'ad_id', t.ad_id, 'refund_id', t.refund_id,
                 'at', NEW.created_at)
          FROM ledger_transactions t WHERE t.id = NEW.transaction_id;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ledger_entries_wallet_credit_outbox AFTER INSERT ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION paygate_wallet_credit_outbox();

    CREATE FUNCTION paygate_appeal_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status THEN
        INSERT INTO webhook_events (type, user_id, order_id, payload)
        VALUES (CASE WHEN TG_OP = 'INSERT' THEN 'appeal.opened' ELSE 'appeal.' || NEW.status END,
                NEW.created_by, NEW.order_id,
                jsonb_build_object(
                  'appeal_id', NEW.id, 'order_id', NEW.order_id, 'status', NEW.status, 'reason', NEW.reason,
                  'resolution', NEW.resolution, 'at', NEW.updated_at));
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER appeals_outbox AFTER INSERT OR UPDATE ON appeals
      FOR EACH ROW EXECUTE FUNCTION paygate_appeal_outbox();

    CREATE FUNCTION paygate_kyc_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_events (type, user_id, payload)
      VALUES ('kyc.status_changed', NEW.id,
              jsonb_build_object('user_id', NEW.id, 'status', NEW.kyc_status, 'previous_status', OLD.kyc_status,
                                 'at', now()));
      RETURN NULL;
    END $$;
    CREATE TRIGGER users_kyc_outbox AFTER UPDATE OF kyc_status ON users
      FOR EACH ROW WHEN (OLD.kyc_status IS DISTINCT FROM NEW.kyc_status) EXECUTE FUNCTION paygate_kyc_outbox();

    CREATE FUNCTION paygate_p2p_trade_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' OR OLD.escrow_state IS DISTINCT FROM NEW.escrow_state THEN
        INSERT INTO webhook_events (type, user_id, order_id, payload)
        SELECT CASE WHEN TG_OP = 'INSERT' THEN 'p2p.trade.created' ELSE 'p2p.trade.' || NEW.escrow_state END,
               party, NEW.order_id,
               jsonb_build_object(
                 'order_id', NEW.order_id, 'ad_id', NEW.ad_id, 'role', CASE WHEN party = NEW.buyer_id THEN 'buyer' ELSE 'seller' END,
                 'asset', NEW.asset, 'asset_amount_minor', NEW.asset_amount_minor::text,
                 'price_minor', NEW.price_minor::text, 'payment_method', NEW.payment_method,
                 'escrow_state', NEW.escrow_state, 'at', NEW.updated_at)
          FROM unnest(ARRAY[NEW.buyer_id, NEW.seller_id]) AS party;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER p2p_trades_outbox AFTER INSERT OR UPDATE ON p2p_trades
      FOR EACH ROW EXECUTE FUNCTION paygate_p2p_trade_outbox();

    CREATE FUNCTION paygate_p2p_ad_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_events (type, user_id, payload)
      VALUES ('p2p.ad.' || NEW.event, NEW.owner_id,
              jsonb_build_object('ad_id', NEW.ad_id, 'event', NEW.event, 'detail', NEW.detail, 'at', NEW.at));
      RETURN NULL;
    END $$;
    CREATE TRIGGER p2p_ad_events_outbox AFTER INSERT ON p2p_ad_events
      FOR EACH ROW EXECUTE FUNCTION paygate_p2p_ad_outbox();
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TRIGGER IF EXISTS p2p_ad_events_outbox ON p2p_ad_events;
    DROP FUNCTION IF EXISTS paygate_p2p_ad_outbox;
    DROP TRIGGER IF EXISTS p2p_trades_outbox ON p2p_trades;
    DROP FUNCTION IF EXISTS paygate_p2p_trade_outbox;
    DROP TRIGGER IF EXISTS users_kyc_outbox ON users;
    DROP FUNCTION IF EXISTS paygate_kyc_outbox;
    DROP TRIGGER IF EXISTS appeals_outbox ON appeals;
    DROP FUNCTION IF EXISTS paygate_appeal_outbox;
    DROP TRIGGER IF EXISTS ledger_entries_wallet_credit_outbox ON ledger_entries;
    DROP FUNCTION IF EXISTS paygate_wallet_credit_outbox;
    DROP INDEX IF EXISTS webhook_events_created;
    DROP INDEX IF EXISTS webhook_events_user;
  `);
};
