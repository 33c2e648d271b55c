import { QueryTypes, type Transaction } from 'sequelize';
import { models } from '../models';
import { uuidv7 } from '../platform/ids';

/** A P2P trade: the order (a `p2p` payment) against an ad, and where its escrow stands. */
export interface TradeRow {
  order_id: string;
  ad_id: string;
  maker_id: string;
  taker_id: string;
  seller_id: string;
  buyer_id: string;
  asset: string;
  asset_amount_minor: string;
  price_minor: string;
  payment_method: string;
  escrow_state: 'none' | 'locked' | 'released' | 'returned' | 'refused';
}

/** The trade of an order, locked for the rest of the transaction. */
export async function lockTrade(orderId: string, tx: Transaction): Promise<TradeRow | undefined> {
  const [trade] = await models().query<TradeRow>(
    `SELECT order_id, ad_id, maker_id, taker_id, seller_id, buyer_id, asset, asset_amount_minor::text AS asset_amount_minor,
            price_minor::text AS price_minor, payment_method, escrow_state
       FROM p2p_trades WHERE order_id = :orderId FOR UPDATE`,
    { replacements: { orderId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return trade;
}

/** Move the trade's escrow to `state`. */
export async function setEscrowState(orderId: string, state: TradeRow['escrow_state'], tx: Transaction): Promise<void> {
  await models().query(`UPDATE p2p_trades SET escrow_state = :state, updated_at = now() WHERE order_id = :orderId`, {
    replacements: { orderId, state },
    transaction: tx,
  });
}

/**
 * Take `amount` of the ad's asset, if the ad is active and has that much left: one conditional update, so
 * concurrent trades can never take more than there is. Returns what is left and the ad's owner, or
 * undefined when it did not fit.
 */
export async function takeFromAd(
  adId: string,
  amount: string,
  tx: Transaction,
): Promise<{ available_amount_minor: string; owner_id: string } | undefined> {
  const [taken] = await models().query<{ available_amount_minor: string; owner_id: string }>(
    `UPDATE p2p_ads SET available_amount_minor = available_amount_minor - :amount, updated_at = now()
      WHERE id = :adId AND status = 'active' AND available_amount_minor >= :amount
     RETURNING available_amount_minor::text, owner_id`,
    { replacements: { amount, adId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return taken;
}

/** Give `amount` back to the ad's available amount (a returned escrow). */
export async function giveBackToAd(adId: string, amount: string, tx: Transaction): Promise<void> {
  await models().query(
    `UPDATE p2p_ads SET available_amount_minor = available_amount_minor + :amount, updated_at = now() WHERE id = :adId`,
    { replacements: { amount, adId }, transaction: tx },
  );
}

/** Append an event to the ad's history. */
export async function recordAdEvent(
  e: { adId: string; ownerId: string; event: string; detail: string | null },
  tx?: Transaction,
): Promise<void> {
  await models().query(`INSERT INTO p2p_ad_events (id, ad_id, owner_id, event, detail) VALUES (:id, :adId, :ownerId, :event, :detail)`, {
    replacements: { id: uuidv7(), ...e },
    transaction: tx,
  });
}

/** The trade with its seller's phone and name: where the fiat leg is paid. */
export async function tradeWithSeller(
  orderId: string,
): Promise<(TradeRow & { seller_phone: string | null; seller_name: string }) | undefined> {
  const [trade] = await models().query<TradeRow & { seller_phone: string | null; seller_name: string }>(
    `SELECT t.*, t.asset_amount_minor::text AS asset_amount_minor, u.phone AS seller_phone, u.full_name AS seller_name
       FROM p2p_trades t JOIN users u ON u.id = t.seller_id WHERE t.order_id = :orderId`,
    { replacements: { orderId }, type: QueryTypes.SELECT },
  );
  return trade;
}

/** The payment method the taker chose for the trade's fiat leg. */
export async function tradePaymentMethod(orderId: string): Promise<string | undefined> {
  const [trade] = await models().query<{ payment_method: string }>('SELECT payment_method FROM p2p_trades WHERE order_id = :orderId', {
    replacements: { orderId },
    type: QueryTypes.SELECT,
  });
  return trade?.payment_method;
}
