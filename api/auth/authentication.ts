import { createHash, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import jwt from 'jsonwebtoken';
import { LRUCache } from 'lru-cache';
import passport from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import { config } from '../../platform/config';
import { AppError } from '../../platform/errors';
import { isUuid } from '../../platform/ids';
import { ROLES, type Role } from '../../domain/users';
import { standingOf, standingWithOrder } from '../../repositories/users';
import type { OrderWithEvents } from '../../repositories/orders';
import { apiKeyHash, keyRefusal, looksLikeApiKey, parseApiKey, scopeFor } from '../../domain/api-keys';
import type { Caller } from '../../domain/caller';

export { isStaff, type Caller } from '../../domain/caller';
import { activeKeyByPrefix, touchApiKey } from '../../repositories/api-keys';
import { assertKeyServedHere } from '../../services/api-key-service';
import { componentLogger } from '../../platform/logger';

const log = componentLogger('auth');

let configured = false;

function ensureStrategy(): void {
  if (configured) return;
  const { jwt } = config();
  passport.use(
    new JwtStrategy(
      {
        jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
        // A KeyObject, not a string: jsonwebtoken otherwise first tries (and fails) to parse it as a public key.
        secretOrKey: createSecretKey(Buffer.from(jwt.secret)) as unknown as string,
        algorithms: ['HS256'],
        issuer: jwt.issuer,
        audience: jwt.audience,
        jsonWebTokenOptions: { maxAge: `${jwt.ttlSeconds}s` },
      },
      (payload: { sub?: unknown; roles?: unknown }, done: (err: unknown, user?: Caller | false) => void) => {
        const roles = Array.isArray(payload.roles) ? payload.roles : [];
        if (typeof payload.sub !== 'string' || !isUuid(payload.sub) || !roles.every((r) => ROLES.includes(r as Role))) {
          done(null, false);
          return;
        }
        done(null, { id: payload.sub, roles: roles as Role[] });
      },
    ),
  );
  configured = true;
}

const verified = new WeakMap<Request, Promise<Caller>>();

/**
 * Verify the bearer token of a request; resolves to the caller, or rejects with `unauthenticated`.
 * The result is kept for the request, so middleware and the route verify the token once.
 */
export function authenticateRequest(request: Request): Promise<Caller> {
  const known = verified.get(request);
  if (known) return known;
  const result = verifyBearer(request);
  verified.set(request, result);
  return result;
}

/**
 * The token proves who signed in; the account as it is now decides what they may do. One primary-key read
 * per request (roles and KYC status): a removed account is 401 and a changed role applies on the very next request, not when
 * the token expires. Two routes read it in their own statement instead: the order read, with the order, and a
 * payment's initiation, with the order's checks (see below).
 */
async function verifyBearer(request: Request): Promise<Caller> {
  const token = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (token && looksLikeApiKey(token)) return verifyApiKey(token);
  const subject = await verifySignature(request);
  if (isPaymentInitiate(request)) return { id: subject, roles: [], standingInStatement: true };
  const orderId = orderReadOf(request);
  const withOrder = orderId ? await standingWithOrder(subject, orderId) : undefined;
  const standing = withOrder === undefined ? await standingOf(subject) : withOrder;
  if (!standing) throw new AppError('unauthenticated', 'a valid bearer token is required');
  if (orderId && withOrder) readAhead.set(request, { orderId, order: withOrder.order });
  return { id: subject, roles: standing.roles.filter((r): r is Role => ROLES.includes(r)), kycStatus: standing.kycStatus };
}

/**
 * The order read (`GET /api/v1/payments/orders/{order_id}`), the status read clients poll most: the caller's
 * standing and the order with its events are read in one statement, here, and the route answers from what was
 * read (`orderReadAhead`). Whether the caller may see the order is still decided by the route, from the
 * standing read in the same statement: nothing about the caller is older than the request.
 */
const ORDER_READ = /^\/api\/v1\/payments\/orders\/([^/?#]+)\/?(?:[?#]|$)/;
const readAhead = new WeakMap<Request, { orderId: string; order: OrderWithEvents | null }>();

function orderReadOf(request: Request): string | null {
  if (request.method !== 'GET') return null;
  const id = ORDER_READ.exec(request.originalUrl)?.[1];
  return id && isUuid(id) ? id : null;
}

/**
 * A payment's initiation (`POST /api/v1/payments/initiate`), the write clients make most: the statement that
 * records the order reads the account's standing (whether it exists, its KYC status) with the order's checks, and
 * refuses an account that is gone before anything is written (`initiatePayment`). The route requires no role, so
 * the caller reaches it with none; its body is validated first, against nothing but the public catalogues.
 */
const PAYMENT_INITIATE = /^\/api\/v1\/payments\/initiate\/?(?:[?#]|$)/;

const isPaymentInitiate = (request: Request): boolean => request.method === 'POST' && PAYMENT_INITIATE.test(request.originalUrl);

/** The order read with the caller's standing for this request, if it was (undefined: read it now). */
export function orderReadAhead(request: Request, orderId: string): OrderWithEvents | null | undefined {
  const known = readAhead.get(request);
  return known?.orderId === orderId ? known.order : undefined;
}

/**
 * An API key: found by its prefix, then its hash compared in constant time. A revoked or expired key is not
 * found, so it is refused on its very next request. A key is a merchant's credential: it acts as its owner
 * with the `user` role only, never the owner's staff roles, which are for the person signed in
 * (docs/access.md#what-a-key-can-never-do).
 */
async function verifyApiKey(token: string): Promise<Caller> {
  const refused = new AppError('unauthenticated', 'a valid bearer token or API key is required');
  const parsed = parseApiKey(token);
  const key = parsed ? await activeKeyByPrefix(parsed.prefix) : null;
  if (!parsed || !key || key.mode !== parsed.mode || !timingSafeEqual(apiKeyHash(token), key.secretHash)) throw refused;
  const standing = await standingOf(key.userId);
  if (!standing) throw refused;
  assertKeyServedHere(key.mode);
  touchApiKey(key.id).catch((err: unknown) => log.warn({ err, keyId: key.id }, 'could not note when the key was last used'));
  return {
    id: key.userId,
    roles: standing.roles.filter((r): r is Role => r === 'user'),
    key: { id: key.id, mode: key.mode, scopes: key.scopes },
    kycStatus: standing.kycStatus,
  };
}

/**
 * Bearer tokens whose signature and pinned claims were verified, by their SHA-256, each until it expires (its
 * `exp`, or its `iat` plus `JWT_TTL_SECONDS` if sooner): a token is verified once per process, not once per
 * request (docs/access.md#accounts). Only the verified subject is kept; the account's standing (roles, KYC,
 * whether it still exists) is read on every request all the same. At most this many tokens are kept, the
 * least recently used dropped first; a forged token is never kept, so it is checked, and refused, every time.
 */
const VERIFIED_TOKENS_KEPT = 10_000;
const verifiedTokens = new LRUCache<string, { subject: string; expiresAtMs: number }>({ max: VERIFIED_TOKENS_KEPT });

const tokenHash = (token: string): string => createHash('sha256').update(token).digest('base64url');

/** When a verified token stops being accepted: at its expiry, or at its issue time plus the configured lifetime. */
function acceptedUntilMs(token: string): number | null {
  const claims = jwt.decode(token, { json: true });
  if (typeof claims?.exp !== 'number' || typeof claims.iat !== 'number') return null;
  return Math.min(claims.exp, claims.iat + config().jwt.ttlSeconds) * 1000;
}

/** The subject of a request's bearer JWT, its signature and claims verified (once per token; see above). */
async function verifySignature(request: Request): Promise<string> {
  const token = ExtractJwt.fromAuthHeaderAsBearerToken()(request);
  if (!token) throw new AppError('unauthenticated', 'a valid bearer token is required');
  const key = tokenHash(token);
  const known = verifiedTokens.get(key);
  if (known && Date.now() < known.expiresAtMs) return known.subject;
  if (known) verifiedTokens.delete(key);
  const { id } = await verifyWithStrategy(request);
  const expiresAtMs = acceptedUntilMs(token);
  if (expiresAtMs !== null) verifiedTokens.set(key, { subject: id, expiresAtMs });
  return id;
}

function verifyWithStrategy(request: Request): Promise<Caller> {
  ensureStrategy();
  return new Promise((resolve, reject) => {
    const handler = passport.authenticate('jwt', { session: false }, (err: unknown, user: Caller | false) => {
      if (err || !user) reject(new AppError('unauthenticated', 'a valid bearer token is required'));
      else resolve(user);
    }) as (req: Request, res: Request['res'], next: () => void) => void;
    handler(request, request.res, () => undefined);
  });
}

/**
 * tsoa's authentication hook: `@Security('jwt', ['compliance', 'admin'])` admits any listed role. The bearer
 * is a JWT or an API key; a key must also carry the scope the operation needs (`scopeFor`), and that scope
 * must be one a key can hold at all (`keyRefusal`).
 */
export async function expressAuthentication(request: Request, securityName: string, scopes: string[] = []): Promise<Caller> {
  if (securityName !== 'jwt') throw new AppError('unauthenticated', `unknown security scheme ${securityName}`);
  const caller = await authenticateRequest(request);
  if (caller.key) {
    const refusal = keyRefusal(caller.key.scopes, scopeFor(request.method, `${request.baseUrl}${request.path}`));
    if (refusal) throw new AppError('forbidden', refusal);
  }
  if (scopes.length > 0 && !scopes.some((role) => caller.roles.includes(role as Role))) {
    throw new AppError('forbidden', `requires one of the roles: ${scopes.join(', ')}`);
  }
  const requestId = (request as { id?: string }).id;
  return requestId ? { ...caller, requestId } : caller;
}
