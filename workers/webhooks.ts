import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../platform/config';
import { componentLogger } from '../platform/logger';
import { DELIVER_WEBHOOK, DISPATCH_WEBHOOKS, PRUNE_EVENTS, WEBHOOK_QUEUE } from './queues';
import { claimDueDeliveries, deliverWebhook, dispatchWebhookEvents, pruneOldEvents } from './webhook-delivery';
import type { TargetPolicy } from '../connectors/webhook-targets';

/**
 * Webhook delivery in the jobs process: queue `webhooks`. The job scheduler `dispatch-webhooks` (every
 * WEBHOOK_DISPATCH_EVERY_MS) fans new outbox events out to deliveries and takes the deliveries that are
 * due, at most WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT per endpoint (see `claimDueDeliveries`), each becoming
 * one `deliver-webhook` job for one attempt; the job id is the delivery id and attempt, so however many
 * jobs processes sweep, an attempt has one job. A failed attempt makes the next one due after
 * WEBHOOK_BACKOFF_MS doubling, up to WEBHOOK_MAX_ATTEMPTS, then the delivery is marked `failed`. When an
 * attempt ends its endpoint's next due delivery is taken at once, so an endpoint is not held to one
 * delivery per sweep, and one that never answers keeps only its own slots busy. The job scheduler
 * `prune-events` (every PRUNE_EVENTS_EVERY_MS) deletes events older than EVENTS_RETENTION_DAYS and their
 * deliveries.
 */

/** Jobs a jobs process runs at once on the webhooks queue. */
const WEBHOOK_CONCURRENCY = 8;
/** How long a delivery taken by a sweep stays taken while its job waits in the queue. */
const QUEUED_LEASE_MS = 120_000;

export async function startWebhookDelivery(
  cfg: Config,
  connection: Redis,
  deps: { network?: Omit<TargetPolicy, 'allowPrivate'> } = {},
): Promise<{ register: () => Promise<void>; close: () => Promise<void> }> {
  const log = componentLogger('webhooks');
  const settings = cfg.webhooks;
  const queue = new Queue(WEBHOOK_QUEUE, { connection, prefix: cfg.queuePrefix });
  queue.on('error', (err) => log.warn({ err: err.message }, 'queue error'));
  const register = async () => {
    await queue.upsertJobScheduler(
      DISPATCH_WEBHOOKS,
      { every: settings.dispatchEveryMs },
      { name: DISPATCH_WEBHOOKS, opts: { removeOnComplete: 10, removeOnFail: 100 } },
    );
    await queue.upsertJobScheduler(
      PRUNE_EVENTS,
      { every: settings.pruneEventsEveryMs },
      { name: PRUNE_EVENTS, opts: { removeOnComplete: 10, removeOnFail: 100 } },
    );
  };
  const enqueueDue = async (endpointId?: string) => {
    const claimed = await claimDueDeliveries({
      maxInFlight: settings.maxInFlightPerEndpoint,
      leaseMs: QUEUED_LEASE_MS + settings.timeoutMs,
      endpointId,
    });
    if (claimed.length > 0) {
      await queue.addBulk(
        claimed.map(({ id, attempts }) => ({
          name: DELIVER_WEBHOOK,
          data: { deliveryId: id, attempt: attempts },
          opts: { jobId: `${id}-${attempts}`, removeOnComplete: true, removeOnFail: true },
        })),
      );
    }
    return claimed.length;
  };
  const sweep = async () => {
    const created = await dispatchWebhookEvents();
    const queued = await enqueueDue();
    return { created, queued };
  };
  const worker = new Worker(
    WEBHOOK_QUEUE,
    async (job: Job<{ deliveryId?: string; attempt?: number }>) => {
      if (job.name === DISPATCH_WEBHOOKS) return sweep();
      if (job.name === PRUNE_EVENTS) return pruneOldEvents(settings.eventRetentionDays);
      if (job.name !== DELIVER_WEBHOOK || !job.data.deliveryId) throw new Error(`no processor for job ${job.name}`);
      const result = await deliverWebhook(settings, job.data.deliveryId, job.data.attempt, deps.network);
      if (result.outcome === 'retrying' || result.outcome === 'failed' || result.outcome === 'refused') {
        log.warn({ deliveryId: job.data.deliveryId, outcome: result.outcome, err: result.error }, 'webhook attempt failed');
      }
      if (result.endpointId) await enqueueDue(result.endpointId);
      return result.outcome;
    },
    { connection, prefix: cfg.queuePrefix, concurrency: WEBHOOK_CONCURRENCY },
  );
  worker.on('error', (err) => log.error({ err: err.message }, 'worker error'));
  worker.on('failed', (job, err) => log.warn({ job: job?.name, deliveryId: job?.data.deliveryId, err: err.message }, 'webhook job failed'));
  await register();
  return {
    register,
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}
