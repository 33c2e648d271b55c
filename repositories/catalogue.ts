import { Op, QueryTypes, type InferAttributes, type Transaction, type WhereOptions } from 'sequelize';
import { Bank, CatalogueRefresh, Exchange, models } from '../models';
import { containing } from './filters';

/**
 * The platform catalogue: every read and write of `exchanges`, `banks` and `catalogue_refreshes`.
 */

/** The exchange's last known status, or null when the catalogue does not list it. */
export async function exchangeStatus(exchangeId: string): Promise<string | null> {
  const exchange = await Exchange.findByPk(exchangeId, { attributes: ['status'], raw: true });
  return exchange?.status ?? null;
}

/** When each catalogue last refreshed (metrics). */
export async function catalogueRefreshTimes(tx?: Transaction): Promise<{ catalogue: string; refreshed_at: Date }[]> {
  return models().query<{ catalogue: string; refreshed_at: Date }>('SELECT catalogue, refreshed_at FROM catalogue_refreshes', {
    type: QueryTypes.SELECT,
    transaction: tx,
  });
}

// --- refreshes

/** Refreshes of one catalogue never overlap, even across jobs processes: they queue on this lock. */
const lockCatalogue = (transaction: Transaction, name: string) =>
  models().query('SELECT pg_advisory_xact_lock(hashtext(:key))', {
    replacements: { key: `paygate.catalogue.${name}` },
    type: QueryTypes.SELECT,
    transaction,
  });

/** `($1, $2, …), (…)` for a multi-row VALUES list; `tail` (e.g. a shared `$n`) ends every tuple. */
function valuesList(rows: unknown[][], tail: string[] = []): { sql: string; bind: unknown[] } {
  const bind: unknown[] = [];
  const tuples = rows.map((row) => {
    const placeholders = row.map((value) => {
      bind.push(value);
      return `$${bind.length}`;
    });
    return `(${[...placeholders, ...tail].join(', ')})`;
  });
  return { sql: tuples.join(',\n'), bind };
}

export const EXCHANGE_COLUMNS = [
  'id',
  'name',
  'countries',
  'urls',
  'capabilities',
  'fees',
  'certified',
  'pro',
  'source',
  'status',
  'checked_at',
] as const;

/** A refresh's rows, and when and since when it ran. */
interface CatalogueWrite {
  /** Rows in the column order of the upsert. */
  rows: unknown[][];
  now: Date;
  /** When the refresh started (its recorded duration runs to the commit). */
  started: number;
}

/**
 * Persist an exchange refresh (rows in `EXCHANGE_COLUMNS` order). Returns how many exchanges were deactivated.
 * A probe that did not reach an exchange (checked_at null) keeps its last known status.
 */
export async function saveExchanges(w: CatalogueWrite & { ids: string[]; knownCapabilities: string[] }): Promise<number> {
  return saveCatalogue('exchanges', w, {
    columns: EXCHANGE_COLUMNS.length,
    upsert: (values) =>
      `INSERT INTO exchanges AS e (${EXCHANGE_COLUMNS.join(', ')}, first_seen_at, refreshed_at)
       VALUES ${values}
       ON CONFLICT (id) DO UPDATE SET
         name = EXCLUDED.name, countries = EXCLUDED.countries, urls = EXCLUDED.urls,
         capabilities = EXCLUDED.capabilities, fees = EXCLUDED.fees, certified = EXCLUDED.certified,
         pro = EXCLUDED.pro, source = EXCLUDED.source,
         status = CASE WHEN EXCLUDED.checked_at IS NULL THEN e.status ELSE EXCLUDED.status END,
         checked_at = coalesce(EXCLUDED.checked_at, e.checked_at),
         active = true, deactivated_at = NULL, refreshed_at = EXCLUDED.refreshed_at`,
    deactivate: 'UPDATE exchanges SET active = false, deactivated_at = $1 WHERE active AND NOT (id = ANY($2::text[])) RETURNING id',
    keys: w.ids,
    knownCapabilities: w.knownCapabilities,
  });
}

/**
 * Persist a bank refresh (rows: code, name, swift_bic, swift_bic_confirmed, pesalink, source, verified_on).
 * Returns how many banks were deactivated.
 */
export async function saveBanks(w: CatalogueWrite & { codes: string[] }): Promise<number> {
  return saveCatalogue('banks', w, {
    columns: 7,
    upsert: (values) =>
      `INSERT INTO banks AS b (code, name, swift_bic, swift_bic_confirmed, pesalink, source, verified_on, first_seen_at, refreshed_at)
       VALUES ${values}
       ON CONFLICT (code) DO UPDATE SET
         name = EXCLUDED.name, swift_bic = EXCLUDED.swift_bic, swift_bic_confirmed = EXCLUDED.swift_bic_confirmed,
         pesalink = EXCLUDED.pesalink, source = EXCLUDED.source, verified_on = EXCLUDED.verified_on,
         active = true, deactivated_at = NULL, refreshed_at = EXCLUDED.refreshed_at`,
    deactivate: 'UPDATE banks SET active = false, deactivated_at = $1 WHERE active AND NOT (code = ANY($2::text[])) RETURNING code',
    keys: w.codes,
    knownCapabilities: [],
  });
}

