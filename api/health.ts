import { Router } from 'express';
import { config } from '../platform/config';
import { pingDatabase } from '../repositories/transaction';
import { redis } from '../platform/redis';
import { temporalHealthy } from '../platform/temporal';

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);

async function check(fn: () => Promise<unknown>): Promise<'up' | 'down'> {
  try {
    await withTimeout(fn(), 2000);
    return 'up';
  } catch {
    return 'down';
  }
}

/** `/healthz`: the process is alive. `/readyz`: Postgres, Redis and Temporal answer; `rails` names each method's connector. */
export function healthRouter(): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const [postgres, redisStatus, temporal] = await Promise.all([
      check(() => pingDatabase()),
      check(() => redis().ping()),
      check(async () => {
        if (!(await temporalHealthy())) throw new Error('down');
      }),
    ]);
    const checks = { postgres, redis: redisStatus, temporal };
    const ready = Object.values(checks).every((s) => s === 'up');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks, rails: config().rails });
  });
  return router;
}
