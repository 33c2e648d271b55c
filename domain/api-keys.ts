/**
 * API keys (docs/access.md#api-keys), as pure rules. A key is `sk_<mode>_` and 43 base64url characters (32 random bytes);
 * its `prefix` (the mode and the first 8 random characters) names it in lists and finds it on a request.
 * A request with a key acts as the key's owner, as a merchant (never with the owner's staff roles), within the
 * key's scopes.
 *
 * Each operation needs one scope, read off its path and method: `<area>:read` for GET, `<area>:write`
 * otherwise, where the area is the first segment of the path (`/payments/initiate` → `payments:write`).
 */

import { createHash } from 'node:crypto';

/** SHA-256 of a key's whole secret: what `api_keys` stores. */
export const apiKeyHash = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

export const API_KEY_MODES = ['test', 'live'] as const;
export type ApiKeyMode = (typeof API_KEY_MODES)[number];

/** Where an operation lives: the first segment of its path under /api/v1. */
export const SCOPE_AREAS = [
  'api-keys',
  'appeals',
  'auth',
  'compliance',
  'events',
  'operations',
  'p2p',
  'payments',
  'payouts',
  'platforms',
  'sandbox',
  'users',
  'wallets',
  'webhooks',
] as const;
export type ScopeArea = (typeof SCOPE_AREAS)[number];

/** Every scope a key can carry: each area's `read` and `write`. */
export const API_KEY_SCOPES = [
  'api-keys:read',
  'api-keys:write',
  'appeals:read',
  'appeals:write',
  'auth:read',
  'auth:write',
  'compliance:read',
  'compliance:write',
  'events:read',
  'events:write',
  'operations:read',
  'operations:write',
  'p2p:read',
  'p2p:write',
  'payments:read',
  'payments:write',
  'payouts:read',
  'payouts:write',
  'platforms:read',
  'platforms:write',
  'sandbox:read',
  'sandbox:write',
  'users:read',
  'users:write',
  'wallets:read',
  'wallets:write',
  'webhooks:read',
  'webhooks:write',
] as const satisfies readonly `${ScopeArea}:${'read' | 'write'}`[];
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/**
 * Areas whose operations are staff work (compliance, operations, the sandbox simulators): done by a person
 * signed in, never with a key (docs/access.md#what-a-key-can-never-do). Their scopes cannot be granted to a key,
 * and a key made before that rule (one that still names them) is refused on their operations.
 */
export const STAFF_SCOPE_AREAS = ['compliance', 'operations', 'sandbox'] as const satisfies readonly ScopeArea[];

/** Scopes no key may hold, whoever its owner: the staff areas, and making or revoking keys (a key never mints keys). */
export const scopeForbiddenToKeys = (scope: string): boolean =>
  scope === 'api-keys:write' || (STAFF_SCOPE_AREAS as readonly string[]).includes(scope.split(':')[0]);

/** The scopes a key can be given: every scope but those `scopeForbiddenToKeys` names. */
export const KEY_GRANTABLE_SCOPES: readonly ApiKeyScope[] = API_KEY_SCOPES.filter((s) => !scopeForbiddenToKeys(s));

const SECRET = /^sk_(test|live)_([A-Za-z0-9_-]{43})$/;
const PREFIX_CHARS = 8;

/** The prefix that names a key: `sk_test_` or `sk_live_` and the first characters of its random part. */
export const keyPrefix = (mode: ApiKeyMode, random: string): string => `sk_${mode}_${random.slice(0, PREFIX_CHARS)}`;

/** A presented bearer token that has the shape of a key: its mode and prefix; null for anything else. */
export function parseApiKey(token: string): { mode: ApiKeyMode; prefix: string } | null {
  const match = SECRET.exec(token);
  if (!match) return null;
  const mode = match[1] as ApiKeyMode;
  return { mode, prefix: keyPrefix(mode, match[2]) };
}

/** Whether a bearer token is meant as an API key (then it is judged as one, never as a JWT). */
export const looksLikeApiKey = (token: string): boolean => token.startsWith('sk_');

/**
 * The scope an operation needs: `<area>:read` for a GET, `<area>:write` for anything else. `path` is the
 * route under /api/v1, with or without the prefix; null when its area is not one keys can be scoped to.
 */
export function scopeFor(method: string, path: string): string | null {
  const area = path
    .replace(/^\/api\/v1/, '')
    .split('/')
    .find(Boolean);
  if (!area || !(SCOPE_AREAS as readonly string[]).includes(area)) return null;
  return `${area}:${method.toUpperCase() === 'GET' ? 'read' : 'write'}`;
}

/**
 * The scopes asked for, checked and without repeats; the unknown ones listed when any, and the known ones no
 * key may hold (`scopeForbiddenToKeys`).
 */
export function checkScopes(asked: readonly string[]): { scopes: string[]; unknown: string[]; forbidden: string[] } {
  const scopes = [...new Set(asked)];
  const unknown = scopes.filter((s) => !(API_KEY_SCOPES as readonly string[]).includes(s));
  return { scopes, unknown, forbidden: scopes.filter((s) => !unknown.includes(s) && scopeForbiddenToKeys(s)) };
}

/**
 * Whether an API key may call an operation whose scope is `needed` (`scopeFor`): it must hold the scope, and
 * the scope must be one a key can hold at all. Returns why not, or null when it may.
 */
export function keyRefusal(keyScopes: readonly string[], needed: string | null): string | null {
  if (!needed) return 'this operation is not open to API keys';
  if (scopeForbiddenToKeys(needed)) return `this operation is not open to API keys (${needed} is done signed in, never with a key)`;
  if (!keyScopes.includes(needed)) return `this API key lacks the scope ${needed}`;
  return null;
}