/**
 * One refresh of a catalogue, in one transaction queued behind any other refresh of it: one multi-row
 * upsert of every entry (each tuple ending with the refresh time, twice: first seen, refreshed), one update
 * marking the entries no longer listed inactive (never deleting them), and the refresh record.
 */
async function saveCatalogue(
  catalogue: 'exchanges' | 'banks',
  w: CatalogueWrite,
  sql: { columns: number; upsert: (values: string) => string; deactivate: string; keys: string[]; knownCapabilities: string[] },
): Promise<number> {
  const nowParam = `$${w.rows.length * sql.columns + 1}`;
  const values = valuesList(w.rows, [nowParam, nowParam]);
  return models().transaction(async (transaction) => {
    await lockCatalogue(transaction, catalogue);
    await models().query(sql.upsert(values.sql), { bind: [...values.bind, w.now], transaction });
    const gone = await models().query(sql.deactivate, { bind: [w.now, sql.keys], type: QueryTypes.SELECT, transaction });
    await recordRefresh(transaction, {
      catalogue,
      refreshedAt: w.now,
      active: sql.keys.length,
      deactivated: gone.length,
      durationMs: Date.now() - w.started,
      knownCapabilities: sql.knownCapabilities,
    });
    return gone.length;
  });
}

async function recordRefresh(
  transaction: Transaction,
  r: { catalogue: string; refreshedAt: Date; active: number; deactivated: number; durationMs: number; knownCapabilities: string[] },
): Promise<void> {
  await models().query(
    `INSERT INTO catalogue_refreshes (catalogue, refreshed_at, active_entries, deactivated_entries, duration_ms, known_capabilities)
     VALUES ($1, $2, $3, $4, $5, $6::text[])
     ON CONFLICT (catalogue) DO UPDATE SET refreshed_at = EXCLUDED.refreshed_at, active_entries = EXCLUDED.active_entries,
       deactivated_entries = EXCLUDED.deactivated_entries, duration_ms = EXCLUDED.duration_ms,
       known_capabilities = EXCLUDED.known_capabilities`,
    { bind: [r.catalogue, r.refreshedAt, r.active, r.deactivated, r.durationMs, r.knownCapabilities], transaction },
  );
}

/** Whether the catalogue has no entry at all (a fresh database). */
export async function catalogueEmpty(catalogue: 'exchanges' | 'banks'): Promise<boolean> {
  const found = catalogue === 'exchanges' ? await Exchange.findOne({ attributes: ['id'] }) : await Bank.findOne({ attributes: ['code'] });
  return found === null;
}

/** The active bank with this code (what routing needs of it), or null. */
export async function activeBank(code: string): Promise<{ code: string; pesalink: boolean } | null> {
  return Bank.findOne({ attributes: ['code', 'pesalink'], where: { code, active: true }, raw: true });
}

/** Whether the catalogue lists this exchange as active. */
export async function isActiveExchange(exchangeId: string): Promise<boolean> {
  return (await Exchange.findOne({ attributes: ['id'], where: { id: exchangeId, active: true }, raw: true })) !== null;
}

// --- the catalogue as the platform API lists it

export type ExchangeRecord = InferAttributes<Exchange>;
export type BankRecord = InferAttributes<Bank>;

/** A catalogue's last refresh, or null before the first. */
export async function lastRefresh(catalogue: 'exchanges' | 'banks'): Promise<{ refreshedAt: Date; knownCapabilities: string[] } | null> {
  const refresh = await CatalogueRefresh.findByPk(catalogue, { attributes: ['refreshedAt', 'knownCapabilities'], raw: true });
  return refresh ? { refreshedAt: refresh.refreshedAt, knownCapabilities: refresh.knownCapabilities ?? [] } : null;
}

export interface ExchangeFilter {
  /** A piece of the id or the name, matched case-insensitively and literally. */
  text?: string;
  country?: string;
  capability?: string;
  certified?: boolean;
  /** Keyset: only exchanges with an id after this one. */
  after?: string;
}

/** Active exchanges by id, filtered, at most `limit`. */
export async function listActiveExchanges(filter: ExchangeFilter, limit: number): Promise<ExchangeRecord[]> {
  const where: WhereOptions<Exchange>[] = [{ active: true }];
  if (filter.text !== undefined) {
    const pattern = containing(filter.text);
    where.push({ [Op.or]: [{ id: { [Op.iLike]: pattern } }, { name: { [Op.iLike]: pattern } }] });
  }
  if (filter.country !== undefined) where.push({ countries: { [Op.contains]: [filter.country] } });
  if (filter.capability !== undefined) where.push({ capabilities: { [Op.contains]: [filter.capability] } });
  if (filter.certified !== undefined) where.push({ certified: filter.certified });
  if (filter.after !== undefined) where.push({ id: { [Op.gt]: filter.after } });
  return Exchange.findAll({ where: { [Op.and]: where }, order: [['id', 'ASC']], limit, raw: true });
}

/** Every active bank, by code. */
export async function activeBanks(): Promise<BankRecord[]> {
  return Bank.findAll({ where: { active: true }, order: [['code', 'ASC']], raw: true });
}
