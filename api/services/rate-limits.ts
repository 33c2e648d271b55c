import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { config } from '../../platform/config';
import { AppError } from '../../platform/errors';
import { redis } from '../../platform/redis';

/** Login and registration limits, kept in Redis so that every api instance shares them. */

let limiters: { loginIp: RateLimiterRedis; loginAccount: RateLimiterRedis; registerIp: RateLimiterRedis } | undefined;

function get() {
  if (!limiters) {
    const cfg = config();
    const storeClient = redis();
    const prefix = `${cfg.queuePrefix}:rl`;
    limiters = {
      loginIp: new RateLimiterRedis({ storeClient, keyPrefix: `${prefix}:login-ip`, points: cfg.rateLimits.loginPerIp, duration: 60 }),
      loginAccount: new RateLimiterRedis({
        storeClient,
        keyPrefix: `${prefix}:login-account`,
        points: cfg.rateLimits.loginPerAccount,
        duration: 15 * 60,
      }),
      registerIp: new RateLimiterRedis({
        storeClient,
        keyPrefix: `${prefix}:register-ip`,
        points: cfg.rateLimits.registerPerIp,
        duration: 3600,
      }),
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

export const limitLoginByIp = (ip: string) => consume(get().loginIp, ip, 'login attempts from this address');
export const limitRegisterByIp = (ip: string) => consume(get().registerIp, ip, 'registrations from this address');

/** Refuse a login for an account that has used up its failed attempts. */
export async function assertAccountNotLocked(email: string): Promise<void> {
  const state = await get().loginAccount.get(email);
  if (state && state.remainingPoints <= 0) throw limited(state, 'failed logins for this account');
}

export const recordFailedLogin = (email: string) =>
  consume(get().loginAccount, email, 'failed logins for this account').catch(() => undefined);
export const clearFailedLogins = (email: string) => get().loginAccount.delete(email);
