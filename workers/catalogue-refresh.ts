import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { kenyanBankRegistry, type BankRegistryEntry } from '../domain/discovery/bank-registry';
import { probeExchanges, type ProbeLimits, type ProbeResult, type StatusCheck } from '../connectors/exchange-probe';
import { discoverExchanges, type ExchangeCatalogue, type ExchangeEntry } from '../connectors/exchanges';

/**
 * Refreshing the platform catalogue. Whatever talks to the network (the exchange probe) runs first,
 * outside any transaction; then each refresh is one transaction: one multi-row upsert of every entry,
 * one update marking the entries that disappeared from the source as inactive (never deleting them),
 * and the refresh record. A refresh that dies half-way (a crash, a killed process) leaves nothing
 * behind, and running it again converges to the same rows: it is safe to retry.
 */

export interface RefreshSummary {
  catalogue: 'exchanges' | 'banks';
  refreshedAt: Date;
  active: number;
  deactivated: number;
  /** Exchanges asked for their live status in this refresh. */
  probed: number;
  durationMs: number;
}

export interface ExchangeRefreshOptions {
  /** List the sandbox rail's exchanges too (while the crypto rail is the sandbox). */
  includeSandbox: boolean;
  /** The live status probe, or null to keep each exchange's last known status. */
  probe: { check: StatusCheck; limits: ProbeLimits } | null;
  /** What to persist, replacing discovery altogether (`includeSandbox` then has no effect); by default ccxt's exchanges. */
  catalogue?: ExchangeCatalogue;
}

/** Refreshes of one catalogue never overlap, even across jobs processes: they queue on this lock. */
const lockCatalogue = (sequelize: Sequelize, transaction: Transaction, name: string) =>
  sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:key))', {
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

