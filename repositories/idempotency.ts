import { Op, QueryTypes } from 'sequelize';
import { IdempotencyKey, models } from '../models';
import { queryRows } from './transaction';

/**
 * Idempotency keys: every read and write of `idempotency_keys`. A key is claimed by one request, which then
 * stores its response (replayed to whoever repeats the key) or releases the key.
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
 * Claim the key for this request: a new key, an expired one, or one whose first request stalled (claimed
 * longer than `staleAfterSeconds` ago, same body). Returns whether this request holds it now.
 */
export async function claimKey(id: KeyId, requestHash: string, ttlHours: number, staleAfterSeconds: number): Promise<boolean> {
  // On every POST: straight through pg (see queryRows).
  const claimed = await queryRows(
    `INSERT INTO idempotency_keys (scope, method, path, key, request_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(hours => $6))
     ON CONFLICT (scope, method, path, key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, locked_at = now(), expires_at = EXCLUDED.expires_at
       WHERE idempotency_keys.expires_at < now()
          OR (idempotency_keys.state = 'in_progress'
              AND idempotency_keys.locked_at < now() - make_interval(secs => $7)
              AND idempotency_keys.request_hash = EXCLUDED.request_hash)
     RETURNING 1`,
    [id.scope, id.method, id.path, id.key, requestHash, ttlHours, staleAfterSeconds],
  );
  return claimed.length > 0;
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
export async function completeKey(id: KeyId, response: { status: number; headers: Record<string, string>; body: string }): Promise<void> {
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
