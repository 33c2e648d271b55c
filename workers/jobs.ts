import { Queue, Worker, type Job } from 'bullmq';
import { QueryTypes } from 'sequelize';
import { configOrExit, type Config } from '../platform/config';
import { closeDatabase, database } from '../platform/database';
import { componentLogger } from '../platform/logger';
import { createRedis } from '../platform/redis';
import { onShutdown } from '../platform/shutdown';
import { closeTemporal } from '../platform/temporal';
import { models } from '../models';
import { reconcileUnstartedOrders } from '../api/services/payment-service';
import { DISCOVERY_QUEUE, startDiscovery } from './discovery';
import { runSanctionsImport, SANCTIONS_IMPORT_JOB, scheduleSanctionsImport } from './sanctions-import';
import { startWebhookDelivery, WEBHOOK_QUEUE } from './webhooks';

export const MAINTENANCE_QUEUE = 'maintenance';

/** What each scheduled job does. Job data carries no payload: the job name says it all. */
const processors: Record<string, () => Promise<unknown>> = {
  'reconcile-orders': () => reconcileUnstartedOrders(),
  'expire-idempotency-keys': async () => {
    const deleted = await database().query('DELETE FROM idempotency_keys WHERE expires_at < now() RETURNING 1', {
      type: QueryTypes.SELECT,
    });
    return deleted.length;
  },
  [SANCTIONS_IMPORT_JOB]: () => runSanctionsImport(),
};

export async function startJobs(cfg: Config): Promise<{ close: () => Promise<void> }> {
  const log = componentLogger('jobs');
  models();
  const connection = createRedis({ forWorker: true });
  const queue = new Queue(MAINTENANCE_QUEUE, { connection, prefix: cfg.queuePrefix });
  queue.on('error', (err) => log.warn({ err: err.message }, 'queue error'));
  const registerMaintenance = async () => {
    await queue.upsertJobScheduler(
      'reconcile-orders',
      { every: cfg.reconciler.intervalMs },
      { name: 'reconcile-orders', opts: { removeOnComplete: 100, removeOnFail: 500 } },
    );
    await queue.upsertJobScheduler(
      'expire-idempotency-keys',
      { every: 60 * 60 * 1000 },
      { name: 'expire-idempotency-keys', opts: { removeOnComplete: 24, removeOnFail: 100 } },
    );
    await scheduleSanctionsImport(queue, cfg);
  };
  await registerMaintenance();
  const discovery = await startDiscovery(cfg, connection);
  const webhooks = await startWebhookDelivery(cfg, connection);
  // A Redis that restarted empty has lost every scheduler: upsert them again whenever the connection is back
  // (ioredis reconnects by itself, and the workers resume polling).
  connection.on('ready', () => {
    Promise.all([registerMaintenance(), discovery.register(), webhooks.register()]).then(
      () => log.info('schedulers upserted again after a Redis reconnect'),
      (err: unknown) => log.warn({ err }, 'could not upsert the schedulers after a Redis reconnect'),
    );
  });
  const worker = new Worker(
    MAINTENANCE_QUEUE,
    async (job: Job) => {
      const run = processors[job.name];
      if (!run) throw new Error(`no processor for job ${job.name}`);
      return run();
    },
    { connection, prefix: cfg.queuePrefix, concurrency: 2 },
  );
  worker.on('error', (err) => log.error({ err: err.message }, 'worker error'));
  worker.on('failed', (job, err) => log.warn({ job: job?.name, attempts: job?.attemptsMade, err: err.message }, 'job failed'));
  worker.on('completed', (job, result) => log.debug({ job: job.name, result }, 'job completed'));
  log.info({ queues: [MAINTENANCE_QUEUE, DISCOVERY_QUEUE, WEBHOOK_QUEUE], prefix: cfg.queuePrefix }, 'jobs running');
  return {
    close: async () => {
      await worker.close();
      await discovery.close();
      await webhooks.close();
      await queue.close();
      connection.disconnect();
    },
  };
}

async function main(): Promise<void> {
  const cfg = configOrExit();
  const log = componentLogger('jobs');
  const jobs = await startJobs(cfg);
  onShutdown(log, [
    { name: 'bullmq', run: jobs.close },
    { name: 'temporal', run: closeTemporal },
    { name: 'database', run: closeDatabase },
  ]);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    componentLogger('jobs').fatal({ err }, 'jobs failed');
    process.exit(1);
  });
}