/** Exchange rows for the upsert, in the column order of `EXCHANGE_COLUMNS`. */
export function exchangeRows(entries: ExchangeEntry[], probed: Map<string, ProbeResult>, now: Date): unknown[][] {
  return entries.map((e) => {
    const result = probed.get(e.id);
    const status = e.fixedStatus ?? result?.status ?? 'unknown';
    const checkedAt = e.fixedStatus ? now : (result?.checkedAt ?? null);
    return [
      e.id,
      e.name,
      e.countries,
      JSON.stringify(e.urls),
      e.capabilities,
      JSON.stringify(e.fees),
      e.certified,
      e.pro,
      e.source,
      status,
      checkedAt,
    ];
  });
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

/** Refresh the exchanges: probe (bounded), then persist everything in one transaction. */
export async function refreshExchanges(sequelize: Sequelize, options: ExchangeRefreshOptions): Promise<RefreshSummary> {
  const started = Date.now();
  const catalogue = options.catalogue ?? discoverExchanges({ includeSandbox: options.includeSandbox });
  const entries = catalogue.entries;
  const probed = options.probe ? await probeExchanges(entries, options.probe.check, options.probe.limits) : new Map<string, ProbeResult>();

  const now = new Date();
  const rows = exchangeRows(entries, probed, now);
  const nowParam = `$${rows.length * EXCHANGE_COLUMNS.length + 1}`;
  const values = valuesList(rows, [nowParam, nowParam]);

  const { deactivated } = await sequelize.transaction(async (transaction) => {
    await lockCatalogue(sequelize, transaction, 'exchanges');
    // A probe that did not reach an exchange (checked_at null) keeps its last known status.
    await sequelize.query(
      `INSERT INTO exchanges AS e (${EXCHANGE_COLUMNS.join(', ')}, first_seen_at, refreshed_at)
       VALUES ${values.sql}
       ON CONFLICT (id) DO UPDATE SET
         name = EXCLUDED.name, countries = EXCLUDED.countries, urls = EXCLUDED.urls,
         capabilities = EXCLUDED.capabilities, fees = EXCLUDED.fees, certified = EXCLUDED.certified,
         pro = EXCLUDED.pro, source = EXCLUDED.source,
         status = CASE WHEN EXCLUDED.checked_at IS NULL THEN e.status ELSE EXCLUDED.status END,
         checked_at = coalesce(EXCLUDED.checked_at, e.checked_at),
         active = true, deactivated_at = NULL, refreshed_at = EXCLUDED.refreshed_at`,
      { bind: [...values.bind, now], transaction },
    );
    const gone = await sequelize.query(
      'UPDATE exchanges SET active = false, deactivated_at = $1 WHERE active AND NOT (id = ANY($2::text[])) RETURNING id',
      { bind: [now, entries.map((e) => e.id)], type: QueryTypes.SELECT, transaction },
    );
    await recordRefresh(sequelize, transaction, {
      catalogue: 'exchanges',
      refreshedAt: now,
      active: entries.length,
      deactivated: gone.length,
      durationMs: Date.now() - started,
      knownCapabilities: catalogue.knownCapabilities,
    });
    return { deactivated: gone.length };
  });
  return {
    catalogue: 'exchanges',
    refreshedAt: now,
    active: entries.length,
    deactivated,
    probed: probed.size,
    durationMs: Date.now() - started,
  };
}

export interface BankRefreshOptions {
  /** What to persist; by default the curated registry in the repository. */
  registry?: BankRegistryEntry[];
}

/** Refresh the banks from the curated registry, in one transaction. */
export async function refreshBanks(sequelize: Sequelize, options: BankRefreshOptions = {}): Promise<RefreshSummary> {
  const started = Date.now();
  const registry = options.registry ?? kenyanBankRegistry();
  const now = new Date();
  const rows = registry.map((b) => [b.code, b.name, b.swift_bic, b.swift_bic_confirmed, b.pesalink, b.source, b.verified_on]);
  const nowParam = `$${rows.length * 7 + 1}`;
  const values = valuesList(rows, [nowParam, nowParam]);

  const deactivated = await sequelize.transaction(async (transaction) => {
    await lockCatalogue(sequelize, transaction, 'banks');
    await sequelize.query(
      `INSERT INTO banks AS b (code, name, swift_bic, swift_bic_confirmed, pesalink, source, verified_on, first_seen_at, refreshed_at)
       VALUES ${values.sql}
       ON CONFLICT (code) DO UPDATE SET
         name = EXCLUDED.name, swift_bic = EXCLUDED.swift_bic, swift_bic_confirmed = EXCLUDED.swift_bic_confirmed,
         pesalink = EXCLUDED.pesalink, source = EXCLUDED.source, verified_on = EXCLUDED.verified_on,
         active = true, deactivated_at = NULL, refreshed_at = EXCLUDED.refreshed_at`,
      { bind: [...values.bind, now], transaction },
    );
    const gone = await sequelize.query(
      'UPDATE banks SET active = false, deactivated_at = $1 WHERE active AND NOT (code = ANY($2::text[])) RETURNING code',
      { bind: [now, registry.map((b) => b.code)], type: QueryTypes.SELECT, transaction },
    );
    await recordRefresh(sequelize, transaction, {
      catalogue: 'banks',
      refreshedAt: now,
      active: registry.length,
      deactivated: gone.length,
      durationMs: Date.now() - started,
      knownCapabilities: [],
    });
    return gone.length;
  });
  return { catalogue: 'banks', refreshedAt: now, active: registry.length, deactivated, probed: 0, durationMs: Date.now() - started };
}

async function recordRefresh(
  sequelize: Sequelize,
  transaction: Transaction,
  r: { catalogue: string; refreshedAt: Date; active: number; deactivated: number; durationMs: number; knownCapabilities: string[] },
): Promise<void> {
  await sequelize.query(
    `INSERT INTO catalogue_refreshes (catalogue, refreshed_at, active_entries, deactivated_entries, duration_ms, known_capabilities)
     VALUES ($1, $2, $3, $4, $5, $6::text[])
     ON CONFLICT (catalogue) DO UPDATE SET refreshed_at = EXCLUDED.refreshed_at, active_entries = EXCLUDED.active_entries,
       deactivated_entries = EXCLUDED.deactivated_entries, duration_ms = EXCLUDED.duration_ms,
       known_capabilities = EXCLUDED.known_capabilities`,
    { bind: [r.catalogue, r.refreshedAt, r.active, r.deactivated, r.durationMs, r.knownCapabilities], transaction },
  );
}
