import type { Caller } from '../auth/authentication';
import { isStaff } from '../auth/authentication';
import { config } from '../../platform/config';
import { AppError, validationError } from '../../platform/errors';
import { isUuid, uuidv7 } from '../../platform/ids';
import { formatAmount, parseAmount } from '../../domain/money';
import { normaliseKenyanPhone } from '../../domain/phone';
import {
  AD_ASSETS,
  AD_FIATS,
  AD_PAYMENT_METHODS,
  AD_SIDES,
  assetForFiatMinor,
  fiatValueMinor,
  referencePricesMinor,
  validateAd,
  type AdAsset,
  type AdInput,
  type AdPaymentMethod,
  type AdSide,
  type AdStatus,
  type PriceType,
} from '../../domain/p2p/ads';
import { refuseOnScreeningHit } from './compliance-service';
import { posterIdentity, phoneOf } from '../../repositories/users';
import {
  createAdRecord,
  findAd,
  insertTrade,
  listActiveAds,
  p2pActivity,
  type AdFilter,
  type AdRow,
  type HistoryRow,
} from '../../repositories/p2p';
import type { Tx } from '../../repositories/transaction';
import { decodeCursor, decodeCursorKey, encodeCursor, pageLimit, UUID_PATTERN, type Page } from './paging';

export interface AdView {
  ad_id: string;
  side: AdSide;
  asset: AdAsset;
  fiat: 'KES';
  price_type: PriceType;
  /** KES per whole unit of the asset; for a floating ad, today's price (reference price with the margin). */
  price: string;
  /** Floating ads: percent over the reference price; null for fixed prices. */
  price_margin_pct: string | null;
  /** In the asset. */
  total_amount: string;
  available_amount: string;
  /** In the fiat, per trade. */
  min_order: string;
  max_order: string;
  payment_methods: AdPaymentMethod[];
  terms: string | null;
  status: AdStatus;
  /** The user id of the ad's owner. */
  owner: string;
  created_at: string;
  updated_at: string;
}

