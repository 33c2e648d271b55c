import { ApplicationFailure } from '@temporalio/activity';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { Config } from '../../platform/config';
import { uuidv7 } from '../../platform/ids';
import { Order } from '../../models';
import { type Connectors, type RailMethod, type RailStatus } from '../../connectors';
import { postLines, postPayment, postedKinds } from '../../repositories/ledger';
import { heartbeating } from './heartbeat';
import { submitAndRecord } from './rail';
import { formatAmount } from '../../domain/money';
import { isTerminal, ledgerAccountsOf } from '../../domain/orders';
import { transitionOrder } from '../../repositories/orders';
import { escrowLines, type EscrowKind } from '../../domain/p2p/escrow';
import { lockTrade, type TradeRow } from '../../repositories/p2p';

export interface P2pActivityDeps {
  sequelize: Sequelize;
  connectors: Connectors;
  config: Config;
}

interface OrderRef {
  orderId: string;
}

/** The rail that carries a trade's fiat leg, by the payment method the taker chose. */
const railMethodOf = (paymentMethod: string): RailMethod => (paymentMethod === 'bank_transfer' ? 'bank_transfer' : 'mobile_money');

export async function postEscrow(_sequelize: Sequelize, tx: Transaction, kind: EscrowKind, trade: TradeRow): Promise<boolean> {
  return postLines(tx, {
    orderId: trade.order_id,
    kind,
    currency: trade.asset,
    lines: escrowLines(kind, {
      orderId: trade.order_id,
      sellerId: trade.seller_id,
      buyerId: trade.buyer_id,
      asset: trade.asset,
      assetAmountMinor: trade.asset_amount_minor,
    }),
  });
}

/** Put a locked escrow back: the ad's available amount grows again and the asset returns to the seller. */
export async function returnEscrow(sequelize: Sequelize, tx: Transaction, trade: TradeRow): Promise<void> {
  if (trade.escrow_state !== 'locked') return;
  await postEscrow(sequelize, tx, 'escrow_return', trade);
  await sequelize.query(
    `UPDATE p2p_ads SET available_amount_minor = available_amount_minor + :amount, updated_at = now() WHERE id = :adId`,
    { replacements: { amount: trade.asset_amount_minor, adId: trade.ad_id }, transaction: tx },
  );
  await sequelize.query(`UPDATE p2p_trades SET escrow_state = 'returned', updated_at = now() WHERE order_id = :orderId`, {
    replacements: { orderId: trade.order_id },
    transaction: tx,
  });
}

/** Release a locked escrow to the buyer. */
export async function releaseEscrow(sequelize: Sequelize, tx: Transaction, trade: TradeRow): Promise<void> {
  if (trade.escrow_state !== 'locked') return;
  await postEscrow(sequelize, tx, 'escrow_release', trade);
  await sequelize.query(`UPDATE p2p_trades SET escrow_state = 'released', updated_at = now() WHERE order_id = :orderId`, {
    replacements: { orderId: trade.order_id },
    transaction: tx,
  });
}

/**
 * The side effects of a P2P trade (SPEC §7), each idempotent on the order id: lock the ad's asset in
 * escrow, carry the fiat leg over the usual rail connectors, then release the escrow to the buyer or
 * return it to the seller.
 */
