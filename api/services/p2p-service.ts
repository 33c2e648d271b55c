import { QueryTypes, type Transaction } from 'sequelize';
import type { Caller } from '../auth/authentication';
import { isStaff } from '../auth/authentication';
import { config } from '../../platform/config';
import { database } from '../../platform/database';
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
import { pageLimit, type Page } from './paging';

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

interface AdRow {
  id: string;
  owner_id: string;
  side: AdSide;
  asset: AdAsset;
  fiat: 'KES';
  price_type: PriceType;
  price_now: string;
  price_margin_pct: string | null;
  total_amount_minor: string;
  available_amount_minor: string;
  min_order_minor: string;
  max_order_minor: string;
  payment_methods: AdPaymentMethod[];
  terms: string | null;
  status: AdStatus;
  created_at: Date;
  updated_at: Date;
  side_rank: number;
  cursor_key: string;
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

/**
 * Ads with today's price (`price_now`: the fixed price, or the reference price with the margin, rounded
 * half up to a cent) and the listing's sort key: sell ads cheapest first, buy ads highest first.
 */
function pricedAds(): { sql: string; replacements: Record<string, string> } {
  const ref = references();
  const values = AD_ASSETS.map((_, i) => `(:refAsset${i}, :refPrice${i}::numeric)`).join(', ');
  const replacements: Record<string, string> = {};
  AD_ASSETS.forEach((asset, i) => {
    replacements[`refAsset${i}`] = asset;
    replacements[`refPrice${i}`] = ref[asset].toString();
  });
  const sql = `WITH ref (asset, price) AS (VALUES ${values}),
    priced AS (
      SELECT a.*, coalesce(a.price_minor, round(ref.price * (100 + a.price_margin_pct) / 100)) AS price_now
        FROM p2p_ads a JOIN ref ON ref.asset = a.asset
    ),
    listed AS (
      SELECT p.*, CASE p.side WHEN 'sell' THEN 0 ELSE 1 END AS side_rank,
             CASE p.side WHEN 'sell' THEN p.price_now ELSE -p.price_now END AS sort_key
        FROM priced p
    )`;
  return { sql, replacements };
}

const AD_COLUMNS = `id, owner_id, side, asset, fiat, price_type, price_now::text AS price_now, price_margin_pct::text AS price_margin_pct,
  total_amount_minor::text AS total_amount_minor, available_amount_minor::text AS available_amount_minor,
  min_order_minor::text AS min_order_minor, max_order_minor::text AS max_order_minor, payment_methods, terms, status,
  created_at, updated_at, side_rank, sort_key::text AS cursor_key`;

async function loadAd(adId: string, tx?: Transaction): Promise<AdRow | undefined> {
  const priced = pricedAds();
  const [row] = await database().query<AdRow>(`${priced.sql} SELECT ${AD_COLUMNS} FROM listed WHERE id = :adId`, {
    replacements: { ...priced.replacements, adId },
    type: QueryTypes.SELECT,
    transaction: tx,
  });
  return row;
}

/** Post an ad: KYC `verified`, screened against the blocklist, limits validated (SPEC §7). */
export async function createAd(caller: Caller, body: AdInput): Promise<AdView> {
  const ad = validateAd(body, references());
  const sequelize = database();
  const [user] = await sequelize.query<{
    kyc_status: string;
    email: string;
    phone: string | null;
    full_name: string;
    id_number: string | null;
  }>(
    `SELECT u.kyc_status, u.email, u.phone, u.full_name, k.id_number
       FROM users u LEFT JOIN kyc_records k ON k.user_id = u.id WHERE u.id = :id`,
    { replacements: { id: caller.id }, type: QueryTypes.SELECT },
  );
  if (!user) throw new AppError('unauthenticated', 'the account no longer exists');
  if (user.kyc_status !== 'verified') throw new AppError('kyc_required', 'posting a P2P ad needs verified KYC');
  await refuseOnScreeningHit('ad', caller.id, [
    { field: 'user.email', type: 'email', value: user.email },
    { field: 'user.phone', type: 'phone', value: user.phone },
    { field: 'user.full_name', type: 'name', value: user.full_name },
    { field: 'user.id_number', type: 'national_id', value: user.id_number },
  ]);
  const id = uuidv7();
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `INSERT INTO p2p_ads (id, owner_id, side, asset, fiat, price_type, price_minor, price_margin_pct, total_amount_minor,
                            available_amount_minor, min_order_minor, max_order_minor, payment_methods, terms)
       VALUES (:id, :owner, :side, :asset, :fiat, :priceType, :price, :margin, :total, :total, :min, :max, ARRAY[:methods]::text[], :terms)`,
      {
        replacements: {
          id,
          owner: caller.id,
          side: ad.side,
          asset: ad.asset,
          fiat: ad.fiat,
          priceType: ad.priceType,
          price: ad.priceMinor?.toString() ?? null,
          margin: ad.priceMarginPct,
          total: ad.totalAmountMinor.toString(),
          min: ad.minOrderMinor.toString(),
          max: ad.maxOrderMinor.toString(),
          methods: ad.paymentMethods,
          terms: ad.terms,
        },
        transaction,
      },
    );
    await sequelize.query(`INSERT INTO p2p_ad_events (id, ad_id, owner_id, event) VALUES (:eventId, :id, :owner, 'created')`, {
      replacements: { eventId: uuidv7(), id, owner: caller.id },
      transaction,
    });
  });
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

const encodeAdCursor = (row: AdRow): string => Buffer.from(`v1:${row.side_rank}:${row.cursor_key}:${row.id}`).toString('base64url');

