import type { Request, RequestHandler } from 'express';
import { rateLimitKeyOf } from '../../domain/client-address';
import { authenticateRequest } from '../auth/authentication';
import { consumeApiQuota, rateLimitHeaders } from '../../services/rate-limits';

/**
 * The API quota (docs/conventions.md#rate-limits): every request under /api/v1 counts against its caller — the API key it came
 * with, else the signed-in user, else its address — and every answer carries the IETF `RateLimit-Policy`
 * and `RateLimit` fields; past the quota the answer is 429 with `Retry-After`. Provider callbacks are not
 * counted: they are authenticated by their own tokens and arrive in bursts from a provider's few addresses.
 */
async function partitionOf(req: Request): Promise<string> {
  if (req.headers.authorization) {
    try {
      const caller = await authenticateRequest(req);
      return caller.key ? `key:${caller.key.id}` : `user:${caller.id}`;
    } catch {
      // Refused by the route itself; counted against the address meanwhile.
    }
  }
  return `ip:${rateLimitKeyOf(req.ip ?? '')}`;
}

export const apiRateLimit: RequestHandler = (req, res, next) => {
  if (req.path.startsWith('/callbacks/')) {
    next();
    return;
  }
  partitionOf(req)
    .then(consumeApiQuota)
    .then((quota) => {
      res.set(rateLimitHeaders(quota));
      next();
    }, next);
};