export function createP2pActivities({ sequelize, connectors }: P2pActivityDeps) {
  const loadOrder = async (orderId: string, tx?: Transaction) => {
    const order = await Order.findByPk(orderId, tx ? { transaction: tx, lock: tx.LOCK.UPDATE } : {});
    if (!order) throw ApplicationFailure.nonRetryable(`order ${orderId} not found`, 'OrderNotFound');
    return order;
  };

  return {
    /**
     * Lock the traded amount of the ad's asset in escrow. One conditional UPDATE takes it from the ad's
     * `available_amount`, so concurrent trades can never take more than there is; a trade that does not
     * fit ends `rejected` with `ad_unavailable`.
     */
    async lockEscrow({ orderId }: OrderRef): Promise<{ locked: boolean }> {
      return sequelize.transaction(async (tx) => {
        const order = await loadOrder(orderId, tx);
        const trade = await lockTrade(sequelize, orderId, tx);
        if (!trade) throw ApplicationFailure.nonRetryable(`no P2P trade for order ${orderId}`, 'TradeNotFound');
        if (trade.escrow_state !== 'none') return { locked: trade.escrow_state === 'locked' || trade.escrow_state === 'released' };
        if (isTerminal(order.status)) return { locked: false };
        const [taken] = await sequelize.query<{ available_amount_minor: string; owner_id: string }>(
          `UPDATE p2p_ads SET available_amount_minor = available_amount_minor - :amount, updated_at = now()
            WHERE id = :adId AND status = 'active' AND available_amount_minor >= :amount
           RETURNING available_amount_minor::text, owner_id`,
          { replacements: { amount: trade.asset_amount_minor, adId: trade.ad_id }, type: QueryTypes.SELECT, transaction: tx },
        );
        if (!taken) {
          await sequelize.query(`UPDATE p2p_trades SET escrow_state = 'refused', updated_at = now() WHERE order_id = :orderId`, {
            replacements: { orderId },
            transaction: tx,
          });
          await transitionOrder(
            order.id,
            {
              from: [order.status],
              to: 'rejected',
              failureCode: 'ad_unavailable',
              reason: 'the ad is no longer active or has not enough left for this trade',
            },
            tx,
          );
          return { locked: false };
        }
        await postEscrow(sequelize, tx, 'escrow_lock', trade);
        await sequelize.query(`UPDATE p2p_trades SET escrow_state = 'locked', updated_at = now() WHERE order_id = :orderId`, {
          replacements: { orderId },
          transaction: tx,
        });
        if (BigInt(taken.available_amount_minor) === 0n) {
          await sequelize.query(
            `INSERT INTO p2p_ad_events (id, ad_id, owner_id, event, detail) VALUES (:id, :adId, :ownerId, 'filled', :detail)`,
            {
              replacements: { id: uuidv7(), adId: trade.ad_id, ownerId: taken.owner_id, detail: `by trade ${orderId}` },
              transaction: tx,
            },
          );
        }
        return { locked: true };
      });
    },

    /** Hand the fiat leg to the rail the taker chose; the order id is the provider-side idempotency key. */
    async submitFiatLeg({ orderId }: OrderRef): Promise<{ reference: string }> {
      const order = await loadOrder(orderId);
      if (order.railReference) return { reference: order.railReference };
      const [trade] = await sequelize.query<TradeRow & { seller_phone: string | null; seller_name: string }>(
        `SELECT t.*, t.asset_amount_minor::text AS asset_amount_minor, u.phone AS seller_phone, u.full_name AS seller_name
           FROM p2p_trades t JOIN users u ON u.id = t.seller_id WHERE t.order_id = :orderId`,
        { replacements: { orderId }, type: QueryTypes.SELECT },
      );
      if (!trade) throw ApplicationFailure.nonRetryable(`no P2P trade for order ${orderId}`, 'TradeNotFound');
      const method = railMethodOf(trade.payment_method);
      const destination: Record<string, string> =
        method === 'mobile_money'
          ? { provider: trade.payment_method === 'airtel_money' ? 'airtel_money' : 'mpesa', phone: trade.seller_phone ?? '' }
          : { account_name: trade.seller_name, p2p_counterparty: trade.seller_id };
      return heartbeating(`submitting the fiat leg of ${orderId}`, () =>
        submitAndRecord(connectors[method], {
          idempotencyKey: order.id,
          orderId: order.id,
          method,
          amount: formatAmount(order.amountMinor, 'KES'),
          currency: 'KES',
          destination: { ...destination, p2p_ad_id: trade.ad_id },
          description: order.description ?? `P2P trade ${order.id}`,
        }),
      );
    },

    async pollFiatLeg({ orderId }: OrderRef): Promise<RailStatus> {
      const order = await loadOrder(orderId);
      if (!order.railReference)
        throw ApplicationFailure.nonRetryable('the fiat leg was never submitted', 'RailRejected', { failureCode: 'rail_error' });
      const [trade] = await sequelize.query<{ payment_method: string }>('SELECT payment_method FROM p2p_trades WHERE order_id = :orderId', {
        replacements: { orderId },
        type: QueryTypes.SELECT,
      });
      const reference = order.railReference;
      return heartbeating(`polling the fiat leg of ${orderId}`, () =>
        connectors[railMethodOf(trade?.payment_method ?? 'mpesa')].status(reference, { currency: 'KES', since: order.createdAt.getTime() }),
      );
    },

    /** The fiat leg settled: post it, release the escrow to the buyer, complete the order — once. */
    async settleTrade({ orderId, reference }: OrderRef & { reference: string }): Promise<void> {
      await sequelize.transaction(async (tx) => {
        const order = await loadOrder(orderId, tx);
        if (isTerminal(order.status)) return;
        const trade = await lockTrade(sequelize, orderId, tx);
        if (!trade) throw ApplicationFailure.nonRetryable(`no P2P trade for order ${orderId}`, 'TradeNotFound');
        await postPayment(tx, 'settle', ledgerAccountsOf(order));
        await releaseEscrow(sequelize, tx, trade);
        await transitionOrder(
          order.id,
          { from: [order.status], to: 'completed', railReference: reference, note: 'fiat settled, escrow released to the buyer' },
          tx,
        );
      });
    },

    /** The fiat leg failed or timed out: release the fiat hold, return the escrow, fail the order — once. */
    async failTrade({ orderId, failureCode, reason }: OrderRef & { failureCode: string; reason: string }): Promise<void> {
      await sequelize.transaction(async (tx) => {
        const order = await loadOrder(orderId, tx);
        if (isTerminal(order.status)) return;
        const posted = await postedKinds(orderId, tx);
        if (posted.includes('hold') && !posted.includes('settle')) {
          await postPayment(tx, 'release', ledgerAccountsOf(order));
        }
        const trade = await lockTrade(sequelize, orderId, tx);
        if (trade) await returnEscrow(sequelize, tx, trade);
        await transitionOrder(order.id, { from: [order.status], to: 'failed', failureCode, reason }, tx);
      });
    },
  };
}

export type P2pActivities = ReturnType<typeof createP2pActivities>;
