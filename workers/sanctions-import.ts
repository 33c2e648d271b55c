import fs from 'node:fs/promises';
import path from 'node:path';
import type { Queue } from 'bullmq';
import { config as processConfig, type Config } from '../platform/config';
import { componentLogger } from '../platform/logger';
import { IMPORT_SANCTIONS } from './queues';
import { parseOfacCsv } from '../domain/compliance/ofac';
import { normaliseBlocklistValue } from '../domain/compliance/normalise';
import { replaceSanctionsList, type SanctionsListing } from '../repositories/compliance';

/**
 * The sanctions import (jobs process): loads the OFAC SDN CSV files named by SANCTIONS_LIST_PATH_OR_URL
 * into the blocklist with `source: ofac`, in one transaction. Entries are upserted on (type, value);
 * OFAC entries that left the list are expired, not deleted (hits keep pointing at them); manual entries
 * with the same value are left alone.
 */

const FETCH_TIMEOUT_MS = 60_000;
const log = componentLogger('sanctions-import');

export interface SanctionsImportResult {
  listed: number;
  added: number;
  updated: number;
  retired: number;
  skipped: number;
}

async function loadSource(source: string): Promise<string> {
  if (/^https?:\/\//i.test(source)) {
    const res = await fetch(source, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`fetching ${source} answered ${res.status}`);
    return res.text();
  }
  return fs.readFile(path.resolve(source), 'utf8');
}

export async function importSanctionsList(sources: string[]): Promise<SanctionsImportResult> {
  const texts = await Promise.all(sources.map(loadSource));
  const unique = new Map<string, SanctionsListing>();
  let skipped = 0;
  for (const listing of texts.flatMap(parseOfacCsv)) {
    const normalised = normaliseBlocklistValue(listing.type, listing.value);
    if (!normalised) {
      skipped += 1;
      continue;
    }
    const key = `${listing.type}\u0000${normalised.matchKey}`;
    if (!unique.has(key)) unique.set(key, { type: listing.type, ...normalised, reason: listing.reason, externalRef: listing.externalRef });
  }
  const rows = [...unique.values()];
  if (rows.length === 0) throw new Error(`no sanctions entries found in ${sources.join(', ')}; keeping the current list`);

  const { added, updated, retired } = await replaceSanctionsList(rows);
  const result = { listed: rows.length, added, updated, retired, skipped };
  log.info({ sources, ...result }, 'sanctions list imported');
  return result;
}

export async function runSanctionsImport(cfg: Config = processConfig()): Promise<SanctionsImportResult | null> {
  if (cfg.compliance.sanctionsListSources.length === 0) return null;
  return importSanctionsList(cfg.compliance.sanctionsListSources);
}

/** Upsert the import's job scheduler (runs at once, then every SANCTIONS_IMPORT_EVERY_MS), or remove it when no source is configured. */
export async function scheduleSanctionsImport(queue: Queue, cfg: Config): Promise<boolean> {
  if (cfg.compliance.sanctionsListSources.length === 0) {
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
