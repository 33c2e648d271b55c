import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

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
export async function lockTrade(sequelize: Sequelize, orderId: string, tx: Transaction): Promise<TradeRow | undefined> {
  const [trade] = await sequelize.query<TradeRow>(
    `SELECT order_id, ad_id, maker_id, taker_id, seller_id, buyer_id, asset, asset_amount_minor::text AS asset_amount_minor,
            price_minor::text AS price_minor, payment_method, escrow_state
       FROM p2p_trades WHERE order_id = :orderId FOR UPDATE`,
    { replacements: { orderId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return trade;
}
