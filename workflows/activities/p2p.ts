import { ApplicationFailure } from '@temporalio/activity';
import type { Transaction } from 'sequelize';
import { InsufficientFunds, postLines, postedKinds } from '../../repositories/ledger';
import { formatAmount } from '../../domain/money';
import { isTerminal } from '../../domain/orders';
import { lockOrder, transitionOrder } from '../../repositories/orders';
import { inTransaction } from '../../repositories/transaction';
import { escrowLines, type EscrowKind } from '../../domain/p2p/escrow';
import { fiatValueMinor } from '../../domain/p2p/ads';
import { reversedLegs, tradeLegs, TRADE_REVERSE_KIND, type WalletTrade } from '../../domain/p2p/wallet-trade';
import { closeAdAndReturnEscrow, lockTrade, recordAdEvent, setEscrowState, takeFromAd, type TradeRow } from '../../repositories/p2p';
import { CONFLICT, ORDER_NOT_FOUND, TRADE_NOT_FOUND } from '../failure-types';

interface OrderRef {
  orderId: string;
}

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
      throw ApplicationFailure.nonRetryable(`the trade cannot be reversed: ${err.account} no longer holds what it received`, CONFLICT);
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

/** The side effects of the `trade` workflow, idempotent on the order id. */
export function createP2pActivities() {
  const loadOrder = async (orderId: string, tx: Transaction) => {
    const order = await lockOrder(orderId, tx);
    if (!order) throw ApplicationFailure.nonRetryable(`order ${orderId} not found`, ORDER_NOT_FOUND);
    return order;
  };

  return {
    /**
     * Settle a trade between wallets, in one database transaction (docs/p2p.md#trades): take the traded amount from the
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
          if (!trade) throw ApplicationFailure.nonRetryable(`no P2P trade for order ${orderId}`, TRADE_NOT_FOUND);
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
  };
}

export type P2pActivities = ReturnType<typeof createP2pActivities>;
