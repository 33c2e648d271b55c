import { randomBytes } from 'node:crypto';
import { AppError, notFound, validationError } from '../platform/errors';
import { isUuid, uuidv7 } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { config } from '../platform/config';
import { API_KEY_MODES, checkScopes, KEY_GRANTABLE_SCOPES, keyPrefix, type ApiKeyMode } from '../domain/api-keys';
import { createApiKeyWithin, findApiKey, listApiKeys, revokeApiKey, type ApiKeyRecord } from '../repositories/api-keys';
import { apiKeyHash } from '../domain/api-keys';
import type { Caller } from '../domain/caller';
import { inTransaction } from '../repositories/transaction';
import { recordStaffAction } from './audit';
import { keysetPage, keysetQuery, type Page } from './paging';
import { parseInstant } from './instants';
import { keyModeOfDeployment } from './deployment';

const log = componentLogger('api-keys');

/** An API key as lists show it: never its secret. */
export interface ApiKeyView {
  key_id: string;
  name: string;
  mode: ApiKeyMode;
  /** The start of the secret (`sk_test_…`), to tell keys apart. */
  prefix: string;
  scopes: string[];
  created_at: string;
  /** When the key last authenticated a request (to the minute); null if never. */
  last_used_at: string | null;
  /** When the key was revoked; null while it works. */
  revoked_at: string | null;
  /** When the key stops working, refused from then on like a revoked one; null for a key that does not expire. */
  expires_at: string | null;
}

/** A key just created: the only answer that carries its secret. */
export interface CreatedApiKey extends ApiKeyView {
  /** The key itself. Shown this once: Paygate keeps only a hash of it. */
  secret: string;
}

export interface ApiKeyRequest {
  name: string;
  scopes: string[];
  mode: string;
  expires_at?: string;
}

const view = (k: ApiKeyRecord): ApiKeyView => ({
  key_id: k.id,
  name: k.name,
  mode: k.mode,
  prefix: k.prefix,
  scopes: k.scopes,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
  expires_at: k.expiresAt?.toISOString() ?? null,
});

/**
 * Create a key for the caller, signed in as a person (docs/access.md#what-a-key-can-never-do): a key never
 * makes keys, no key holds a staff scope or `api-keys:write`, and a user has at most `API_KEYS_MAX_PER_USER`
 * keys in use.
 */
export async function createKey(caller: Caller, body: ApiKeyRequest): Promise<CreatedApiKey> {
  if (caller.key) throw new AppError('forbidden', 'an API key cannot create keys: sign in to create one');
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  if (name.length < 1 || name.length > 100) throw validationError('name', 'must be 1 to 100 characters');
  if (!(API_KEY_MODES as readonly string[]).includes(body.mode))
    throw validationError('mode', `must be one of ${API_KEY_MODES.join(', ')}`);
  const mode = body.mode as ApiKeyMode;
  const served = keyModeOfDeployment();
  if (served !== null && mode !== served) throw new AppError('key_mode_not_served', notServed(mode, served));
  if (!Array.isArray(body.scopes) || body.scopes.length === 0) throw validationError('scopes', 'must list at least one scope');
  const { scopes, unknown, forbidden } = checkScopes(body.scopes);
  if (unknown.length > 0)
    throw validationError('scopes', `unknown: ${unknown.join(', ')}; a key's scopes are ${KEY_GRANTABLE_SCOPES.join(', ')}`);
  if (forbidden.length > 0) {
    const message = `no key may hold ${forbidden.join(', ')}: staff work and key management are done signed in, never with a key`;
    throw new AppError('scope_not_grantable', `scopes: ${message}`, { errors: [{ field: 'scopes', message }] });
  }
  const expiresAt = body.expires_at === undefined || body.expires_at === null ? null : parseInstant(body.expires_at, 'expires_at');
  if (expiresAt !== null && expiresAt.getTime() <= Date.now()) throw validationError('expires_at', 'must be in the future');
  const random = randomBytes(32).toString('base64url');
  const secret = `sk_${mode}_${random}`;
  const max = config().apiKeys.maxPerUser;
  const created = await inTransaction(async (tx) => {
    const key = await createApiKeyWithin(
      { id: uuidv7(), userId: caller.id, name, mode, prefix: keyPrefix(mode, random), secretHash: apiKeyHash(secret), scopes, expiresAt },
      max,
      tx,
    );
    if (key) await recordStaffAction(tx, { by: caller, ...keyAudit('api_key.created', key) });
    return key;
  });
  if (!created) {
    throw new AppError('limit_exceeded', `a user may have at most ${max} API keys in use (API_KEYS_MAX_PER_USER); revoke one first`);
  }
  log.info({ keyId: created.id, userId: caller.id, mode, scopes }, 'API key created');
  return { ...view(created), secret };
}

