import { transfer, type LedgerLine } from '../ledger';
import type { Currency } from '../money';
import { fiatValueMinor, type AdAsset, type AdSide } from './ads';

/**
 * P2P on wallets (docs/p2p.md#trades). An ad's escrow is `escrow:<ad_id>`: a sell ad's asset, or a buy ad's KES
 * (total × price), moved there from the owner's wallet when the ad is posted and back when it closes or
 * fills. A trade settles both legs between wallets: the taker's side to the owner, the escrowed side to the
 * taker; an approved appeal mirrors both.
 */

export const walletOf = (userId: string, currency: string): string => `wallet:${userId}:${currency}`;
export const adEscrowAccount = (adId: string): string => `escrow:${adId}`;

/** What an ad holds in escrow: its currency and amount when posted. */
export function adEscrow(ad: { side: AdSide; asset: AdAsset; totalAmountMinor: bigint; priceMinor: bigint }): {
  currency: Currency;
  amountMinor: bigint;
} {
  return ad.side === 'sell'
    ? { currency: ad.asset, amountMinor: ad.totalAmountMinor }
    : { currency: 'KES', amountMinor: fiatValueMinor(ad.totalAmountMinor, ad.priceMinor, ad.asset) };
}

export const TRADE_LEG_KINDS = ['trade_fiat', 'trade_asset'] as const;
export type TradeLegKind = (typeof TRADE_LEG_KINDS)[number];
export const TRADE_REVERSE_KIND: Record<TradeLegKind, string> = {
  trade_fiat: 'trade_fiat_reverse',
  trade_asset: 'trade_asset_reverse',
};

export interface WalletTrade {
  adId: string;
  side: AdSide;
  ownerId: string;
  takerId: string;
  asset: string;
  assetAmountMinor: string;
  /** The KES that change hands. */
  fiatAmountMinor: string;
}

export interface TradeLeg {
  kind: TradeLegKind;
  currency: string;
  lines: LedgerLine[];
}

/**
 * The two legs of a trade. Against a sell ad the taker pays KES from their wallet to the owner's and receives
 * the asset from the ad's escrow; against a buy ad the taker gives the asset from their wallet to the owner
 * and receives KES from the escrow. The taker's own payment comes first, so an unfunded taker is refused
 * before anything leaves the escrow.
 */
export function tradeLegs(t: WalletTrade): TradeLeg[] {
  const escrow = adEscrowAccount(t.adId);
  if (t.side === 'sell') {
    return [
      { kind: 'trade_fiat', currency: 'KES', lines: transfer(walletOf(t.takerId, 'KES'), walletOf(t.ownerId, 'KES'), t.fiatAmountMinor) },
      { kind: 'trade_asset', currency: t.asset, lines: transfer(escrow, walletOf(t.takerId, t.asset), t.assetAmountMinor) },
    ];
  }
  return [
    {
      kind: 'trade_asset',
      currency: t.asset,
      lines: transfer(walletOf(t.takerId, t.asset), walletOf(t.ownerId, t.asset), t.assetAmountMinor),
    },
    { kind: 'trade_fiat', currency: 'KES', lines: transfer(escrow, walletOf(t.takerId, 'KES'), t.fiatAmountMinor) },
  ];
}

/**
 * An approved appeal's mirror of a settled trade, between the two wallets: whoever received a leg gives it
 * back to whoever paid it — the owner's wallet stands in for the escrow, which paid on the owner's behalf.
 */
export function reversedLegs(t: WalletTrade): TradeLeg[] {
  return tradeLegs(t).map((leg) => {
    const [debit, credit] = [leg.lines.find((l) => l.direction === 'debit')!, leg.lines.find((l) => l.direction === 'credit')!];
    const payer = debit.account.startsWith('escrow:') ? walletOf(t.ownerId, leg.currency) : debit.account;
    return {
      kind: leg.kind,
      currency: leg.currency,
      lines: transfer(credit.account, payer, debit.amountMinor),
    };
  });
}
