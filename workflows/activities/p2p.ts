import { ApplicationFailure } from '@temporalio/activity';
import type { Transaction } from 'sequelize';
import type { Config } from '../../platform/config';
import { type Connectors, type RailMethod, type RailStatus } from '../../connectors';
import { InsufficientFunds, postLines, postPayment, postedKinds } from '../../repositories/ledger';
import { heartbeating } from './heartbeat';
import { askRail, submitAndRecord } from './rail';
import { formatAmount } from '../../domain/money';
import { isTerminal, ledgerAccountsOf } from '../../domain/orders';
import { findOrder, lockOrder, transitionOrder } from '../../repositories/orders';
import { inTransaction } from '../../repositories/transaction';
import { escrowLines, type EscrowKind } from '../../domain/p2p/escrow';
import { fiatValueMinor } from '../../domain/p2p/ads';
import { reversedLegs, tradeLegs, TRADE_REVERSE_KIND, type WalletTrade } from '../../domain/p2p/wallet-trade';
import {
  closeAdAndReturnEscrow,
  giveBackToAd,
  lockTrade,
  recordAdEvent,
  setEscrowState,
  takeFromAd,
  tradePaymentMethod,
  tradeWithSeller,
  type TradeRow,
} from '../../repositories/p2p';

export interface P2pActivityDeps {
  connectors: Connectors;
  config: Config;
}

interface OrderRef {
  orderId: string;
}

/** The rail that carries a trade's fiat leg, by the payment method the taker chose. */
const railMethodOf = (paymentMethod: string): RailMethod => (paymentMethod === 'bank_transfer' ? 'bank_transfer' : 'mobile_money');