const toAdView = (row: AdRow): AdView => ({
  ad_id: row.id,
  side: row.side,
  asset: row.asset,
  fiat: row.fiat,
  price_type: row.price_type,
  price: formatAmount(row.price_now, 'KES'),
  price_margin_pct: row.price_margin_pct,
  total_amount: formatAmount(row.total_amount_minor, row.asset),
  available_amount: formatAmount(row.available_amount_minor, row.asset),
  min_order: formatAmount(row.min_order_minor, 'KES'),
  max_order: formatAmount(row.max_order_minor, 'KES'),
  payment_methods: row.payment_methods,
  terms: row.terms,
  status: row.status,
  owner: row.owner_id,
  created_at: new Date(row.created_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString(),
});

const references = () => referencePricesMinor(config().p2p.referencePricesKes);

const loadAd = (adId: string) => findAd(adId, references());

/** Post an ad: KYC `verified`, screened against the blocklist, limits validated (SPEC §7). */
export async function createAd(caller: Caller, body: AdInput): Promise<AdView> {
  const ad = validateAd(body, references());
  const user = await posterIdentity(caller.id);
  if (!user) throw new AppError('unauthenticated', 'the account no longer exists');
  if (user.kyc_status !== 'verified') throw new AppError('kyc_required', 'posting a P2P ad needs verified KYC');
  await refuseOnScreeningHit('ad', caller.id, [
    { field: 'user.email', type: 'email', value: user.email },
    { field: 'user.phone', type: 'phone', value: user.phone },
    { field: 'user.full_name', type: 'name', value: user.full_name },
    { field: 'user.id_number', type: 'national_id', value: user.id_number },
  ]);
  const id = uuidv7();
  await createAdRecord({ id, ownerId: caller.id, ad });
  const row = await loadAd(id);
  return toAdView(row!);
}

export interface AdQuery {
  side?: string;
  asset?: string;
  fiat?: string;
  payment_method?: string;
  amount?: string;
  limit?: number;
  cursor?: string;
}

const encodeAdCursor = (row: AdRow): string => encodeCursor(String(row.side_rank), row.cursor_key, row.id);

function decodeAdCursor(cursor: string): { rank: number; key: string; id: string } {
  const [rank, key, id] = decodeCursorKey(cursor, [/^[01]$/, /^-?\d+$/, UUID_PATTERN]);
  return { rank: Number(rank), key, id };
}

const oneOf = <T extends string>(values: readonly T[], value: string, field: string): T => {
  if (!(values as readonly string[]).includes(value)) throw validationError(field, `must be one of ${values.join(', ')}`);
  return value as T;
};

/**
 * Active ads with something left, best price first: sell ads by ascending price, buy ads by descending
 * price (sell ads before buy ads when `side` is not given); keyset-paged on (side, price, id).
 */
export async function listAds(q: AdQuery): Promise<Page<AdView>> {
  const limit = pageLimit(q.limit);
  const filter: AdFilter = {};
  if (q.side !== undefined) filter.side = oneOf(AD_SIDES, q.side, 'side');
  if (q.asset !== undefined) filter.asset = oneOf(AD_ASSETS, q.asset, 'asset');
  if (q.fiat !== undefined) filter.fiat = oneOf(AD_FIATS, q.fiat, 'fiat');
  if (q.payment_method !== undefined) filter.paymentMethod = oneOf(AD_PAYMENT_METHODS, q.payment_method, 'payment_method');
  if (q.amount !== undefined) filter.fiatAmountMinor = parseAmount(q.amount, 'KES').toString();
  if (q.cursor !== undefined) filter.after = decodeAdCursor(q.cursor);
  const rows = await listActiveAds(filter, references(), limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(toAdView), next_cursor: rows.length > limit && last ? encodeAdCursor(last) : null };
}

/** One ad (public). */
export async function getAd(adId: string): Promise<AdView> {
  if (!isUuid(adId)) throw validationError('ad_id', 'must be a UUID');
  const row = await loadAd(adId);
  if (!row) throw new AppError('not_found', `ad ${adId} not found`);
  return toAdView(row);
}

// ---------------------------------------------------------------------------------------------
// Trades: a payment with method "p2p" (SPEC §5, §7)

export interface TradeQuote {
  adId: string;
  makerId: string;
  takerId: string;
  sellerId: string;
  buyerId: string;
  asset: AdAsset;
  assetAmountMinor: bigint;
  priceMinor: bigint;
  paymentMethod: AdPaymentMethod;
}

/**
 * Price a trade of `fiatMinor` KES against an ad, at today's price. The escrow lock in the workflow is
 * what decides whether it fits; this refuses what can never work.
 */
export async function quoteTrade(caller: Caller, destination: Record<string, string>, fiatMinor: bigint): Promise<TradeQuote> {
  const adId = destination.ad_id;
  const ad = adId ? await loadAd(adId) : undefined;
  if (!ad || ad.status === 'closed') throw validationError('destination.ad_id', 'no such P2P ad');
  if (ad.status !== 'active') throw new AppError('conflict', 'the ad is paused');
  if (ad.owner_id === caller.id) throw validationError('destination.ad_id', 'is your own ad');
  // The taker pays the fiat through the rail; a buy ad's maker would be the payer, which needs its own flow.
  if (ad.side !== 'sell') throw validationError('destination.ad_id', 'trades against buy ads are not supported yet; take a sell ad');
  const method = destination.payment_method as AdPaymentMethod;
  if (!ad.payment_methods.includes(method)) {
    throw validationError('destination.payment_method', `the ad accepts ${ad.payment_methods.join(', ')}`);
  }
  if (fiatMinor < BigInt(ad.min_order_minor) || fiatMinor > BigInt(ad.max_order_minor)) {
    throw validationError(
      'amount',
      `must be between the ad's min_order and max_order (${formatAmount(ad.min_order_minor, 'KES')} to ${formatAmount(ad.max_order_minor, 'KES')} KES)`,
    );
  }
  const price = BigInt(ad.price_now);
  const assetAmount = assetForFiatMinor(fiatMinor, price, ad.asset);
  if (assetAmount <= 0n) throw validationError('amount', 'is too small to buy any of the asset at this price');
  if (assetAmount > BigInt(ad.available_amount_minor)) {
    throw new AppError(
      'conflict',
      `the ad has ${formatAmount(ad.available_amount_minor, ad.asset)} ${ad.asset} left, worth ${formatAmount(fiatValueMinor(BigInt(ad.available_amount_minor), price, ad.asset), 'KES')} KES`,
    );
  }
  // The fiat leg pays the seller: by mobile money it needs the seller's phone, so refuse now what the rail would refuse later.
  if (method === 'mpesa' || method === 'airtel_money') {
    if (!normaliseKenyanPhone((await phoneOf(ad.owner_id)) ?? '')) {
      throw validationError(
        'destination.payment_method',
        `the seller has no Kenyan phone number to be paid by ${method}; choose another method the ad accepts (${ad.payment_methods.join(', ')})`,
      );
    }
  }
  return {
    adId: ad.id,
    makerId: ad.owner_id,
    takerId: caller.id,
    sellerId: ad.owner_id,
    buyerId: caller.id,
    asset: ad.asset,
    assetAmountMinor: assetAmount,
    priceMinor: price,
    paymentMethod: method,
  };
}

/** Record the trade of a new order, in the order's transaction. */
export async function recordTrade(orderId: string, quote: TradeQuote, tx: Tx): Promise<void> {
  await insertTrade(
    {
      orderId,
      adId: quote.adId,
      makerId: quote.makerId,
      takerId: quote.takerId,
      sellerId: quote.sellerId,
      buyerId: quote.buyerId,
      asset: quote.asset,
      assetAmountMinor: quote.assetAmountMinor.toString(),
      priceMinor: quote.priceMinor.toString(),
      paymentMethod: quote.paymentMethod,
    },
    tx,
  );
}

// ---------------------------------------------------------------------------------------------
// History: trades as maker or taker, and ad events

export interface P2pHistoryItem {
  /** `trade` or `ad_event`. */
  type: 'trade' | 'ad_event';
  /** The order id of a trade, the event id of an ad event; the cursor key. */
  id: string;
  at: string;
  ad_id: string;
  /** Ad events: `created`, `paused`, `resumed`, `filled`, `closed`. */
  event?: string;
  detail?: string | null;
  /** Trades: the user's role (`maker` or `taker`; null when staff list everyone's). */
  role?: 'maker' | 'taker' | null;
  order_id?: string;
  order_status?: string;
  maker_id?: string;
  taker_id?: string;
  asset?: string;
  /** Of the asset. */
  asset_amount?: string;
  /** KES per unit of the asset. */
  price?: string;
  /** KES. */
  fiat_amount?: string;
  payment_method?: string;
  /** `locked`, `released`, `returned`, `refused` or `none` (not locked yet). */
  escrow_state?: string;
}

function toHistoryItem(row: HistoryRow, userId: string | null): P2pHistoryItem {
  if (row.type === 'ad_event') {
    return { type: 'ad_event', id: row.id, at: new Date(row.at).toISOString(), ad_id: row.ad_id, event: row.event!, detail: row.detail };
  }
  return {
    type: 'trade',
    id: row.id,
    at: new Date(row.at).toISOString(),
    ad_id: row.ad_id,
    role: userId === null ? null : row.maker_id === userId ? 'maker' : 'taker',
    order_id: row.id,
    order_status: row.order_status!,
    maker_id: row.maker_id!,
    taker_id: row.taker_id!,
    asset: row.asset!,
    asset_amount: formatAmount(row.asset_amount_minor!, row.asset!),
    price: formatAmount(row.price_minor!, 'KES'),
    fiat_amount: formatAmount(row.fiat_amount_minor!, 'KES'),
    payment_method: row.payment_method!,
    escrow_state: row.escrow_state!,
  };
}

/** The caller's P2P activity (staff: everyone's, or one user's with `user_id`), newest first, keyset-paged. */
export async function p2pHistory(caller: Caller, q: { limit?: number; cursor?: string; user_id?: string }): Promise<Page<P2pHistoryItem>> {
  const limit = pageLimit(q.limit);
  let userId: string | null = caller.id;
  if (isStaff(caller)) {
    if (q.user_id !== undefined && !isUuid(q.user_id)) throw validationError('user_id', 'must be a UUID');
    userId = q.user_id ?? null;
  }
  const before = q.cursor !== undefined ? decodeCursor(q.cursor) : null;
  const rows = await p2pActivity(userId, before, limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map((row) => toHistoryItem(row, userId)),
    next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null,
  };
}
