import { QueryTypes, type Transaction } from 'sequelize';
import { models } from '../models';
import { Conditions, containing } from './filters';
import { uuidv7 } from '../platform/ids';
import type { BlocklistSource, BlocklistType } from '../domain/compliance/normalise';
import {
  decisionKey,
  withDecisions,
  type Screener,
  type ScreeningItem,
  type BlocklistChange,
  type BlocklistVersion,
  type ReviewStatus,
  type ScreeningContext,
  type ScreeningMatch,
} from '../domain/compliance/screening';
import { queryRows, type Tx } from './transaction';

/**
 * Screening data: every read and write of `blocklist_entries`, `blocklist_state` (the generation counters
 * the screeners follow) and `screening_hits`.
 */

/**
 * The blocklist's version, to read beside another row in the same statement (a payment's screening read): the
 * columns `blocklist_generation` and `blocklist_purges`, of `BLOCKLIST_VERSION_JOIN` joined to the statement's rows.
 */
export const BLOCKLIST_VERSION_COLUMNS = 'bv.generation::text AS blocklist_generation, bv.purges::text AS blocklist_purges';
export const BLOCKLIST_VERSION_JOIN = 'CROSS JOIN blocklist_state bv';

/** The version those columns read. */
export const blocklistVersionOf = (row: { blocklist_generation: string; blocklist_purges: string }): BlocklistVersion => ({
  generation: BigInt(row.blocklist_generation),
  purges: BigInt(row.blocklist_purges),
});

/** The blocklist changes after `generation` (every entry when it is -1), with the current counters. */
export async function blocklistChangesSince(generation: bigint): Promise<BlocklistChange[]> {
  return models().query<BlocklistChange>(
    `SELECT s.generation AS state_generation, s.purges AS state_purges,
            e.id, e.type, e.value, e.match_key, e.source, e.external_ref, e.expires_at
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
    `INSERT INTO screening_hits (id, context, user_id, order_id, deposit_id, field, screened_value, entry_id, score, verdict, review_reason, status)
     VALUES (:id, :context, :userId, :orderId, :depositId, :field, :screenedValue, :entryId, :score, :verdict, :reviewReason,
             CASE WHEN :verdict = 'review' THEN 'needs_review' END)
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
        verdict: hit.match.verdict,
        reviewReason: hit.match.reviewReason,
      },
      transaction,
    },
  );
  return id;
}

/**
 * Hold a movement for a monitoring review (docs/monitoring.md#holds): a review row in the screening queue,
 * naming the evaluation that raised it and, for staff, the typologies that fired. Once per evaluation (and per
 * order): a retry returns the review already recorded.
 */
export async function recordMonitoringReview(
  review: { context: 'payment' | 'deposit'; evaluationId: string; summary: string; userId: string; orderId?: string; depositId?: string },
  transaction?: Transaction,
): Promise<string> {
  await models().query(
    `INSERT INTO screening_hits (id, context, user_id, order_id, deposit_id, field, screened_value, verdict, review_reason, status, evaluation_id)
     VALUES (:id, :context, :userId, :orderId, :depositId, 'movement', :summary, 'review', 'monitoring', 'needs_review', :evaluationId)
     ON CONFLICT DO NOTHING`,
    {
      replacements: {
        id: uuidv7(),
        context: review.context,
        userId: review.userId,
        orderId: review.orderId ?? null,
        depositId: review.depositId ?? null,
        summary: review.summary,
        evaluationId: review.evaluationId,
      },
      transaction,
    },
  );
  const [row] = await queryRows<{ id: string }>(
    `SELECT id FROM screening_hits WHERE evaluation_id = $1 OR (order_id = $2 AND evaluation_id IS NOT NULL) ORDER BY id LIMIT 1`,
    [review.evaluationId, review.orderId ?? null],
    transaction,
  );
  return row.id;
}

/**
 * Staff's earlier decisions on these pairs (listed entry, screened value) for this customer, by `decisionKey`.
 * A decision is the customer's own: none applies to a screening with no customer yet (registration).
 */
