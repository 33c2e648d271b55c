import fs from 'node:fs/promises';
import path from 'node:path';
import type { Queue } from 'bullmq';
import { QueryTypes, type Sequelize } from 'sequelize';
import { config as processConfig, type Config } from '../platform/config';
import { database } from '../platform/database';
import { uuidv7 } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { IMPORT_SANCTIONS } from './queues';
import { parseOfacCsv } from '../domain/compliance/ofac';
import { normaliseBlocklistValue } from '../domain/compliance/normalise';

/**
 * The sanctions import (jobs process): loads the OFAC SDN CSV files named by SANCTIONS_LIST_PATH_OR_URL
 * into the blocklist with `source: ofac`, in one transaction. Entries are upserted on (type, value);
 * OFAC entries that left the list are expired, not deleted (hits keep pointing at them); manual entries
 * with the same value are left alone.
 */

const FETCH_TIMEOUT_MS = 60_000;
const BATCH = 1000;
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

interface Row {
  type: string;
  value: string;
  matchKey: string;
  reason: string;
  externalRef: string;
}

export async function importSanctionsList(sequelize: Sequelize, sources: string[]): Promise<SanctionsImportResult> {
  const texts = await Promise.all(sources.map(loadSource));
  const unique = new Map<string, Row>();
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

  return sequelize.transaction(async (transaction) => {
    await sequelize.query('CREATE TEMPORARY TABLE sanctions_listed (type text, match_key text) ON COMMIT DROP', { transaction });
    let added = 0;
    let updated = 0;
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      const columns = {
        ids: batch.map(() => uuidv7()),
        types: batch.map((r) => r.type),
        values: batch.map((r) => r.value),
        keys: batch.map((r) => r.matchKey),
        reasons: batch.map((r) => r.reason),
        refs: batch.map((r) => r.externalRef),
      };
      await sequelize.query('INSERT INTO sanctions_listed SELECT * FROM unnest($1::text[], $2::text[])', {
        bind: [columns.types, columns.keys],
        transaction,
      });
      const written = await sequelize.query<{ inserted: boolean }>(
        `INSERT INTO blocklist_entries (id, type, value, match_key, reason, source, external_ref, created_by, expires_at)
         SELECT id, type, value, match_key, reason, 'ofac', external_ref, NULL, NULL
           FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                AS listed (id, type, value, match_key, reason, external_ref)
         ON CONFLICT (type, match_key) DO UPDATE
           SET reason = EXCLUDED.reason, external_ref = EXCLUDED.external_ref, expires_at = NULL
           WHERE blocklist_entries.source = 'ofac'
             AND (blocklist_entries.reason IS DISTINCT FROM EXCLUDED.reason
                  OR blocklist_entries.external_ref IS DISTINCT FROM EXCLUDED.external_ref
                  OR blocklist_entries.expires_at IS NOT NULL)
         RETURNING (xmax = 0) AS inserted`,
        {
          bind: [columns.ids, columns.types, columns.values, columns.keys, columns.reasons, columns.refs],
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      added += written.filter((w) => w.inserted).length;
      updated += written.filter((w) => !w.inserted).length;
    }
    const retired = await sequelize.query(
      `UPDATE blocklist_entries b SET expires_at = now()
        WHERE b.source = 'ofac' AND (b.expires_at IS NULL OR b.expires_at > now())
          AND NOT EXISTS (SELECT 1 FROM sanctions_listed l WHERE l.type = b.type AND l.match_key = b.match_key)
        RETURNING 1`,
      { type: QueryTypes.SELECT, transaction },
    );
    const result = { listed: rows.length, added, updated, retired: retired.length, skipped };
    log.info({ sources, ...result }, 'sanctions list imported');
    return result;
  });
}

/** The job's processor: import from the configured sources (nothing to do when none is configured). */
export async function runSanctionsImport(
  cfg: Config = processConfig(),
  sequelize: Sequelize = database(),
): Promise<SanctionsImportResult | null> {
  if (cfg.compliance.sanctionsListSources.length === 0) return null;
  return importSanctionsList(sequelize, cfg.compliance.sanctionsListSources);
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
