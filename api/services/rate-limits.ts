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

/**
 * Count a login attempt against the account before its password is checked, and refuse it (429) once the
 * account has used up its attempts. Counting first, atomically in Redis, is what bounds the guesses:
 * checking for a lock and counting the failure afterwards would let every guess sent at the same time
 * through. A successful login clears the count (`clearFailedLogins`), so only failures add up.
 */
export const claimLoginAttempt = (email: string) => consume(get().loginAccount, email, 'failed logins for this account');
export const clearFailedLogins = (email: string) => get().loginAccount.delete(email);
