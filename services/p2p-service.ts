import type { Caller } from '../domain/caller';
import { isStaff } from '../domain/caller';
import { config } from '../platform/config';
import { AppError, validationError } from '../platform/errors';
import { isUuid, uuidv7 } from '../platform/ids';
import { formatAmount, parseAmount, type Currency } from '../domain/money';
import {
  AD_ASSETS,
  AD_FIATS,
  AD_PAYMENT_METHODS,
  AD_SIDES,
  assetForFiatMinor,
  AD_STATUSES,
  fiatValueMinor,
  floatingPriceMinor,
  referencePricesMinor,
  validateAd,
  type AdAsset,
  type AdInput,
  type AdPaymentMethod,
  type AdSide,
  type AdStatus,
  type PriceType,
} from '../domain/p2p/ads';
import { refuseOnScreeningHit } from './screening';
import { posterIdentity } from '../repositories/users';
import { InsufficientFunds } from '../repositories/ledger';
import { adEscrow } from '../domain/p2p/wallet-trade';
import {
  closeAdAndReturnEscrow,
  createAdRecord,
  findAd,
  lockAd,
  recordAdEvent,
  updateAd as updateAdRecord,
  insertTrade,
  listActiveAds,
  p2pActivity,
  type AdFilter,
  type AdRow,
  type HistoryRow,
} from '../repositories/p2p';
import { inTransaction, type Tx } from '../repositories/transaction';
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

const floatingPriceOf = (asset: AdAsset, marginPct: string): string => floatingPriceMinor(references()[asset], marginPct).toString();

export interface AdChange {
  price?: string;
  price_margin_pct?: string;
  min_order?: string;
  max_order?: string;
  terms?: string | null;
  status?: string;
}

const AD_CHANGE_FIELDS = ['price', 'price_margin_pct', 'min_order', 'max_order', 'terms', 'status'] as const;

/**
 * Change an ad (owner only): price, limits, terms, status (active ↔ paused, → closed). Validated like a new
 * ad (min ≤ max ≤ total × price). Closing returns what is left in escrow to the owner's wallet; a closed ad
 * is final (409). A buy ad's escrow was funded at its price, so its price cannot change (close it and post
 * another). Each change is an event in the ad's history.
 */
export async function changeAd(caller: Caller, adId: string, body: AdChange): Promise<AdView> {
  if (!isUuid(adId)) throw validationError('ad_id', 'must be a UUID');
  const given = AD_CHANGE_FIELDS.filter((f) => body[f] !== undefined);
  if (given.length === 0) throw validationError('body', `give at least one of ${AD_CHANGE_FIELDS.join(', ')}`);
  const status = body.status === undefined ? undefined : oneOf(AD_STATUSES, body.status, 'status');
  // Each field's own shape first, whatever the ad: the rules across fields need the ad, under its lock.
  for (const field of ['price', 'min_order', 'max_order'] as const) {
    if (body[field] !== undefined) parseAmount(body[field], 'KES', field);
  }
  if (
    body.price_margin_pct !== undefined &&
    (typeof body.price_margin_pct !== 'string' || !/^[+-]?\d{1,3}(\.\d{1,2})?$/.test(body.price_margin_pct))
  ) {
    throw validationError('price_margin_pct', 'must be a percentage with at most 2 decimals, e.g. "1.5" or "-0.75"');
  }
  if (body.terms !== undefined && body.terms !== null && (typeof body.terms !== 'string' || body.terms.length > 1000)) {
    throw validationError('terms', 'must be at most 1000 characters');
  }
  await inTransaction(async (tx) => {
    const ad = await lockAd(adId, tx);
    if (!ad) throw new AppError('not_found', `ad ${adId} not found`);
    if (ad.owner_id !== caller.id) throw new AppError('forbidden', 'only the ad owner can change it');
    if (ad.status === 'closed') throw new AppError('conflict', 'the ad is closed; a closed ad cannot change');
    const repriced = body.price !== undefined || body.price_margin_pct !== undefined;
    if (repriced && ad.side === 'buy') {
      throw new AppError('conflict', "a buy ad's escrow was funded at its price; close it and post a new ad to change the price");
    }
    const valid = validateAd(
      {
        side: ad.side,
        asset: ad.asset,
        price_type: ad.price_type,
        price: ad.price_type === 'fixed' ? (body.price ?? formatAmount(ad.price_minor!, 'KES')) : body.price,
        price_margin_pct: ad.price_type === 'floating' ? (body.price_margin_pct ?? ad.price_margin_pct!) : body.price_margin_pct,
        total_amount: formatAmount(ad.total_amount_minor, ad.asset),
        min_order: body.min_order ?? formatAmount(ad.min_order_minor, 'KES'),
        max_order: body.max_order ?? formatAmount(ad.max_order_minor, 'KES'),
        payment_methods: ad.payment_methods,
        terms: body.terms === undefined ? ad.terms : body.terms,
      },
      references(),
    );
    const edited = given.filter((f) => f !== 'status');
    const next = status ?? ad.status;
    await updateAdRecord(
      adId,
      {
        priceMinor: valid.priceMinor?.toString() ?? null,
        priceMarginPct: valid.priceMarginPct,
        minOrderMinor: valid.minOrderMinor.toString(),
        maxOrderMinor: valid.maxOrderMinor.toString(),
        terms: valid.terms,
        status: next === 'closed' ? ad.status : next,
      },
      tx,
    );
    const event = (name: string, detail: string | null) => recordAdEvent({ adId, ownerId: ad.owner_id, event: name, detail }, tx);
    if (edited.length > 0) await event('edited', `changed ${edited.join(', ')}`);
    if (next === 'paused' && ad.status === 'active') await event('paused', null);
    if (next === 'active' && ad.status === 'paused') await event('resumed', null);
    if (next === 'closed') {
      const left = await closeAdAndReturnEscrow(ad, tx);
      const currency = ad.side === 'sell' ? ad.asset : 'KES';
      await event('closed', `${formatAmount(left, currency)} ${currency} returned from escrow`);
    }
  });
  const row = await loadAd(adId);
  return toAdView(row!);
}

