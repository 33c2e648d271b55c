import type { Request, RequestHandler } from 'express';
import { rateLimitKeyOf } from '../../domain/client-address';
import { authenticateRequest } from '../auth/authentication';
import { consumeApiQuota, rateLimitHeaders, type QuotaPartition } from '../../services/rate-limits';

/**
 * The API quota (docs/conventions.md#rate-limits): every request under /api/v1 counts against its credential — the API key it
 * came with, else the signed-in user, else its address — and, when it has an account, against the account's
 * quota too, shared by all its keys and logins (so that more keys never mean more requests). Every answer
 * carries the IETF `RateLimit-Policy` and `RateLimit` fields; past either quota the answer is 429 with
 * `Retry-After`. Provider callbacks are not counted: they are authenticated by their own tokens and arrive
 * in bursts from a provider's few addresses. The quota is counted in this process and told to Redis in
 * batches, within the fleet-wide bound the docs state (services/rate-limits.ts).
 */
async function partitionOf(req: Request): Promise<QuotaPartition> {
  if (req.headers.authorization) {
    try {
      const caller = await authenticateRequest(req);
      return { credential: caller.key ? `key:${caller.key.id}` : `user:${caller.id}`, account: caller.id };
    } catch {
      // Refused by the route itself; counted against the address meanwhile.
    }
  }
  return { credential: `ip:${rateLimitKeyOf(req.ip ?? '')}` };
}

export const apiRateLimit: RequestHandler = (req, res, next) => {
  if (req.path.startsWith('/callbacks/')) {
    next();
    return;
  }
  partitionOf(req)
    .then(consumeApiQuota)
    .then((quotas) => {
      res.set(rateLimitHeaders(quotas));
      next();
    }, next);
};
