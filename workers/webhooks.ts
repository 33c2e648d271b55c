import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import type { Config } from '../platform/config';
import { database } from '../platform/database';
import { componentLogger } from '../platform/logger';
import { deliverWebhook, dispatchWebhookEvents, pendingDeliveryIds } from '../domain/webhooks/delivery';

/**
 * Webhook delivery in the jobs process: queue `webhooks`. The job scheduler `dispatch-webhooks` (every
 * WEBHOOK_DISPATCH_EVERY_MS) fans new outbox events out to deliveries and makes sure every pending
 * delivery has a `deliver-webhook` job; the job id is the delivery id, so however many jobs processes
 * sweep, a delivery has one job at a time. A failed attempt is retried with exponential backoff
 * (WEBHOOK_BACKOFF_MS doubling, WEBHOOK_MAX_ATTEMPTS attempts), then the delivery is marked `failed`.
 */

export const WEBHOOK_QUEUE = 'webhooks';
export const DISPATCH_WEBHOOKS = 'dispatch-webhooks';
export const DELIVER_WEBHOOK = 'deliver-webhook';

export async function startWebhookDelivery(
  cfg: Config,
  connection: Redis,
  deps: { sequelize?: Sequelize; fetchImpl?: typeof fetch } = {},
): Promise<{ register: () => Promise<void>; close: () => Promise<void> }> {
  const log = componentLogger('webhooks');
  const sequelize = deps.sequelize ?? database();
  const settings = cfg.webhooks;
  const queue = new Queue(WEBHOOK_QUEUE, { connection, prefix: cfg.queuePrefix });
  queue.on('error', (err) => log.warn({ err: err.message }, 'queue error'));
  const register = async () => {
    await queue.upsertJobScheduler(
      DISPATCH_WEBHOOKS,
      { every: settings.dispatchEveryMs },
      { name: DISPATCH_WEBHOOKS, opts: { removeOnComplete: 10, removeOnFail: 100 } },
    );
  };
  const sweep = async () => {
    const created = await dispatchWebhookEvents(sequelize);
    const pending = await pendingDeliveryIds(sequelize);
    if (pending.length > 0) {
      await queue.addBulk(
        pending.map((deliveryId) => ({
          name: DELIVER_WEBHOOK,
          data: { deliveryId },
          opts: {
            jobId: deliveryId,
            attempts: settings.maxAttempts,
            backoff: { type: 'exponential', delay: settings.backoffMs },
            removeOnComplete: true,
            removeOnFail: true,
          },
        })),
      );
    }
    return { created, pending: pending.length };
  };
  const worker = new Worker(
    WEBHOOK_QUEUE,
    async (job: Job<{ deliveryId?: string }>) => {
      if (job.name === DISPATCH_WEBHOOKS) return sweep();
      if (job.name !== DELIVER_WEBHOOK || !job.data.deliveryId) throw new Error(`no processor for job ${job.name}`);
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      return deliverWebhook(sequelize, settings, job.data.deliveryId, lastAttempt, deps.fetchImpl);
    },
    { connection, prefix: cfg.queuePrefix, concurrency: 8 },
  );
  worker.on('error', (err) => log.error({ err: err.message }, 'worker error'));
  worker.on('failed', (job, err) =>
    log.warn({ job: job?.name, deliveryId: job?.data.deliveryId, attempts: job?.attemptsMade, err: err.message }, 'webhook attempt failed'),
  );
  await register();
  return {
    register,
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}
