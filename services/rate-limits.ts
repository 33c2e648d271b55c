import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { rateLimitKeyOf } from '../domain/client-address';
import { config } from '../platform/config';
import { AppError } from '../platform/errors';
import { redis } from '../platform/redis';

/**
 * Login and registration limits, kept in Redis so that every api instance shares them. Addresses are
 * counted by `rateLimitKeyOf`: an IPv6 client per /64.
 *
 * Failed logins are bounded the way OWASP's authentication cheat sheet (and rate-limiter-flexible's
 * "login endpoint protection" recipe) advise, so that guessing is bounded without handing anyone a way to
 * lock the owner out:
 * - per account and address, tightly (5 per 15 minutes by default): the guesser is stopped, the owner at
 *   another address is not; a successful login from that address clears its count;
 * - per account, loosely (100 per hour by default): a guesser spread over many addresses is still bounded;
 *   an address the account logged in from in the last 30 days is exempt from it, so however many addresses
 *   (or /64s) fail on purpose, the owner still signs in where they usually do;
 * - per address, whatever the account (30 per minute by default).
 */

type Limiters = {
  loginIp: RateLimiterRedis;
  loginAccountAndIp: RateLimiterRedis;
  loginAccount: RateLimiterRedis;
  registerIp: RateLimiterRedis;
  screen: RateLimiterRedis;
};

let limiters: Limiters | undefined;

function get(): Limiters {
  if (!limiters) {
    const cfg = config();
    const storeClient = redis();
    const prefix = `${cfg.queuePrefix}:rl`;
    limiters = {
      loginIp: new RateLimiterRedis({ storeClient, keyPrefix: `${prefix}:login-ip`, points: cfg.rateLimits.loginPerIp, duration: 60 }),
      loginAccountAndIp: new RateLimiterRedis({
        storeClient,
        keyPrefix: `${prefix}:login-account-ip`,
        points: cfg.rateLimits.loginPerAccountAndIp,
        duration: 15 * 60,
      }),
      loginAccount: new RateLimiterRedis({
        storeClient,
        keyPrefix: `${prefix}:login-account-1h`,
        points: cfg.rateLimits.loginPerAccount,
        duration: 3600,
      }),
      registerIp: new RateLimiterRedis({
        storeClient,
        keyPrefix: `${prefix}:register-ip`,
        points: cfg.rateLimits.registerPerIp,
        duration: 3600,
      }),
      screen: new RateLimiterRedis({ storeClient, keyPrefix: `${prefix}:screen`, points: cfg.rateLimits.screenPerMinute, duration: 60 }),
    };
  }
  return limiters;
}

function limited(res: RateLimiterRes, what: string): AppError {
  const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return new AppError('rate_limited', `too many ${what}; retry in ${retryAfter} s`, { headers: { 'Retry-After': String(retryAfter) } });
}

async function consume(limiter: RateLimiterRedis, key: string, what: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (err instanceof RateLimiterRes) throw limited(err, what);
    throw new AppError('dependency_unavailable', 'the rate limiter is unavailable');
  }
}

/** The (account, address) key; an address key never holds `|`, so the two parts cannot run into each other. */
const accountAndAddress = (email: string, ip: string) => `${rateLimitKeyOf(ip)}|${email}`;

export const limitLoginByIp = (ip: string) => consume(get().loginIp, rateLimitKeyOf(ip), 'login attempts from this address');
export const limitRegisterByIp = (ip: string) => consume(get().registerIp, rateLimitKeyOf(ip), 'registrations from this address');
/** Staff searches of the lists: a bound on how fast anyone can walk them. */
export const limitScreeningSearch = (userId: string) => consume(get().screen, userId, 'list searches');

/**
 * How long an address the account logged in from stays known: 30 days from its last successful login.
 *
 * Known addresses are kept in Redis with that TTL, beside the counters they exempt from (docs/access.md#login-limits):
 * they expire by themselves, need no table or pruning job, and every api instance reads the same ones. Losing
 * them (Redis emptied) only takes away the exemption until the owner's next successful login.
 */
const KNOWN_ADDRESS_TTL_SECONDS = 30 * 24 * 3600;

const knownAddressKey = (email: string, ip: string) => `${config().queuePrefix}:login-known:${accountAndAddress(email, ip)}`;

/** Whether the account logged in successfully from this address (an IPv6 one: this /64) in the last 30 days. */
async function isKnownAddress(email: string, ip: string): Promise<boolean> {
  try {
    return (await redis().exists(knownAddressKey(email, ip))) === 1;
  } catch {
    throw new AppError('dependency_unavailable', 'the rate limiter is unavailable');
  }
}

/** Which bounds a login attempt was counted against, for `clearFailedLogins` to give back. */
export interface LoginClaim {
  /** Counted against the account as a whole: not from an address the account is known at. */
  accountWide: boolean;
}

/**
 * Count a login attempt against the account, from this address and overall, before its password is checked,
 * and refuse it (429) once either bound is used up. Counting first, atomically in Redis, is what bounds the
 * guesses: checking for a lock and counting the failure afterwards would let every guess sent at the same
 * time through. A successful login gives its attempt back (`clearFailedLogins`), so only failures add up.
 *
 * From an address the account logged in from in the last 30 days only the tight per-address bound applies:
 * failures elsewhere, from however many addresses, never lock the owner out where they usually sign in
 * (OWASP authentication cheat sheet, "account lockout").
 */
