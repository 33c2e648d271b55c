import { createHash } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { AppError } from '../../platform/errors';
import { claimKey, completeKey, findKey, releaseKey, type StoredKey } from '../../repositories/idempotency';
import { authenticateRequest } from '../auth/authentication';

/**
 * Idempotency-Key (IETF draft, Stripe semantics) for every POST, backed by Postgres.
 * Scope: (caller, method, path, key), kept 24 h. The first request runs; a repeat with the same body
 * gets the stored response byte-for-byte with `Idempotent-Replayed: true`; a repeat with another body is
 * 422 `idempotency_key_reused`; a repeat while the first still runs is 409 `idempotency_in_progress`.
 * Responses that say nothing about the request itself (5xx, 401, 403, 409, 429) are not kept, so the
 * client can retry with the same key; nor are responses carrying credentials (login), which are never stored.
 */

const KEY = /^[\x21-\x7e]{1,255}$/;
const TTL_HOURS = 24;
/** An in-flight claim older than this is taken to be abandoned (its process died) and can be taken over. */
const STALE_AFTER_SECONDS = 60;
const NOT_KEPT = new Set([401, 403, 409, 429]);
const REPLAYED_HEADERS = ['content-type', 'location'];
/**
 * Routes that hand out credentials are never idempotent: a stored response would keep a live bearer token
 * in the database for a day (and replay it to anyone repeating the key from that address). A retried
 * login simply issues a fresh token.
 */
const ISSUES_CREDENTIALS = new Set(['/auth/login', '/auth/refresh', '/auth/token']);
/** A second line of defence: a response carrying a token is never stored, whatever its route. */
const CARRIES_CREDENTIALS = /"(access_token|refresh_token|id_token)"\s*:/;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

const hashBody = (body: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(canonical(body ?? null)))
    .digest('hex');

export function idempotency(options: { requiredOn: string[] }): RequestHandler {
  return async (req, res, next) => {
    if (req.method !== 'POST' || ISSUES_CREDENTIALS.has(req.path)) return next();
    const key = req.get('Idempotency-Key');
    const required = options.requiredOn.includes(req.path);
    let scope: string;
    try {
      scope = `user:${(await authenticateRequest(req)).id}`;
    } catch {
      // Unauthenticated: protected routes answer 401 themselves; public ones are scoped by address.
      if (required) return next();
      scope = `ip:${req.ip ?? 'unknown'}`;
    }
    if (key === undefined) {
      return next(
        required ? new AppError('idempotency_key_missing', 'send an Idempotency-Key header (e.g. a UUID) with this request') : undefined,
      );
    }
    if (!KEY.test(key)) {
      return next(
        new AppError('validation_failed', 'Idempotency-Key must be 1 to 255 visible ASCII characters', {
          errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }],
        }),
      );
    }
    const id = { scope, method: req.method, path: req.path, key };
    const requestHash = hashBody(req.body);
    try {
      if (!(await claimKey(id, requestHash, TTL_HOURS, STALE_AFTER_SECONDS))) {
        const stored = await findKey(id, STALE_AFTER_SECONDS);
        if (!stored) return next(new AppError('idempotency_in_progress', 'retry the request'));
        if (stored.request_hash !== requestHash) {
          return next(new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body'));
        }
        if (stored.state !== 'completed') {
          return next(
            new AppError('idempotency_in_progress', 'the first request with this Idempotency-Key is still being processed', {
              headers: { 'Retry-After': '1' },
            }),
          );
        }
        return replay(res, stored);
      }
    } catch (err) {
      return next(err);
    }
    captureResponse(res, async (status, headers, body) => {
      if (status >= 500 || NOT_KEPT.has(status) || CARRIES_CREDENTIALS.test(body)) {
        await releaseKey(id);
        return;
      }
      await completeKey(id, { status, headers, body });
    });
    next();
  };
}

function replay(res: Response, stored: StoredKey): void {
  for (const [name, value] of Object.entries(stored.response_headers ?? {})) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  res.status(stored.response_status ?? 200).end(stored.response_body ?? '');
}

/**
 * Storing (or releasing) the key is retried on a fresh connection: a database connection dropped at that moment
 * would otherwise leave the key claimed, and the client's retries answered 409, until the claim goes stale.
 */
async function persistWithRetry(persist: () => Promise<void>, attempts = 3): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await persist();
    } catch (err) {
      if (attempt >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** Persist the response before it is sent, so that a retry arriving right after it sees it. */
function captureResponse(res: Response, persist: (status: number, headers: Record<string, string>, body: string) => Promise<void>): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const [chunk, encoding] = args;
    const body =
      typeof chunk === 'string'
        ? chunk
        : Buffer.isBuffer(chunk)
          ? chunk.toString(typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : '';
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = res.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    persistWithRetry(() => persist(res.statusCode, headers, body))
      .catch((err: unknown) => res.req.log?.error({ err }, 'could not store the idempotent response'))
      .finally(() => end(...args));
    return res;
  }) as Response['end'];
}