export async function decisionsOn(
  pairs: { entryId: string; screenedValue: string }[],
  customerId: string | null,
): Promise<Map<string, 'confirmed' | 'cleared'>> {
  const decided = new Map<string, 'confirmed' | 'cleared'>();
  if (pairs.length === 0 || customerId === null) return decided;
  const found = await queryRows<{ entry_id: string; screened_value: string; decision: 'confirmed' | 'cleared' }>(
    `SELECT d.entry_id, d.screened_value, d.decision
       FROM screening_decisions d JOIN unnest($1::uuid[], $2::text[]) AS p (entry_id, screened_value)
         ON p.entry_id = d.entry_id AND p.screened_value = d.screened_value
      WHERE d.customer_id = $3`,
    [pairs.map((p) => p.entryId), pairs.map((p) => p.screenedValue), customerId],
  );
  for (const row of found) decided.set(decisionKey(row.entry_id, row.screened_value), row.decision);
  return decided;
}

/**
 * Screen the items of `customerId` (null: no account yet) and apply staff's earlier decisions for them (see
 * `withDecisions`). `seen`: the blocklist's version read with the items (`BLOCKLIST_VERSION_COLUMNS`).
 */
export async function screenRemembering(
  screener: Screener,
  items: ScreeningItem[],
  customerId: string | null,
  seen?: BlocklistVersion,
): Promise<ScreeningMatch[]> {
  const found = await screener.screen(items, seen);
  const reviews = found.filter((m) => m.verdict === 'review');
  return reviews.length > 0 ? withDecisions(found, await decisionsOn(reviews, customerId)) : found;
}

/** A review hit as staff see it: what was screened, what it matched (with its list and entry), and its decision. */
export interface ReviewRow {
  id: string;
  context: ScreeningContext;
  user_id: string | null;
  order_id: string | null;
  deposit_id: string | null;
  field: string;
  screened_value: string;
  score: string | null;
  review_reason: string;
  status: ReviewStatus;
  decided_by: string | null;
  decided_at: Date | null;
  decision_note: string | null;
  created_at: Date;
  entry_id: string | null;
  entry_value: string | null;
  entry_source: BlocklistSource | null;
  entry_reason: string | null;
  entry_external_ref: string | null;
  evaluation_id: string | null;
  evaluation_rule_set_version: number | null;
  evaluation_decision: string | null;
  evaluation_typologies: Record<string, unknown> | null;
  evaluation_rules: Record<string, unknown> | null;
}

const REVIEW_COLUMNS = `h.id, h.context, h.user_id, h.order_id, h.deposit_id, h.field, h.screened_value, h.score, h.review_reason,
  h.status, h.decided_by, h.decided_at, h.decision_note, h.created_at, e.id AS entry_id, e.value AS entry_value,
  e.source AS entry_source, e.reason AS entry_reason, e.external_ref AS entry_external_ref, h.evaluation_id,
  m.rule_set_version AS evaluation_rule_set_version, m.decision AS evaluation_decision,
  m.typology_scores AS evaluation_typologies, m.rule_results AS evaluation_rules`;
/** A screening review names its listed entry; a monitoring review (docs/monitoring.md#holds) its evaluation. */
const REVIEW_FROM = `screening_hits h LEFT JOIN blocklist_entries e ON e.id = h.entry_id
  LEFT JOIN monitoring_evaluations m ON m.id = h.evaluation_id`;

/** Review hits, newest first, keyset-paged on the id. */
export async function listReviews(filter: { status?: ReviewStatus; before?: string }, limit: number): Promise<ReviewRow[]> {
  return queryRows<ReviewRow>(
    `SELECT ${REVIEW_COLUMNS} FROM ${REVIEW_FROM}
      WHERE h.status IS NOT NULL AND ($1::text IS NULL OR h.status = $1) AND ($2::uuid IS NULL OR h.id < $2)
      ORDER BY h.id DESC LIMIT $3`,
    [filter.status ?? null, filter.before ?? null, limit],
  );
}