/**
 * Post an ad: KYC `verified`, screened against the blocklist, limits validated, and funded from the owner's
 * wallet (a sell ad's asset, a buy ad's total × price in KES) into the ad's escrow (docs/p2p.md#escrow). A wallet that
 * cannot fund it is refused by the database: 422 `insufficient_funds`, and no ad exists.
 */
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
  const price = ad.priceMinor ?? BigInt(floatingPriceOf(ad.asset, ad.priceMarginPct!));
  const escrow = adEscrow({ side: ad.side, asset: ad.asset, totalAmountMinor: ad.totalAmountMinor, priceMinor: price });
  try {
    await createAdRecord({ id, ownerId: caller.id, ad, escrow });
  } catch (err) {
    if (err instanceof InsufficientFunds) {
      throw new AppError(
        'insufficient_funds',
        `the ${escrow.currency} wallet cannot fund this ad (${formatAmount(escrow.amountMinor, escrow.currency)} ${escrow.currency} goes into its escrow)`,
      );
    }
    throw err;
  }
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
// Trades: a payment with method "p2p" (docs/p2p.md#trades)

export interface TradeQuote {
  adId: string;
  side: AdSide;
  makerId: string;
  takerId: string;
  sellerId: string;
  buyerId: string;
  asset: AdAsset;
  assetAmountMinor: bigint;
  priceMinor: bigint;
  paymentMethod: AdPaymentMethod;
  /** What the taker pays from their own wallet: KES against a sell ad, the asset against a buy ad. */
  funding: { currency: Currency; amountMinor: bigint };
}

/**
 * Price a trade of `fiatMinor` KES against either side of an ad, at today's price. Settling it in the
 * workflow (one conditional update of the ad, both legs between wallets) is what decides whether it fits;
 * this refuses what can never work.
 */
export async function quoteTrade(caller: Caller, destination: Record<string, string>, fiatMinor: bigint): Promise<TradeQuote> {
  const adId = destination.ad_id;
  const ad = adId ? await loadAd(adId) : undefined;
  if (!ad || ad.status === 'closed') throw validationError('destination.ad_id', 'no such P2P ad');
  if (ad.status !== 'active') throw new AppError('conflict', 'the ad is paused');
  if (ad.owner_id === caller.id) throw validationError('destination.ad_id', 'is your own ad');
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
  if (assetAmount <= 0n) throw validationError('amount', 'is too small to trade any of the asset at this price');
  if (assetAmount > BigInt(ad.available_amount_minor)) {
    throw new AppError(
      'conflict',
      `the ad has ${formatAmount(ad.available_amount_minor, ad.asset)} ${ad.asset} left, worth ${formatAmount(fiatValueMinor(BigInt(ad.available_amount_minor), price, ad.asset), 'KES')} KES`,
    );
  }
  const sell = ad.side === 'sell';
  if (!sell && fiatValueMinor(assetAmount, price, ad.asset) <= 0n)
    throw validationError('amount', 'is too small to sell any of the asset at this price');
  return {
    adId: ad.id,
    side: ad.side,
    makerId: ad.owner_id,
    takerId: caller.id,
    sellerId: sell ? ad.owner_id : caller.id,
    buyerId: sell ? caller.id : ad.owner_id,
    asset: ad.asset,
    assetAmountMinor: assetAmount,
    priceMinor: price,
    paymentMethod: method,
    funding: sell ? { currency: 'KES', amountMinor: fiatMinor } : { currency: ad.asset, amountMinor: assetAmount },
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
