import { Op, QueryTypes } from 'sequelize';
import { IdempotencyKey, models } from '../models';
import { queryRows } from './transaction';

/**
 * Idempotency keys: every read and write of `idempotency_keys`. A key is claimed by one request, which then
 * stores its response (replayed to whoever repeats the key) or releases the key; or it is claimed and its
 * answer stored by the very statement that does the request's work (`claimWithAnswer`).
 */

/** A key as one request names it: who, which route, which key. */
export interface KeyId {
  scope: string;
  method: string;
  path: string;
  key: string;
}

/** A claimed key as stored, with whether its claim has gone stale. */
export interface StoredKey {
  request_hash: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  stale: boolean;
}

/**
 * Whether an existing key may be claimed again, in an `ON CONFLICT … DO UPDATE … WHERE` on `idempotency_keys AS
 * k` with the candidate row as EXCLUDED: it expired, or its first request stalled (claimed longer than
 * `staleAfter` seconds ago, an SQL expression, with the same body).
 */
const claimableAgain = (staleAfter: string): string =>
  `k.expires_at < now()
          OR (k.state = 'in_progress'
              AND k.locked_at < now() - make_interval(secs => ${staleAfter})
              AND k.request_hash = EXCLUDED.request_hash)`;

/**
 * Claim the key for this request: a new key, an expired one, or one whose first request stalled (claimed
 * longer than `staleAfterSeconds` ago, same body). Returns whether this request holds it now.
 */
export async function claimKey(id: KeyId, requestHash: string, ttlHours: number, staleAfterSeconds: number): Promise<boolean> {
  // On every POST: straight through pg (see queryRows).
  const claimed = await queryRows(
    `INSERT INTO idempotency_keys AS k (scope, method, path, key, request_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(hours => $6))
     ON CONFLICT (scope, method, path, key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, locked_at = now(), expires_at = EXCLUDED.expires_at
       WHERE ${claimableAgain('$7')}
     RETURNING 1`,
    [id.scope, id.method, id.path, id.key, requestHash, ttlHours, staleAfterSeconds],
  );
  return claimed.length > 0;
}

/** An answer as a key keeps it: its status, the headers replayed with it, and its body byte for byte. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A key claimed by the statement that does the request's work, rather than ahead of it, so that the claim,
 * the work and the answer are one round trip (docs/conventions.md#idempotency). The route's statement sets
 * `outcome` once it is committed: `answered` (claimed, with the answer stored in the same statement), `held`
 * (claimed, its answer stored or the key released once it is sent, as `claimKey`'s), `taken` (another
 * request holds the key: the stored answer, if any, is what the client gets). Unset, nothing was claimed.
 */
export interface KeyClaim {
  readonly id: KeyId;
  readonly requestHash: string;
  readonly ttlHours: number;
  readonly staleAfterSeconds: number;
  outcome?: 'answered' | 'held' | 'taken';
}

/**
 * The claim of `claim`, for a writable CTE of another table's statement (as `orders.acceptOrder`): an INSERT
 * that claims the key as `claimKey` does and, when `answeredWhen` (an SQL condition over `from`, one row) holds,
 * stores `answer` with it; otherwise the key is left claimed (`in_progress`). It returns the row's `state` when
 * the key was claimed, no row when another request holds it. Its parameters start at `$first`; `values` in order.
 */
export function claimWithAnswer(
  claim: KeyClaim,
  answer: StoredAnswer,
  condition: { answeredWhen: string; from: string },
  first: number,
): { sql: string; values: unknown[] } {
  const $ = (n: number) => `$${first + n}`;
  const answered = (value: string) => `CASE WHEN answering.answered THEN ${value} END`;
  return {
    sql: `INSERT INTO idempotency_keys AS k (scope, method, path, key, request_hash, expires_at, state,
                                          response_status, response_headers, response_body)
       SELECT ${$(0)}::text, ${$(1)}::text, ${$(2)}::text, ${$(3)}::text, ${$(4)}::text, now() + make_interval(hours => ${$(5)}::int),
              CASE WHEN answering.answered THEN 'completed' ELSE 'in_progress' END,
              ${answered(`${$(7)}::int`)}, ${answered(`${$(8)}::jsonb`)}, ${answered(`${$(9)}::text`)}
         -- OFFSET 0 keeps the condition a subquery of its own, judged once for the four columns that read it.
         FROM (SELECT (${condition.answeredWhen}) AS answered FROM ${condition.from} OFFSET 0) AS answering
       ON CONFLICT (scope, method, path, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, locked_at = now(), expires_at = EXCLUDED.expires_at, state = EXCLUDED.state,
             response_status = EXCLUDED.response_status, response_headers = EXCLUDED.response_headers,
             response_body = EXCLUDED.response_body
         WHERE ${claimableAgain(`${$(6)}::double precision`)}
       RETURNING k.state`,
    values: [
      claim.id.scope,
      claim.id.method,
      claim.id.path,
      claim.id.key,
      claim.requestHash,
      claim.ttlHours,
      claim.staleAfterSeconds,
      answer.status,
      JSON.stringify(answer.headers),
      answer.body,
    ],
  };
}

/** The key as stored, or undefined when it is gone. */
export async function findKey(id: KeyId, staleAfterSeconds: number): Promise<StoredKey | undefined> {
  const [stored] = await models().query<StoredKey>(
    `SELECT request_hash, state, response_status, response_headers, response_body,
            locked_at < now() - make_interval(secs => :staleAfterSeconds) AS stale
       FROM idempotency_keys WHERE scope = :scope AND method = :method AND path = :path AND key = :key`,
    { replacements: { ...id, staleAfterSeconds }, type: QueryTypes.SELECT },
  );
  return stored;
}

/** Let the key go, so that a retry runs the request again. */
export async function releaseKey(id: KeyId): Promise<void> {
  await IdempotencyKey.destroy({ where: { ...id } });
}

/** Store the response the key replays from now on. */
export async function completeKey(id: KeyId, response: StoredAnswer): Promise<void> {
  await queryRows(
    `UPDATE idempotency_keys SET state = 'completed', response_status = $5, response_headers = $6, response_body = $7
      WHERE scope = $1 AND method = $2 AND path = $3 AND key = $4`,
    [id.scope, id.method, id.path, id.key, response.status, JSON.stringify(response.headers), response.body],
  );
}

/** Delete the expired keys; returns how many went. */
export async function pruneExpiredKeys(): Promise<number> {
  return IdempotencyKey.destroy({ where: { expiresAt: { [Op.lt]: models().fn('now') } } });
}