export async function postEscrow(tx: Transaction, kind: EscrowKind, trade: TradeRow): Promise<boolean> {
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
export async function returnEscrow(tx: Transaction, trade: TradeRow): Promise<void> {
  if (trade.escrow_state !== 'locked') return;
  await postEscrow(tx, 'escrow_return', trade);
  await giveBackToAd(trade.ad_id, trade.asset_amount_minor, tx);
  await setEscrowState(trade.order_id, 'returned', tx);
}

/** The settled trade's legs, as posted: the KES leg of a buy-ad trade is the asset's value, rounded down. */
function walletTradeOf(
  trade: TradeRow,
  ad: { side: WalletTrade['side']; owner_id: string; asset: string },
  fiatAmountMinor: string,
): WalletTrade {
  return {
    adId: trade.ad_id,
    side: ad.side,
    ownerId: ad.owner_id,
    takerId: trade.taker_id,
    asset: trade.asset,
    assetAmountMinor: trade.asset_amount_minor,
    fiatAmountMinor,
  };
}

const buyAdFiat = (trade: TradeRow, asset: string): string =>
  fiatValueMinor(BigInt(trade.asset_amount_minor), BigInt(trade.price_minor), asset as Parameters<typeof fiatValueMinor>[2]).toString();

/**
 * An approved appeal on a trade settled between wallets: post the mirror of both legs, once. Returns false
 * for a trade that was not settled that way (an older, rail-settled trade), which the caller refunds as before.
 * When a wallet no longer holds what it received, the database refuses and the decision fails (`conflict`).
 */
export async function reverseWalletTrade(tx: Transaction, trade: TradeRow, fiatAmountMinor: string): Promise<boolean> {
  const posted: string[] = await postedKinds(trade.order_id, tx);
  if (!posted.includes('trade_fiat') || !posted.includes('trade_asset')) return false;
  const side = trade.seller_id === trade.maker_id ? 'sell' : 'buy';
  const legs = reversedLegs(
    walletTradeOf(
      trade,
      { side, owner_id: trade.maker_id, asset: trade.asset },
      side === 'sell' ? fiatAmountMinor : buyAdFiat(trade, trade.asset),
    ),
  );
  try {
    for (const leg of legs) {
      await postLines(tx, { orderId: trade.order_id, kind: TRADE_REVERSE_KIND[leg.kind], currency: leg.currency, lines: leg.lines });
    }
  } catch (err) {
    // The database refused to overdraw a wallet: the party no longer holds what they received. Nothing moves.
    if (err instanceof InsufficientFunds) {
      throw ApplicationFailure.nonRetryable(`the trade cannot be reversed: ${err.account} no longer holds what it received`, 'conflict');
    }
    throw err;
  }
  return true;
}

/** Release a locked escrow to the buyer. */
export async function releaseEscrow(tx: Transaction, trade: TradeRow): Promise<void> {
  if (trade.escrow_state !== 'locked') return;
  await postEscrow(tx, 'escrow_release', trade);
  await setEscrowState(trade.order_id, 'released', tx);
}

/**
 * The side effects of a P2P trade (SPEC §7), each idempotent on the order id: lock the ad's asset in
 * escrow, carry the fiat leg over the usual rail connectors, then release the escrow to the buyer or
 * return it to the seller.
 */
export function createP2pActivities({ connectors }: P2pActivityDeps) {
  const loadOrder = async (orderId: string, tx?: Transaction) => {
    const order = tx ? await lockOrder(orderId, tx) : await findOrder(orderId);
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
      return inTransaction(async (tx) => {
        const order = await loadOrder(orderId, tx);
        const trade = await lockTrade(orderId, tx);
        if (!trade) throw ApplicationFailure.nonRetryable(`no P2P trade for order ${orderId}`, 'TradeNotFound');
        if (trade.escrow_state !== 'none') return { locked: trade.escrow_state === 'locked' || trade.escrow_state === 'released' };
        if (isTerminal(order.status)) return { locked: false };
        const taken = await takeFromAd(trade.ad_id, trade.asset_amount_minor, tx);
        if (!taken) {
          await setEscrowState(orderId, 'refused', tx);
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
        await postEscrow(tx, 'escrow_lock', trade);
        await setEscrowState(orderId, 'locked', tx);
        if (BigInt(taken.available_amount_minor) === 0n) {
          await recordAdEvent({ adId: trade.ad_id, ownerId: taken.owner_id, event: 'filled', detail: `by trade ${orderId}` }, tx);
        }
        return { locked: true };
      });
    },

    /**
     * Settle a trade between wallets, in one database transaction (SPEC §7): take the traded amount from the
     * ad's available amount (one conditional UPDATE, so concurrent trades never take more than there is),
     * post both legs (the taker's payment first), complete the order; when that fills the ad, return what is
     * left in its escrow to the owner and close it. Once per order. An ad that no longer fits rejects the
     * order (`ad_unavailable`); a taker's wallet the database refuses to overdraw rolls it all back and
     * returns `insufficient_funds` for the workflow to fail the order — the escrow and the ad untouched.
     */
    async settleWalletTrade({
      orderId,
    }: OrderRef): Promise<{ status: 'completed' | 'rejected' | 'failed'; failureCode?: string; reason?: string }> {
      try {
        return await inTransaction(async (tx) => {
          const order = await loadOrder(orderId, tx);
          const trade = await lockTrade(orderId, tx);
          if (!trade) throw ApplicationFailure.nonRetryable(`no P2P trade for order ${orderId}`, 'TradeNotFound');
          if (isTerminal(order.status)) {
            return order.status === 'completed' || order.status === 'rejected'
              ? { status: order.status }
              : { status: 'failed' as const, failureCode: order.failureCode ?? 'insufficient_funds' };
          }
          const taken = await takeFromAd(trade.ad_id, trade.asset_amount_minor, tx);
          if (!taken) {
            await setEscrowState(orderId, 'refused', tx);
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
            return { status: 'rejected' as const, failureCode: 'ad_unavailable' };
          }
          const fiat = taken.side === 'sell' ? order.amountMinor : buyAdFiat(trade, taken.asset);
          for (const leg of tradeLegs(walletTradeOf(trade, taken, fiat))) {
            await postLines(tx, { orderId, kind: leg.kind, currency: leg.currency, lines: leg.lines });
          }
          await setEscrowState(orderId, 'released', tx);
          await transitionOrder(order.id, { from: [order.status], to: 'completed', note: 'both legs settled between wallets' }, tx);
          if (BigInt(taken.available_amount_minor) === 0n) {
            const ad = { id: trade.ad_id, owner_id: taken.owner_id, side: taken.side, asset: taken.asset };
            const left = await closeAdAndReturnEscrow(ad, tx);
            const currency = taken.side === 'sell' ? taken.asset : 'KES';
            await recordAdEvent(
              {
                adId: trade.ad_id,
                ownerId: taken.owner_id,
                event: 'filled',
                detail: `by trade ${orderId}; ${formatAmount(left, currency)} ${currency} returned from escrow`,
              },
              tx,
            );
          }
          return { status: 'completed' as const };
        });
      } catch (err) {
        if (err instanceof InsufficientFunds) {
          return { status: 'failed', failureCode: 'insufficient_funds', reason: "the taker's wallet cannot pay for this trade" };
        }
        throw err;
      }
    },

    /** Hand the fiat leg to the rail the taker chose; the order id is the provider-side idempotency key. */
    async submitFiatLeg({ orderId }: OrderRef): Promise<{ reference: string }> {
      const order = await loadOrder(orderId);
      if (order.railReference) return { reference: order.railReference };
      const trade = await tradeWithSeller(orderId);
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
      const paymentMethod = await tradePaymentMethod(orderId);
      const reference = order.railReference;
      return heartbeating(`polling the fiat leg of ${orderId}`, () =>
        askRail(connectors[railMethodOf(paymentMethod ?? 'mpesa')], reference, { currency: 'KES', since: order.createdAt.getTime() }),
      );
    },

    /** The fiat leg settled: post it, release the escrow to the buyer, complete the order — once. */
    async settleTrade({ orderId, reference }: OrderRef & { reference: string }): Promise<void> {
      await inTransaction(async (tx) => {
        const order = await loadOrder(orderId, tx);
        if (isTerminal(order.status)) return;
        const trade = await lockTrade(orderId, tx);
        if (!trade) throw ApplicationFailure.nonRetryable(`no P2P trade for order ${orderId}`, 'TradeNotFound');
        await postPayment(tx, 'settle', ledgerAccountsOf(order));
        await releaseEscrow(tx, trade);
        await transitionOrder(
          order.id,
          { from: [order.status], to: 'completed', railReference: reference, note: 'fiat settled, escrow released to the buyer' },
          tx,
        );
      });
    },

    /** The fiat leg failed or timed out: return the escrowed asset to the seller and the ad — once, while the order is open. */
    async returnTradeEscrow({ orderId }: OrderRef): Promise<void> {
      await inTransaction(async (tx) => {
        const order = await loadOrder(orderId, tx);
        if (isTerminal(order.status)) return;
        const trade = await lockTrade(orderId, tx);
        if (trade) await returnEscrow(tx, trade);
      });
    },

    /**
     * Release the fiat hold, return the escrow and fail the order in one step: kept only for trade runs
     * recorded before the workflow decided its compensation itself; new runs call `releaseHold`,
     * `returnTradeEscrow` and `failOrder`.
     */
    async failTrade({ orderId, failureCode, reason }: OrderRef & { failureCode: string; reason: string }): Promise<void> {
      await inTransaction(async (tx) => {
        const order = await loadOrder(orderId, tx);
        if (isTerminal(order.status)) return;
        const posted = await postedKinds(orderId, tx);
        if (posted.includes('hold') && !posted.includes('settle')) {
          await postPayment(tx, 'release', ledgerAccountsOf(order));
        }
        const trade = await lockTrade(orderId, tx);
        if (trade) await returnEscrow(tx, trade);
        await transitionOrder(order.id, { from: [order.status], to: 'failed', failureCode, reason }, tx);
      });
    },
  };
}

export type P2pActivities = ReturnType<typeof createP2pActivities>;
