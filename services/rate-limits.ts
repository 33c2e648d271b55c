import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
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

/** One quota a request is counted against: its name, where the fleet's count of it is kept, and its limit. */
export interface QuotaAsk {
  name: Quota['name'];
  /** The store key, without the window (the counter adds the window's start). */
  key: string;
  limit: number;
}

/** Whether a request was admitted, and where it left each of its quotas. */
export interface QuotaVerdict {
  admitted: boolean;
  quotas: Quota[];
  /** The quotas that refused it (none when admitted). */
  exceeded: Quota[];
}

/** Where the fleet's counts are kept. */
export interface QuotaStore {
  /** Whether a round trip may be awaited now: false while the connection is away. */
  ready(): boolean;
  /** Add each count to its key's total, kept for `ttlMs`, in one round trip: each key's new total, or what went wrong. */
  add(counts: { key: string; n: number; ttlMs: number }[]): Promise<(number | Error)[]>;
}

export interface QuotaCounterOptions {
  windowMs: number;
  /** B: the most requests per quota and window admitted here that the store has not counted yet. */
  batch: () => number;
  /** The longest a request waits for the store's answer before this process counts on its own. */
  waitMs: number;
  now?: () => number;
}

/** One quota's window, as this process knows it. */
interface WindowCount {
  storeKey: string;
  windowEnd: number;
  /** The fleet's total for the window as the store last answered: it includes this process's counts sent so far. */
  seen: number;
  /** Admitted here, not yet sent. */
  pending: number;
  /** Sent, not yet answered. */
  sending: number;
  flushing?: Promise<void>;
  /** When the batch being sent left. */
  sentAt?: number;
}

const unconfirmed = (c: WindowCount) => c.pending + c.sending;
const used = (c: WindowCount) => c.seen + unconfirmed(c);

/**
 * The API quota counted in this process, its counts sent to the store in batches (docs/conventions.md#rate-limits).
 *
 * Windows are fixed: whole multiples of `windowMs` of the clock, and the store key carries the window's
 * start, so every process counts the same window. A request is admitted only when, for each of its quotas,
 * `seen + unconfirmed < limit` (the fleet's total last answered, plus what this process admitted since
 * that the store had not counted), and `unconfirmed < B`; at B, the request waits for the store's answer
 * first. Refused requests are not counted.
 *
 * The bound, with N processes counting one quota in one window while the store answers: take the process
 * M whose last admission rested on the latest total, the store's at τ. Every other process Q admitted at
 * most B more than the store had counted of it at the read its own last admission rested on (B caps its
 * unconfirmed), and that read came no later than τ: so at most B more than the store had of Q at τ. M's
 * last admission had the store's total at τ plus M's own admissions beyond it within the limit. Summed: the
 * fleet admits at most `limit + (N − 1) × B`. A request is refused only once the fleet has admitted
 * `limit`, so no fewer are admitted to a caller that asks for more.
 * While the store is away, or has not answered a batch within `waitMs`, each process counts alone (up to
 * the limit each): a request never waits on a store that is away, and at most `waitMs` on one that hangs.
 */
export class QuotaCounter {
  private readonly windows = new Map<string, WindowCount>();
  private readonly now: () => number;