function decodeAdCursor(cursor: string): { rank: number; key: string; id: string } {
  const match = /^v1:([01]):(-?\d+):([0-9a-f-]{36})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match || !isUuid(match[3])) throw validationError('cursor', 'is not a cursor returned by this endpoint');
  return { rank: Number(match[1]), key: match[2], id: match[3] };
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
  const priced = pricedAds();
  const where = [`status = 'active'`, 'available_amount_minor > 0'];
  const replacements: Record<string, unknown> = { ...priced.replacements, limit: limit + 1 };
  if (q.side !== undefined) {
    replacements.side = oneOf(AD_SIDES, q.side, 'side');
    where.push('side = :side');
  }
  if (q.asset !== undefined) {
    replacements.asset = oneOf(AD_ASSETS, q.asset, 'asset');
    where.push('asset = :asset');
  }
  if (q.fiat !== undefined) {
    replacements.fiat = oneOf(AD_FIATS, q.fiat, 'fiat');
    where.push('fiat = :fiat');
  }
  if (q.payment_method !== undefined) {
    replacements.method = oneOf(AD_PAYMENT_METHODS, q.payment_method, 'payment_method');
    where.push(':method = ANY (payment_methods)');
  }
  if (q.amount !== undefined) {
    // The amount (fiat) fits the ad's limits and what is left of it.
    replacements.amount = parseAmount(q.amount, 'KES').toString();
    where.push(
      'min_order_minor <= :amount',
      'max_order_minor >= :amount',
      `floor(available_amount_minor * price_now / CASE asset WHEN 'BTC' THEN 1e8 WHEN 'ETH' THEN 1e18 ELSE 1e6 END) >= :amount`,
    );
  }
  if (q.cursor !== undefined) {
    const after = decodeAdCursor(q.cursor);
    Object.assign(replacements, { afterRank: after.rank, afterKey: after.key, afterId: after.id });
    where.push('(side_rank, sort_key, id) > (:afterRank, :afterKey::numeric, :afterId::uuid)');
  }
  const rows = await database().query<AdRow>(
    `${priced.sql} SELECT ${AD_COLUMNS} FROM listed WHERE ${where.join(' AND ')} ORDER BY side_rank, sort_key, id LIMIT :limit`,
    { replacements, type: QueryTypes.SELECT },
  );
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
    const [seller] = await database().query<{ phone: string | null }>('SELECT phone FROM users WHERE id = :id', {
      replacements: { id: ad.owner_id },
      type: QueryTypes.SELECT,
    });
    if (!normaliseKenyanPhone(seller?.phone ?? '')) {
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
export async function recordTrade(orderId: string, quote: TradeQuote, transaction: Transaction): Promise<void> {
  await database().query(
    `INSERT INTO p2p_trades (order_id, ad_id, maker_id, taker_id, seller_id, buyer_id, asset, asset_amount_minor, price_minor, payment_method)
     VALUES (:orderId, :adId, :makerId, :takerId, :sellerId, :buyerId, :asset, :assetAmount, :price, :method)`,
    {
      replacements: {
        orderId,
        adId: quote.adId,
        makerId: quote.makerId,
        takerId: quote.takerId,
        sellerId: quote.sellerId,
        buyerId: quote.buyerId,
        asset: quote.asset,
        assetAmount: quote.assetAmountMinor.toString(),
        price: quote.priceMinor.toString(),
        method: quote.paymentMethod,
      },
      transaction,
    },
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

interface HistoryRow {
  type: 'trade' | 'ad_event';
  id: string;
  at: Date;
  ad_id: string;
  event: string | null;
  detail: string | null;
  order_status: string | null;
  maker_id: string | null;
  taker_id: string | null;
  asset: AdAsset | null;
  asset_amount_minor: string | null;
  price_minor: string | null;
  fiat_amount_minor: string | null;
  payment_method: string | null;
  escrow_state: string | null;
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
  const replacements: Record<string, unknown> = { userId, limit: limit + 1 };
  let after = '';
  if (q.cursor !== undefined) {
    const decoded = Buffer.from(q.cursor, 'base64url').toString();
    const id = decoded.startsWith('v1:') ? decoded.slice(3) : '';
    if (!isUuid(id)) throw validationError('cursor', 'is not a cursor returned by this endpoint');
    replacements.after = id;
    after = 'AND h.id < :after';
  }
  const rows = await database().query<HistoryRow>(
    `SELECT h.* FROM (
       SELECT 'trade' AS type, t.order_id AS id, o.created_at AS at, t.ad_id, NULL AS event, NULL AS detail, o.status AS order_status,
              t.maker_id, t.taker_id, t.asset, t.asset_amount_minor::text AS asset_amount_minor, t.price_minor::text AS price_minor,
              o.amount_minor::text AS fiat_amount_minor, t.payment_method, t.escrow_state
         FROM p2p_trades t JOIN orders o ON o.id = t.order_id
        WHERE (CAST(:userId AS uuid) IS NULL OR t.maker_id = :userId OR t.taker_id = :userId)
       UNION ALL
       SELECT 'ad_event', e.id, e.at, e.ad_id, e.event, e.detail, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
         FROM p2p_ad_events e
        WHERE (CAST(:userId AS uuid) IS NULL OR e.owner_id = :userId)
     ) h WHERE true ${after}
     ORDER BY h.id DESC LIMIT :limit`,
    { replacements, type: QueryTypes.SELECT },
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map((row) => toHistoryItem(row, userId)),
    next_cursor: rows.length > limit && last ? Buffer.from(`v1:${last.id}`).toString('base64url') : null,
  };
}
