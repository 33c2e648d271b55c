import { kenyanBankRegistry, type BankRegistryEntry } from '../domain/discovery/bank-registry';
import { probeExchanges, type ProbeLimits, type ProbeResult, type StatusCheck } from '../connectors/exchange-probe';
import { discoverExchanges, type ExchangeCatalogue, type ExchangeEntry } from '../connectors/exchanges';
import { EXCHANGE_COLUMNS, saveBanks, saveExchanges } from '../repositories/catalogue';

export { EXCHANGE_COLUMNS };

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

/** Exchange rows for the upsert, in the column order of `EXCHANGE_COLUMNS` (the repository's). */
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

/** Refresh the exchanges: probe (bounded), then persist everything in one transaction. */
export async function refreshExchanges(options: ExchangeRefreshOptions): Promise<RefreshSummary> {
  const started = Date.now();
  const catalogue = options.catalogue ?? discoverExchanges({ includeSandbox: options.includeSandbox });
  const entries = catalogue.entries;
  const probed = options.probe ? await probeExchanges(entries, options.probe.check, options.probe.limits) : new Map<string, ProbeResult>();

  const now = new Date();
  const deactivated = await saveExchanges({
    rows: exchangeRows(entries, probed, now),
    ids: entries.map((e) => e.id),
    now,
    started,
    knownCapabilities: catalogue.knownCapabilities,
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
export async function refreshBanks(options: BankRefreshOptions = {}): Promise<RefreshSummary> {
  const started = Date.now();
  const registry = options.registry ?? kenyanBankRegistry();
  const now = new Date();
  const deactivated = await saveBanks({
    rows: registry.map((b) => [b.code, b.name, b.swift_bic, b.swift_bic_confirmed, b.pesalink, b.source, b.verified_on]),
    codes: registry.map((b) => b.code),
    now,
    started,
  });
  return { catalogue: 'banks', refreshedAt: now, active: registry.length, deactivated, probed: 0, durationMs: Date.now() - started };
}
