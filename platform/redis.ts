import { Redis } from 'ioredis';
import { config } from './config';
import { componentLogger } from './logger';

let client: Redis | undefined;

/** A Redis connection. Workers (BullMQ) need `maxRetriesPerRequest: null`; request paths want fast failure. */
export function createRedis(options: { forWorker?: boolean } = {}): Redis {
  const log = componentLogger('redis');
  const redis = new Redis(config().redisUrl, {
    maxRetriesPerRequest: options.forWorker ? null : 2,
    enableOfflineQueue: true,
    lazyConnect: false,
  });
  redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis error'));
  return redis;
}

export function redis(): Redis {
  client ??= createRedis();
  return client;
}

export async function closeRedis(): Promise<void> {
  if (client) {
    const closing = client;
    client = undefined;
    await closing.quit().catch(() => closing.disconnect());
  }
}