export async function findReview(hitId: string): Promise<ReviewRow | null> {
  const [row] = await queryRows<ReviewRow>(`SELECT ${REVIEW_COLUMNS} FROM ${REVIEW_FROM} WHERE h.id = $1 AND h.status IS NOT NULL`, [
    hitId,
  ]);
  return row ?? null;
}

export interface ReviewPartiesRow {
  user_id: string | null;
  screened_value: string;
  order_owner: string | null;
  destination: Record<string, string> | null;
  counterparty: string | null;
  deposit_owner: string | null;
  payer_name: string | null;
  payer_phone: string | null;
}

/**
 * Who has a stake in a review, for the own-interest rule: the customer screened (the hit's user, the held
 * order's owner or the held deposit's owner), a payment's payee (its destination, and a trade's other side)
 * and a deposit's payer.
 */
export async function reviewParties(hitId: string): Promise<ReviewPartiesRow | undefined> {
  const [row] = await queryRows<ReviewPartiesRow>(
    `SELECT h.user_id, h.screened_value, o.user_id AS order_owner, o.destination, t.maker_id AS counterparty,
            d.user_id AS deposit_owner, d.payer_name, d.payer_phone
       FROM screening_hits h
       LEFT JOIN orders o ON o.id = h.order_id
       LEFT JOIN p2p_trades t ON t.order_id = h.order_id
       LEFT JOIN deposits d ON d.id = h.deposit_id
      WHERE h.id = $1`,
    [hitId],
  );
  return row;
}

/** The review a payment is held for, if any: its latest (a monitoring review follows a cleared screening one). */
export async function reviewOfOrder(orderId: string): Promise<{ id: string; status: ReviewStatus } | null> {
  const [row] = await queryRows<{ id: string; status: ReviewStatus }>(
    `SELECT id, status FROM screening_hits WHERE order_id = $1 AND status IS NOT NULL ORDER BY id DESC LIMIT 1`,
    [orderId],
  );
  return row ?? null;
}

/**
 * Decide a review in `tx`: only while it still needs review (the database decides between two staff
 * deciding at once), and remember the pair for the next screenings. Null when it was not waiting for a
 * decision. The caller's transaction also carries what the decision releases (a held deposit).
 */
export async function decideReview(
  decision: { hitId: string; status: 'confirmed' | 'cleared'; decidedBy: string; note: string | null },
  tx: Tx,
): Promise<ReviewRow | null> {
  const [updated] = await queryRows<{ entry_id: string | null; screened_value: string }>(
    `UPDATE screening_hits SET status = $2, decided_by = $3, decided_at = now(), decision_note = $4
      WHERE id = $1 AND status = 'needs_review' RETURNING entry_id, screened_value`,
    [decision.hitId, decision.status, decision.decidedBy, decision.note],
    tx,
  );
  if (!updated) return null;
  // A monitoring review has no listed entry: its decision is the movement's alone, remembered for no pair.
  if (updated.entry_id !== null) await rememberDecision(updated.entry_id, updated.screened_value, decision, tx);
  const [row] = await queryRows<ReviewRow>(`SELECT ${REVIEW_COLUMNS} FROM ${REVIEW_FROM} WHERE h.id = $1`, [decision.hitId], tx);
  return row;
}