  constructor(
    private readonly store: QuotaStore,
    private readonly options: QuotaCounterOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Admit one request against every quota asked, counting it in each, or refuse it and count nothing. */
  async take(asks: QuotaAsk[]): Promise<QuotaVerdict> {
    let waitForStore = true;
    for (;;) {
      const now = this.now();
      const counts = asks.map((ask) => this.windowOf(ask.key, now));
      const exceeded = asks.filter((ask, i) => used(counts[i]) >= ask.limit);
      if (exceeded.length === 0) {
        const batch = this.options.batch();
        // A batch unanswered for longer than a request may wait: the store is as good as away, nobody waits on it.
        const overdue = (c: WindowCount) => c.flushing !== undefined && now - (c.sentAt ?? now) >= this.options.waitMs;
        const full = waitForStore && this.store.ready() ? counts.filter((c) => unconfirmed(c) >= batch && !overdue(c)) : [];
        if (full.length > 0) {
          waitForStore = await this.answered(full);
          continue;
        }
        for (const c of counts) c.pending += 1;
      }
      const quotas = asks.map((ask, i) => this.quotaOf(ask, counts[i], now));
      return { admitted: exceeded.length === 0, quotas, exceeded: quotas.filter((_, i) => exceeded.includes(asks[i])) };
    }
  }

  /** Send every count not yet sent, and forget the windows that are over. Resolves when the store has answered. */
  async flush(): Promise<void> {
    const now = this.now();
    for (const [id, c] of this.windows) if (c.windowEnd <= now && !c.flushing) this.windows.delete(id);
    if (!this.store.ready()) return;
    const counts = [...this.windows.values()];
    this.send(counts);
    await Promise.all(counts.map((c) => c.flushing ?? Promise.resolve()));
  }

  /** Whether every count awaited was answered within `waitMs`. */
  private async answered(counts: WindowCount[]): Promise<boolean> {
    this.send(counts);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.options.waitMs);
    });
    try {
      return await Promise.race([Promise.all(counts.map((c) => c.flushing ?? Promise.resolve())).then(() => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One round trip for the counts not being sent already: each answer becomes what the fleet is known to have used. */
  private send(counts: WindowCount[]): void {
    const batch = counts.filter((c) => !c.flushing && c.pending > 0);
    if (batch.length === 0) return;
    const now = this.now();
    for (const c of batch) {
      c.sending = c.pending;
      c.pending = 0;
    }
    const done = this.store
      // Kept a window past its end: a late count still lands in the window it belongs to.
      .add(batch.map((c) => ({ key: c.storeKey, n: c.sending, ttlMs: c.windowEnd - now + this.options.windowMs })))
      .catch((err: unknown) => batch.map(() => (err instanceof Error ? err : new Error(String(err)))))
      .then((totals) => {
        batch.forEach((c, i) => {
          const total = totals[i];
          // Not counted (or not known to be): sent again with the next batch. Counting twice only refuses sooner.
          if (typeof total === 'number') c.seen = Math.max(c.seen, total);
          else c.pending += c.sending;
          c.sending = 0;
          c.flushing = undefined;
        });
      });
    for (const c of batch) {
      c.flushing = done;
      c.sentAt = now;
    }
  }

  private windowOf(key: string, now: number): WindowCount {
    const { windowMs } = this.options;
    const start = now - (now % windowMs);
    const id = `${key}:${start / 1000}`;
    let count = this.windows.get(id);
    if (!count) {
      count = { storeKey: id, windowEnd: start + windowMs, seen: 0, pending: 0, sending: 0 };
      this.windows.set(id, count);
    }
    return count;
  }

  private quotaOf(ask: QuotaAsk, count: WindowCount, now: number): Quota {
    return {
      name: ask.name,
      limit: ask.limit,
      remaining: Math.max(0, ask.limit - used(count)),
      resetSeconds: Math.max(0, Math.ceil((count.windowEnd - now) / 1000)),
      windowSeconds: this.options.windowMs / 1000,
    };
  }
}

const API_WINDOW_SECONDS = 60;
/** The longest a request waits for Redis to count a full batch before this process counts on its own. */
const API_QUOTA_WAIT_MS = 1000;

/**
 * INCRBY and PEXPIRE for each key, answering the keys' totals: one command for a whole flush. (A pipeline object
 * per flush cost more CPU than the commands it sent: ioredis copies every command onto each new pipeline.)
 */
const QUOTA_ADD = `local totals = {}
for i, key in ipairs(KEYS) do
  totals[i] = redis.call('INCRBY', key, ARGV[2 * i - 1])
  redis.call('PEXPIRE', key, ARGV[2 * i])
end
return totals`;

type QuotaRedis = ReturnType<typeof redis> & { quotaAdd(keys: number, ...args: (string | number)[]): Promise<number[]> };

function quotaRedis(): QuotaRedis {
  const client = redis() as QuotaRedis;
  if (typeof client.quotaAdd !== 'function') client.defineCommand('quotaAdd', { lua: QUOTA_ADD });
  return client;
}

/** Redis as the quota's store: the flush's counts added in one script, answering the fleet's totals. */
const redisQuotaStore: QuotaStore = {
  ready: () => redis().status === 'ready',
  async add(counts) {
    const totals = await quotaRedis().quotaAdd(counts.length, ...counts.map((c) => c.key), ...counts.flatMap((c) => [c.n, c.ttlMs]));
    return counts.map((_, i) => (totals[i] === undefined ? new Error('no answer') : Number(totals[i])));
  },
};

let apiQuota: { counter: QuotaCounter; timer: NodeJS.Timeout } | undefined;

function apiQuotaCounter(): QuotaCounter {
  if (!apiQuota) {
    const counter = new QuotaCounter(redisQuotaStore, {
      windowMs: API_WINDOW_SECONDS * 1000,
      batch: () => config().rateLimits.apiBatch,
      waitMs: API_QUOTA_WAIT_MS,
    });
    const timer = setInterval(() => void counter.flush(), config().rateLimits.apiFlushMs);
    timer.unref();
    apiQuota = { counter, timer };
  }
  return apiQuota.counter;
}

/**
 * At shutdown: stop the periodic flush and send what this process counted and Redis has not, waiting for
 * Redis no longer than a request would. Counts that never reach Redis are within this process's B, so the
 * fleet's bound holds either way; sent, they keep the rest of the fleet from admitting them again.
 */
export async function flushApiQuota(): Promise<void> {
  if (!apiQuota) return;
  const { counter, timer } = apiQuota;
  apiQuota = undefined;
  clearInterval(timer);
  let late: NodeJS.Timeout | undefined;
  await Promise.race([counter.flush(), new Promise<void>((resolve) => (late = setTimeout(resolve, API_QUOTA_WAIT_MS)))]);
  clearTimeout(late);
}

/**
 * Count one request against its credential's quota and, when it has one, its account's. Resolves to the
 * quotas left; past either limit, rejects with 429 `rate_limited` carrying Retry-After and the quotas.
 */
export async function consumeApiQuota(partition: QuotaPartition): Promise<Quota[]> {
  const cfg = config();
  const prefix = `${cfg.queuePrefix}:rl`;
  const asks: QuotaAsk[] = [{ name: 'default', key: `${prefix}:api:${partition.credential}`, limit: cfg.rateLimits.apiPerMinute }];
  if (partition.account) {
    asks.push({ name: 'account', key: `${prefix}:api-account:${partition.account}`, limit: cfg.rateLimits.apiPerAccountPerMinute });
  }
  const { admitted, quotas, exceeded } = await apiQuotaCounter().take(asks);
  if (admitted) return quotas;
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