export async function claimLoginAttempt(email: string, ip: string): Promise<LoginClaim> {
  await consume(get().loginAccountAndIp, accountAndAddress(email, ip), 'failed logins for this account from this address');
  if (await isKnownAddress(email, ip)) return { accountWide: false };
  await consume(get().loginAccount, email, 'failed logins for this account');
  return { accountWide: true };
}

/**
 * After a successful login: the address's failures for the account are forgiven, this attempt is not one,
 * and the address is known to the account for the next 30 days.
 */
export async function clearFailedLogins(email: string, ip: string, claim: LoginClaim): Promise<void> {
  await get().loginAccountAndIp.delete(accountAndAddress(email, ip));
  if (claim.accountWide) await get().loginAccount.reward(email, 1);
  await redis().set(knownAddressKey(email, ip), '1', 'EX', KNOWN_ADDRESS_TTL_SECONDS);
}

// --- the API quota (docs/conventions.md#rate-limits): per credential (an API key, a signed-in user, or an address), and
// per account across all its credentials

/** Where a caller stands against one of its quotas, for the IETF `RateLimit` and `RateLimit-Policy` fields. */
export interface Quota {
  /** `default`: the credential's own quota; `account`: the account's, shared by its keys and logins. */
  name: 'default' | 'account';
  limit: number;
  remaining: number;
  /** Seconds until the window starts again. */
  resetSeconds: number;
  windowSeconds: number;
}

/** Who a request counts against: its credential (`key:<id>`, `user:<id>` or `ip:<address>`) and its account, if any. */
export interface QuotaPartition {
  credential: string;
  account?: string;
}

const API_WINDOW_SECONDS = 60;
const apiLimiters = new Map<Quota['name'], { points: number; limiter: RateLimiterRedis }>();

/**
 * A quota's limiter, made again when the configured rate changes. While Redis is not connected it is not
 * asked at all, and this process's memory counts instead: the quota never makes a request wait on Redis.
 */
function quotaLimiter(name: Quota['name']): { points: number; limiter: RateLimiterRedis } {
  const { apiPerMinute, apiPerAccountPerMinute } = config().rateLimits;
  const points = name === 'default' ? apiPerMinute : apiPerAccountPerMinute;
  let known = apiLimiters.get(name);
  if (known?.points !== points) {
    known = {
      points,
      limiter: new RateLimiterRedis({
        storeClient: redis(),
        keyPrefix: `${config().queuePrefix}:rl:${name === 'default' ? 'api' : 'api-account'}`,
        points,
        duration: API_WINDOW_SECONDS,
        // Requests never wait on a Redis that is away: this process's memory counts meanwhile.
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points, duration: API_WINDOW_SECONDS }),
      }),
    };
    apiLimiters.set(name, known);
  }
  return known;
}

const quotaOf = (name: Quota['name'], points: number, res: RateLimiterRes): Quota => ({
  name,
  limit: points,
  remaining: Math.max(0, res.remainingPoints),
  resetSeconds: Math.max(0, Math.ceil(res.msBeforeNext / 1000)),
  windowSeconds: API_WINDOW_SECONDS,
});

/** Count one request against one quota: where it stands, and whether it is past the limit. */
async function consumeQuota(name: Quota['name'], key: string): Promise<{ quota: Quota; exceeded: boolean }> {
  const { points, limiter } = quotaLimiter(name);
  try {
    return { quota: quotaOf(name, points, await limiter.consume(key)), exceeded: false };
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    return { quota: quotaOf(name, points, err), exceeded: true };
  }
}

/**
 * Count one request against its credential's quota and, when it has one, its account's. Resolves to the
 * quotas left; past either limit, rejects with 429 `rate_limited` carrying Retry-After and the quotas.
 */
export async function consumeApiQuota(partition: QuotaPartition): Promise<Quota[]> {
  const counted = await Promise.all([
    consumeQuota('default', partition.credential),
    ...(partition.account ? [consumeQuota('account', partition.account)] : []),
  ]);
  const quotas = counted.map((c) => c.quota);
  const exceeded = counted.filter((c) => c.exceeded).map((c) => c.quota);
  if (exceeded.length === 0) return quotas;
  const retryAfter = Math.max(1, ...exceeded.map((q) => q.resetSeconds));
  const which = exceeded.some((q) => q.name === 'account') ? 'requests for this account' : 'requests';
  throw new AppError('rate_limited', `too many ${which}; retry in ${retryAfter} s`, {
    headers: { 'Retry-After': String(retryAfter), ...rateLimitHeaders(quotas) },
  });
}

/** The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): each policy, and what is left of it. */
export function rateLimitHeaders(quotas: Quota[]): Record<string, string> {
  return {
    'RateLimit-Policy': quotas.map((q) => `"${q.name}";q=${q.limit};w=${q.windowSeconds}`).join(', '),
    RateLimit: quotas.map((q) => `"${q.name}";r=${q.remaining};t=${q.resetSeconds}`).join(', '),
  };
}