async function rememberDecision(
  entryId: string,
  screenedValue: string,
  decision: { hitId: string; status: 'confirmed' | 'cleared'; decidedBy: string },
  tx: Tx,
): Promise<void> {
  // Remembered for the review's customer only (its user, the held order's or deposit's owner); a review with
  // no customer is decided once and remembered for nobody.
  await queryRows(
    `INSERT INTO screening_decisions (entry_id, screened_value, customer_id, decision, hit_id, decided_by)
     SELECT $1, $2, c.customer_id, $3, $4, $5
       FROM (SELECT COALESCE(h.user_id, o.user_id, d.user_id) AS customer_id
               FROM screening_hits h LEFT JOIN orders o ON o.id = h.order_id LEFT JOIN deposits d ON d.id = h.deposit_id
              WHERE h.id = $4) c
      WHERE c.customer_id IS NOT NULL
     ON CONFLICT (entry_id, screened_value, customer_id) DO UPDATE
       SET decision = EXCLUDED.decision, hit_id = EXCLUDED.hit_id, decided_by = EXCLUDED.decided_by, decided_at = now()`,
    [entryId, screenedValue, decision.status, decision.hitId, decision.decidedBy],
    tx,
  );
}

/** A payment's review not decided within its SLA: `expired`. Returns the review's status after. */
export async function expireReviewOfOrder(orderId: string): Promise<ReviewStatus | null> {
  await queryRows(`UPDATE screening_hits SET status = 'expired', decided_at = now() WHERE order_id = $1 AND status = 'needs_review'`, [
    orderId,
  ]);
  return (await reviewOfOrder(orderId))?.status ?? null;
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
export async function addEntry(entry: NewEntry, tx?: Tx): Promise<{ row: EntryRow; created: boolean; renewed?: true } | null> {
  const values = { id: uuidv7(), ...entry };
  const [inserted] = await models().query<EntryRow>(
    `INSERT INTO blocklist_entries (id, type, value, match_key, reason, source, created_by, expires_at)
     VALUES (:id, :type, :value, :matchKey, :reason, :source, :createdBy, :expiresAt)
     ON CONFLICT (type, match_key) DO NOTHING
     RETURNING ${ENTRY_COLUMNS}`,
    { replacements: values, type: QueryTypes.SELECT, transaction: tx },
  );
  if (inserted) return { row: inserted, created: true };
  const [renewed] = await models().query<EntryRow>(
    `UPDATE blocklist_entries SET reason = :reason, source = :source, expires_at = :expiresAt
      WHERE type = :type AND match_key = :matchKey AND expires_at IS NOT NULL AND expires_at <= now()
     RETURNING ${ENTRY_COLUMNS}`,
    { replacements: values, type: QueryTypes.SELECT, transaction: tx },
  );
  if (renewed) return { row: renewed, created: false, renewed: true };
  const [existing] = await models().query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM blocklist_entries WHERE type = :type AND match_key = :matchKey`,
    { replacements: values, type: QueryTypes.SELECT, transaction: tx },
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
  const where = new Conditions({ limit });
  if (filter.type !== undefined) where.add('type = :type', { type: filter.type });
  if (filter.source !== undefined) where.add('source = :source', { source: filter.source });
  if (filter.text !== undefined) where.add(`value ILIKE :pattern ESCAPE '\\'`, { pattern: containing(filter.text) });
  if (filter.active !== undefined) where.add(filter.active ? '(expires_at IS NULL OR expires_at > now())' : 'expires_at <= now()');
  if (filter.before !== undefined) where.add('id < :after', { after: filter.before });
  return models().query<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM blocklist_entries ${where.where} ORDER BY id DESC LIMIT :limit`, {
    replacements: where.replacements,
    type: QueryTypes.SELECT,
  });
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

export type ListSource = Exclude<BlocklistSource, 'manual'>;

type ImportCounts = { added: number; updated: number; retired: number };

/**
 * Replace the entries imported from each of these lists, all in one transaction:
 * 1. every list's listings are staged;
 * 2. for each list, new listings are added and changed ones updated (and un-expired). An entry of another
 *    source with the same value is left alone, unless it has expired;
 * 3. an entry its own list no longer names, but another list still does, passes to that list;
 * 4. an entry no list names any more is retired (expired now, never deleted).
 * So a name one list drops and another still lists is never unscreened, whatever the order of the lists.
 */
export async function replaceSanctionsLists(
  lists: { source: ListSource; rows: SanctionsListing[] }[],
): Promise<Record<string, ImportCounts>> {
  return models().transaction(async (transaction) => {
    await models().query(
      `CREATE TEMPORARY TABLE sanctions_listed (source text, type text, match_key text, reason text, external_ref text) ON COMMIT DROP`,
      { transaction },
    );
    const results: Record<string, ImportCounts> = {};
    for (const { source, rows } of lists) {
      results[source] = { added: 0, updated: 0, retired: 0 };
      for (let i = 0; i < rows.length; i += SANCTIONS_BATCH) {
        const batch = rows.slice(i, i + SANCTIONS_BATCH);
        await models().query('INSERT INTO sanctions_listed SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[])', {
          bind: [
            source,
            batch.map((r) => r.type),
            batch.map((r) => r.matchKey),
            batch.map((r) => r.reason),
            batch.map((r) => r.externalRef),
          ],
          transaction,
        });
      }
    }
    for (const { source, rows } of lists) {
      for (let i = 0; i < rows.length; i += SANCTIONS_BATCH) {
        const batch = rows.slice(i, i + SANCTIONS_BATCH);
        const written = await models().query<{ inserted: boolean }>(
          `INSERT INTO blocklist_entries (id, type, value, match_key, reason, source, external_ref, created_by, expires_at)
           SELECT id, type, value, match_key, reason, $7, external_ref, NULL, NULL
             FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                  AS listed (id, type, value, match_key, reason, external_ref)
           ON CONFLICT (type, match_key) DO UPDATE
             SET reason = EXCLUDED.reason, source = EXCLUDED.source, external_ref = EXCLUDED.external_ref, expires_at = NULL
             WHERE (blocklist_entries.source = EXCLUDED.source
                    AND (blocklist_entries.reason IS DISTINCT FROM EXCLUDED.reason
                         OR blocklist_entries.external_ref IS DISTINCT FROM EXCLUDED.external_ref
                         OR blocklist_entries.expires_at IS NOT NULL))
                OR (blocklist_entries.source <> EXCLUDED.source AND blocklist_entries.expires_at <= now())
           RETURNING (xmax = 0) AS inserted`,
          {
            bind: [
              batch.map(() => uuidv7()),
              batch.map((r) => r.type),
              batch.map((r) => r.value),
              batch.map((r) => r.matchKey),
              batch.map((r) => r.reason),
              batch.map((r) => r.externalRef),
              source,
            ],
            type: QueryTypes.SELECT,
            transaction,
          },
        );
        results[source].added += written.filter((w) => w.inserted).length;
        results[source].updated += written.filter((w) => !w.inserted).length;
      }
    }
    const sources = lists.map((l) => l.source);
    const handedOver = await models().query<{ source: string }>(
      `UPDATE blocklist_entries b SET source = l.source, reason = l.reason, external_ref = l.external_ref
         FROM (SELECT DISTINCT ON (type, match_key) * FROM sanctions_listed ORDER BY type, match_key, source) l
        WHERE b.source = ANY($1::text[]) AND (b.expires_at IS NULL OR b.expires_at > now())
          AND l.type = b.type AND l.match_key = b.match_key AND l.source <> b.source
          AND NOT EXISTS (SELECT 1 FROM sanctions_listed own WHERE own.source = b.source AND own.type = b.type AND own.match_key = b.match_key)
        RETURNING b.source`,
      { bind: [sources], type: QueryTypes.SELECT, transaction },
    );
    for (const { source } of handedOver) results[source].updated += 1;
    const retired = await models().query<{ source: string }>(
      `UPDATE blocklist_entries b SET expires_at = now()
        WHERE b.source = ANY($1::text[]) AND (b.expires_at IS NULL OR b.expires_at > now())
          AND NOT EXISTS (SELECT 1 FROM sanctions_listed l WHERE l.source = b.source AND l.type = b.type AND l.match_key = b.match_key)
        RETURNING b.source`,
      { bind: [sources], type: QueryTypes.SELECT, transaction },
    );
    for (const { source } of retired) results[source].retired += 1;
    return results;
  });
}