/** A key's audit entry (docs/compliance.md#audit-trail): what it reaches, never its secret or hash. */
const keyAudit = (action: 'api_key.created' | 'api_key.revoked', k: ApiKeyRecord) => {
  const what = { name: k.name, mode: k.mode, prefix: k.prefix, scopes: k.scopes, owner: k.userId };
  return action === 'api_key.created'
    ? { action, subjectType: 'api_key' as const, subjectId: k.id, before: null, after: { ...what, revoked: false } }
    : { action, subjectType: 'api_key' as const, subjectId: k.id, before: { ...what, revoked: false }, after: { ...what, revoked: true } };
};

/** The caller's keys, revoked ones included, newest first, keyset-paged. */
export async function listKeys(caller: Caller, q: { limit?: number; cursor?: string }): Promise<Page<ApiKeyView>> {
  const { limit, before } = keysetQuery(q);
  const rows = await listApiKeys(caller.id, before, limit + 1);
  return keysetPage(rows, limit, view);
}

/** Revoke one of the caller's keys, at once: its next request is refused. Another user's key is a 404. */
export async function revokeKey(caller: Caller, keyId: string): Promise<void> {
  if (caller.key) throw new AppError('forbidden', 'an API key cannot revoke keys: sign in to revoke one');
  if (!isUuid(keyId)) throw validationError('key_id', 'must be a UUID');
  const key = await findApiKey(keyId);
  if (!key || key.userId !== caller.id) throw notFound(`API key ${keyId}`);
  const revoked = await inTransaction(async (tx) => {
    const done = await revokeApiKey(keyId, caller.id, tx);
    if (done) await recordStaffAction(tx, { by: caller, ...keyAudit('api_key.revoked', key) });
    return done;
  });
  if (revoked) log.info({ keyId, userId: caller.id }, 'API key revoked');
}

/** Why a key of `mode` has no place in a deployment that serves only `served` keys. */
export const notServed = (mode: ApiKeyMode, served: ApiKeyMode): string =>
  served === 'test'
    ? `this deployment is a sandbox (every rail is the sandbox): it issues and accepts only test keys, not ${mode} keys`
    : `this deployment is live (every rail is real): it issues and accepts only live keys, not ${mode} keys`;

/**
 * A key of the mode this deployment does not serve (made before it changed worlds) is refused on every
 * request; in a local run, which may mix rails, each key is held to its rails by `assertKeyReachesRail`.
 */
export function assertKeyServedHere(mode: ApiKeyMode): void {
  const served = keyModeOfDeployment();
  if (served !== null && mode !== served) throw new AppError('forbidden', notServed(mode, served));
}

/**
 * A `test` key reaches only sandbox rails and a `live` key only real ones (docs/access.md#test-and-live-keys): checked before
 * anything moves. `rail` is the connector the operation would use; requests with a JWT are not limited.
 */
export function assertKeyReachesRail(caller: Caller, rail: string, what: string): void {
  if (!caller.key) return;
  const sandbox = rail === 'sandbox';
  if (caller.key.mode === 'test' && !sandbox) {
    throw new AppError('forbidden', `a test API key reaches only sandbox rails; ${what} would go through ${rail}`);
  }
  if (caller.key.mode === 'live' && sandbox) {
    throw new AppError('forbidden', `a live API key reaches only real rails; ${what} would go through the sandbox`);
  }
}
