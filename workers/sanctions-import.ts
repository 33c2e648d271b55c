import fs from 'node:fs/promises';
import path from 'node:path';
import type { Queue } from 'bullmq';
import { config as processConfig, type Config } from '../platform/config';
import { componentLogger } from '../platform/logger';
import { IMPORT_SANCTIONS } from './queues';
import { parseOfacCsv, type SanctionsListing as ListedValue } from '../domain/compliance/ofac';
import { parseEuSanctionsXml, parseUnConsolidatedXml } from '../domain/compliance/sanctions-lists';
import { normaliseBlocklistValue } from '../domain/compliance/normalise';
import { replaceSanctionsLists, type ListSource, type SanctionsListing } from '../repositories/compliance';

/**
 * The sanctions import (jobs process): loads the configured lists into the blocklist, each with its
 * source, all in one transaction:
 * - OFAC SDN CSV files (`sdn.csv`, `alt.csv`) from SANCTIONS_LIST_PATH_OR_URL → `ofac`;
 * - the UN Security Council consolidated list (XML) from UN_SANCTIONS_LIST_PATH_OR_URL → `un`;
 * - the EU financial sanctions list (XML) from EU_SANCTIONS_LIST_PATH_OR_URL → `eu`.
 * Entries are upserted on (type, value); entries that left their list are expired, not deleted (hits keep
 * pointing at them); manual entries with the same value are left alone.
 */

const FETCH_TIMEOUT_MS = 60_000;
const log = componentLogger('sanctions-import');

export interface SanctionsImportResult {
  listed: number;
  added: number;
  updated: number;
  retired: number;
  skipped: number;
  /** The same counts for each list imported. */
  lists: Partial<Record<ListSource, Omit<SanctionsImportResult, 'lists'>>>;
}

const PARSERS: Record<ListSource, (text: string) => ListedValue[]> = {
  ofac: parseOfacCsv,
  un: parseUnConsolidatedXml,
  eu: parseEuSanctionsXml,
};

async function loadSource(source: string): Promise<string> {
  if (/^https?:\/\//i.test(source)) {
    const res = await fetch(source, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`fetching ${source} answered ${res.status}`);
    return res.text();
  }
  return fs.readFile(path.resolve(source), 'utf8');
}

/** Read one list's files: every listing normalised, one per (type, value). */
async function readList(source: ListSource, files: string[]): Promise<{ rows: SanctionsListing[]; skipped: number }> {
  const texts = await Promise.all(files.map(loadSource));
  const unique = new Map<string, SanctionsListing>();
  let skipped = 0;
  for (const listing of texts.flatMap(PARSERS[source])) {
    const normalised = normaliseBlocklistValue(listing.type, listing.value);
    if (!normalised) {
      skipped += 1;
      continue;
    }
    const key = `${listing.type}\u0000${normalised.matchKey}`;
    if (!unique.has(key)) unique.set(key, { type: listing.type, ...normalised, reason: listing.reason, externalRef: listing.externalRef });
  }
  const rows = [...unique.values()];
  if (rows.length === 0) throw new Error(`no sanctions entries found in ${files.join(', ')}; keeping the current lists`);
  return { rows, skipped };
}

/** Import these lists (each from its files) in one transaction. */
export async function importSanctionsLists(sources: Partial<Record<ListSource, string[]>>): Promise<SanctionsImportResult> {
  const selected = (Object.keys(PARSERS) as ListSource[]).filter((source) => (sources[source] ?? []).length > 0);
  const read = await Promise.all(selected.map(async (source) => ({ source, ...(await readList(source, sources[source]!)) })));
  const written = await replaceSanctionsLists(read.map(({ source, rows }) => ({ source, rows })));
  const result: SanctionsImportResult = { listed: 0, added: 0, updated: 0, retired: 0, skipped: 0, lists: {} };
  for (const { source, rows, skipped } of read) {
    const counts = { listed: rows.length, ...written[source], skipped };
    result.lists[source] = counts;
    result.listed += counts.listed;
    result.added += counts.added;
    result.updated += counts.updated;
    result.retired += counts.retired;
    result.skipped += counts.skipped;
  }
  log.info({ sources, ...result }, 'sanctions lists imported');
  return result;
}

const configured = (cfg: Config): boolean => {
  const lists: Record<ListSource, string[]> = cfg.compliance.sanctionsLists;
  return Object.values(lists).some((files) => files.length > 0);
};

export async function runSanctionsImport(cfg: Config = processConfig()): Promise<SanctionsImportResult | null> {
  if (!configured(cfg)) return null;
  return importSanctionsLists(cfg.compliance.sanctionsLists);
}

/** Upsert the import's job scheduler (runs at once, then every SANCTIONS_IMPORT_EVERY_MS), or remove it when no source is configured. */
export async function scheduleSanctionsImport(queue: Queue, cfg: Config): Promise<boolean> {
  if (!configured(cfg)) {
    await queue.removeJobScheduler(IMPORT_SANCTIONS);
    return false;
  }
  await queue.upsertJobScheduler(
    IMPORT_SANCTIONS,
    { every: cfg.compliance.sanctionsImportEveryMs },
    {
      name: IMPORT_SANCTIONS,
      opts: { attempts: 5, backoff: { type: 'exponential', delay: 30_000 }, removeOnComplete: 30, removeOnFail: 100 },
    },
  );
  return true;
}
