import { QueryTypes, type Transaction } from 'sequelize';
import { models } from '../models';
import { uuidv7 } from '../platform/ids';
import type { BlocklistSource, BlocklistType } from '../domain/compliance/normalise';
import type { BlocklistChange, ScreeningContext, ScreeningMatch } from '../domain/compliance/screening';

/**
 * Screening data: every read and write of `blocklist_entries`, `blocklist_state` (the generation counters
 * the screeners follow) and `screening_hits`.
 */

/** The blocklist changes after `generation` (every entry when it is -1), with the current counters. */
export async function blocklistChangesSince(generation: bigint): Promise<BlocklistChange[]> {
  return models().query<BlocklistChange>(
    `SELECT s.generation AS state_generation, s.purges AS state_purges,
            e.id, e.type, e.value, e.match_key, e.source, e.expires_at
       FROM blocklist_state s
       LEFT JOIN blocklist_entries e ON e.generation > :since
      WHERE s.id = 1`,
    { replacements: { since: generation.toString() }, type: QueryTypes.SELECT },
  );
}

/** Keep a hit for the record (and the compliance report): which entry matched what, with which score. */
export async function recordScreeningHit(
  hit: { context: ScreeningContext; match: ScreeningMatch; userId?: string | null; orderId?: string | null; depositId?: string | null },
  transaction?: Transaction,
): Promise<string> {
  const id = uuidv7();
  await models().query(
    `INSERT INTO screening_hits (id, context, user_id, order_id, deposit_id, field, screened_value, entry_id, score)
     VALUES (:id, :context, :userId, :orderId, :depositId, :field, :screenedValue, :entryId, :score)
     ON CONFLICT DO NOTHING`,
    {
      replacements: {
        id,
        context: hit.context,
        userId: hit.userId ?? null,
        orderId: hit.orderId ?? null,
        depositId: hit.depositId ?? null,
        field: hit.match.field,
        screenedValue: hit.match.screenedValue,
        entryId: hit.match.entryId,
        score: hit.match.score.toFixed(4),
      },
      transaction,
    },
  );
  return id;
}

/** A blocklist entry as the API shows it. */
export interface EntryRow {
  id: string;
  type: BlocklistType;
  value: string;
  reason: string;
  source: BlocklistSource;
  created_by: string | null;
  created_at: Date;
  expires_at: Date | null;
  active: boolean;
}

const ENTRY_COLUMNS = `id, type, value, reason, source, created_by, created_at, expires_at,
  (expires_at IS NULL OR expires_at > now()) AS active`;

export interface NewEntry {
  type: BlocklistType;
  value: string;
  matchKey: string;
  reason: string;
  source: BlocklistSource;
  createdBy: string;
  expiresAt: Date | null;
}

/**
 * Add an entry. The same (type, match key) again returns the existing entry (`created: false`); one that
 * had expired is renewed with the new reason, source and expiry. Null when the entry changed meanwhile.
 */
export async function addEntry(entry: NewEntry): Promise<{ row: EntryRow; created: boolean } | null> {
  const values = { id: uuidv7(), ...entry };
  const [inserted] = await models().query<EntryRow>(
    `INSERT INTO blocklist_entries (id, type, value, match_key, reason, source, created_by, expires_at)
     VALUES (:id, :type, :value, :matchKey, :reason, :source, :createdBy, :expiresAt)
     ON CONFLICT (type, match_key) DO NOTHING
     RETURNING ${ENTRY_COLUMNS}`,
    { replacements: values, type: QueryTypes.SELECT },
  );
  if (inserted) return { row: inserted, created: true };
  const [renewed] = await models().query<EntryRow>(
    `UPDATE blocklist_entries SET reason = :reason, source = :source, expires_at = :expiresAt
      WHERE type = :type AND match_key = :matchKey AND expires_at IS NOT NULL AND expires_at <= now()
     RETURNING ${ENTRY_COLUMNS}`,
    { replacements: values, type: QueryTypes.SELECT },
  );
  if (renewed) return { row: renewed, created: false };
  const [existing] = await models().query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM blocklist_entries WHERE type = :type AND match_key = :matchKey`,
    { replacements: values, type: QueryTypes.SELECT },
  );
  return existing ? { row: existing, created: false } : null;
}

export interface EntryFilter {
  type?: BlocklistType;
  source?: BlocklistSource;
  /** A piece of the value, matched case-insensitively and literally. */
  text?: string;
  active?: boolean;
  /** Keyset: only entries with an id below this one. */
  before?: string;
}

/** The blocklist, newest first, at most `limit`. */
export async function listEntries(filter: EntryFilter, limit: number): Promise<EntryRow[]> {
  const where: string[] = [];
  const replacements: Record<string, unknown> = { limit };
  if (filter.type !== undefined) {
    where.push('type = :type');
    replacements.type = filter.type;
  }
  if (filter.source !== undefined) {
    where.push('source = :source');
    replacements.source = filter.source;
  }
  if (filter.text !== undefined) {
    where.push(`value ILIKE :pattern ESCAPE '\\'`);
    replacements.pattern = `%${filter.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  }
  if (filter.active !== undefined) where.push(filter.active ? '(expires_at IS NULL OR expires_at > now())' : 'expires_at <= now()');
  if (filter.before !== undefined) {
    where.push('id < :after');
    replacements.after = filter.before;
  }
  return models().query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM blocklist_entries ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY id DESC LIMIT :limit`,
    { replacements, type: QueryTypes.SELECT },
  );
}

/** One listing of a sanctions list, normalised. */
export interface SanctionsListing {
  type: string;
  value: string;
  matchKey: string;
  reason: string;
  externalRef: string;
}

const SANCTIONS_BATCH = 1000;

/**
 * Replace the imported (`ofac`) entries with this list, in one transaction: new listings are added,
 * changed ones updated (and un-expired), and listed entries no longer on the list retired (expired now,
 * never deleted). Entries of other sources with the same value are left alone.
 */
export async function replaceSanctionsList(rows: SanctionsListing[]): Promise<{ added: number; updated: number; retired: number }> {
  return models().transaction(async (transaction) => {
    await models().query('CREATE TEMPORARY TABLE sanctions_listed (type text, match_key text) ON COMMIT DROP', { transaction });
    let added = 0;
    let updated = 0;
    for (let i = 0; i < rows.length; i += SANCTIONS_BATCH) {
      const batch = rows.slice(i, i + SANCTIONS_BATCH);
      const columns = {
        ids: batch.map(() => uuidv7()),
        types: batch.map((r) => r.type),
        values: batch.map((r) => r.value),
        keys: batch.map((r) => r.matchKey),
        reasons: batch.map((r) => r.reason),
        refs: batch.map((r) => r.externalRef),
      };
      await models().query('INSERT INTO sanctions_listed SELECT * FROM unnest($1::text[], $2::text[])', {
        bind: [columns.types, columns.keys],
        transaction,
      });
      const written = await models().query<{ inserted: boolean }>(
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
    const retired = await models().query(
      `UPDATE blocklist_entries b SET expires_at = now()
        WHERE b.source = 'ofac' AND (b.expires_at IS NULL OR b.expires_at > now())
          AND NOT EXISTS (SELECT 1 FROM sanctions_listed l WHERE l.type = b.type AND l.match_key = b.match_key)
        RETURNING 1`,
      { type: QueryTypes.SELECT, transaction },
    );
    return { added, updated, retired: retired.length };
  });
}
