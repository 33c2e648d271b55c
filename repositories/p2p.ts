import { QueryTypes, type Transaction } from 'sequelize';
import { models } from '../models';
import { Conditions } from './filters';
import { uuidv7 } from '../platform/ids';
import { AD_ASSETS, type AdAsset, type AdPaymentMethod, type AdSide, type AdStatus, type PriceType, type ValidAd } from '../domain/p2p/ads';
import { adEscrowAccount, walletOf } from '../domain/p2p/wallet-trade';
import { transfer } from '../domain/ledger';
import { balanceOf, postLines } from './ledger';

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
): Promise<{ available_amount_minor: string; owner_id: string; side: AdSide; asset: AdAsset } | undefined> {
  const [taken] = await models().query<{ available_amount_minor: string; owner_id: string; side: AdSide; asset: AdAsset }>(
    `UPDATE p2p_ads SET available_amount_minor = available_amount_minor - :amount, updated_at = now()
      WHERE id = :adId AND status = 'active' AND available_amount_minor >= :amount
     RETURNING available_amount_minor::text, owner_id, side, asset`,
    { replacements: { amount, adId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return taken;
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

// --- ads and trades, as the P2P API reads and writes them

/** The stored fields of an ad that both its listing and a change to it read. */
interface AdFields {
  id: string;
  owner_id: string;
  side: AdSide;
  asset: AdAsset;
  price_type: PriceType;
  price_margin_pct: string | null;
  total_amount_minor: string;
  available_amount_minor: string;
  min_order_minor: string;
  max_order_minor: string;
  payment_methods: AdPaymentMethod[];
  terms: string | null;
  status: AdStatus;
}

/** An ad with today's price and its listing sort key. */
export interface AdRow extends AdFields {
  fiat: 'KES';
  price_now: string;
  created_at: Date;
  updated_at: Date;
  side_rank: number;
  cursor_key: string;
}

/**
 * Ads with today's price (`price_now`: the fixed price, or the reference price with the margin, rounded
 * half up to a cent) and the listing's sort key: sell ads cheapest first, buy ads highest first.
 */
function pricedAds(ref: Record<AdAsset, bigint>): { sql: string; replacements: Record<string, string> } {
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

/** The ad, priced at today's reference prices (`ref`, KES minor units per whole asset). */
export async function findAd(adId: string, ref: Record<AdAsset, bigint>, tx?: Transaction): Promise<AdRow | undefined> {
  const priced = pricedAds(ref);
  const [row] = await models().query<AdRow>(`${priced.sql} SELECT ${AD_COLUMNS} FROM listed WHERE id = :adId`, {
    replacements: { ...priced.replacements, adId },
    type: QueryTypes.SELECT,
    transaction: tx,
  });
  return row;
}

export interface AdFilter {
  side?: AdSide;
  asset?: AdAsset;
  fiat?: string;
  paymentMethod?: string;
  /** Only ads whose limits and what is left fit this fiat amount (KES minor units). */
  fiatAmountMinor?: string;
  /** Keyset: only ads after this (side rank, sort key, id). */
  after?: { rank: number; key: string; id: string };
}

/**
 * Active ads with something left, best price first: sell ads by ascending price, buy ads by descending
 * price (sell ads before buy ads); at most `limit`.
 */
export async function listActiveAds(filter: AdFilter, ref: Record<AdAsset, bigint>, limit: number): Promise<AdRow[]> {
  const priced = pricedAds(ref);
  const where = new Conditions({ ...priced.replacements, limit }).add([`status = 'active'`, 'available_amount_minor > 0']);
  if (filter.side !== undefined) where.add('side = :side', { side: filter.side });
  if (filter.asset !== undefined) where.add('asset = :asset', { asset: filter.asset });
  if (filter.fiat !== undefined) where.add('fiat = :fiat', { fiat: filter.fiat });
  if (filter.paymentMethod !== undefined) where.add(':method = ANY (payment_methods)', { method: filter.paymentMethod });
  if (filter.fiatAmountMinor !== undefined) {
    // The amount (fiat) fits the ad's limits and what is left of it.
    where.add(
      [
        'min_order_minor <= :amount',
        'max_order_minor >= :amount',
        `floor(available_amount_minor * price_now / CASE asset WHEN 'BTC' THEN 1e8 WHEN 'ETH' THEN 1e18 ELSE 1e6 END) >= :amount`,
      ],
      { amount: filter.fiatAmountMinor },
    );
  }
  if (filter.after !== undefined) {
    where.add('(side_rank, sort_key, id) > (:afterRank, :afterKey::numeric, :afterId::uuid)', {
      afterRank: filter.after.rank,
      afterKey: filter.after.key,
      afterId: filter.after.id,
    });
  }
  return models().query<AdRow>(
    `${priced.sql} SELECT ${AD_COLUMNS} FROM listed ${where.where} ORDER BY side_rank, sort_key, id LIMIT :limit`,
    {
      replacements: where.replacements,
      type: QueryTypes.SELECT,
    },
  );
}

/**
 * Post an ad, fund its escrow from the owner's wallet (`escrow`: the currency and amount) and record its
 * `created` event, together: the database refuses a wallet that cannot fund it (`InsufficientFunds`), and
 * then no ad exists.
 */
export async function createAdRecord(a: {
  id: string;
  ownerId: string;
  ad: ValidAd;
  escrow: { currency: string; amountMinor: bigint };
}): Promise<void> {
  const { ad } = a;
  await models().transaction(async (transaction) => {
    await models().query(
      `INSERT INTO p2p_ads (id, owner_id, side, asset, fiat, price_type, price_minor, price_margin_pct, total_amount_minor,
                            available_amount_minor, min_order_minor, max_order_minor, payment_methods, terms)
       VALUES (:id, :owner, :side, :asset, :fiat, :priceType, :price, :margin, :total, :total, :min, :max, ARRAY[:methods]::text[], :terms)`,
      {
        replacements: {
          id: a.id,
          owner: a.ownerId,
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
    await postLines(transaction, {
      adId: a.id,
      kind: 'ad_fund',
      currency: a.escrow.currency,
      lines: transfer(walletOf(a.ownerId, a.escrow.currency), adEscrowAccount(a.id), a.escrow.amountMinor.toString()),
    });
    await recordAdEvent({ adId: a.id, ownerId: a.ownerId, event: 'created', detail: null }, transaction);
  });
}

/** An ad's stored fields, as a change to it reads them under its row lock. */
export interface LockedAd extends AdFields {
  price_minor: string | null;
}

/** The ad, locked for the rest of the transaction (every trade and change to it waits on this lock). */
export async function lockAd(adId: string, tx: Transaction): Promise<LockedAd | undefined> {
  const [row] = await models().query<LockedAd>(
    `SELECT id, owner_id, side, asset, price_type, price_minor::text AS price_minor, price_margin_pct::text AS price_margin_pct,
            total_amount_minor::text AS total_amount_minor, available_amount_minor::text AS available_amount_minor,
            min_order_minor::text AS min_order_minor, max_order_minor::text AS max_order_minor, payment_methods, terms, status
       FROM p2p_ads WHERE id = :adId FOR UPDATE`,
    { replacements: { adId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return row;
}

/** Change an ad's price, limits, terms or status. */
export async function updateAd(
  adId: string,
  change: {
    priceMinor: string | null;
    priceMarginPct: string | null;
    minOrderMinor: string;
    maxOrderMinor: string;
    terms: string | null;
    status: AdStatus;
  },
  tx: Transaction,
): Promise<void> {
  await models().query(
    `UPDATE p2p_ads SET price_minor = :price, price_margin_pct = :margin, min_order_minor = :min, max_order_minor = :max,
                        terms = :terms, status = :status, updated_at = now()
      WHERE id = :adId`,
    {
      replacements: {
        adId,
        price: change.priceMinor,
        margin: change.priceMarginPct,
        min: change.minOrderMinor,
        max: change.maxOrderMinor,
        terms: change.terms,
        status: change.status,
      },
      transaction: tx,
    },
  );
}

/**
 * Close an ad (its lock held by the caller) and return what is left in its escrow to the owner's wallet,
 * once. Every movement of the escrow happens under the ad's lock, so its balance read here is final.
 */
export async function closeAdAndReturnEscrow(ad: Pick<LockedAd, 'id' | 'owner_id' | 'side' | 'asset'>, tx: Transaction): Promise<string> {
  await models().query(`UPDATE p2p_ads SET status = 'closed', updated_at = now() WHERE id = :adId`, {
    replacements: { adId: ad.id },
    transaction: tx,
  });
  const currency = ad.side === 'sell' ? ad.asset : 'KES';
  const left = await balanceOf(adEscrowAccount(ad.id), currency, tx);
  if (BigInt(left) > 0n) {
    await postLines(tx, {
      adId: ad.id,
      kind: 'ad_return',
      currency,
      lines: transfer(adEscrowAccount(ad.id), walletOf(ad.owner_id, currency), left),
    });
  }
  return left;
}

export interface NewTrade {
  orderId: string;
  adId: string;
  makerId: string;
  takerId: string;
  sellerId: string;
  buyerId: string;
  asset: string;
  assetAmountMinor: string;
  priceMinor: string;
  paymentMethod: string;
}

/** Record the trade of a new order, in the order's transaction. */
export async function insertTrade(t: NewTrade, tx: Transaction): Promise<void> {
  await models().query(
    `INSERT INTO p2p_trades (order_id, ad_id, maker_id, taker_id, seller_id, buyer_id, asset, asset_amount_minor, price_minor, payment_method)
     VALUES (:orderId, :adId, :makerId, :takerId, :sellerId, :buyerId, :asset, :assetAmountMinor, :priceMinor, :paymentMethod)`,
    { replacements: { ...t }, transaction: tx },
  );
}

/** One item of a user's P2P activity: a trade or an ad event. */
export interface HistoryRow {
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

/**
 * A user's P2P activity (everyone's for a null user), newest first, keyset-paged by id: their trades as
 * maker or taker (with the order's status and amount) and their ads' events.
 */
export async function p2pActivity(userId: string | null, before: string | null, limit: number): Promise<HistoryRow[]> {
  return models().query<HistoryRow>(
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
     ) h WHERE (CAST(:before AS uuid) IS NULL OR h.id < CAST(:before AS uuid))
     ORDER BY h.id DESC LIMIT :limit`,
    { replacements: { userId, before, limit }, type: QueryTypes.SELECT },
  );
}
