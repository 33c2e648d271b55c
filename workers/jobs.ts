import { Queue, Worker, type Job } from 'bullmq';
import { configOrExit, type Config } from '../platform/config';
import { closeDatabase } from '../platform/database';
import { componentLogger } from '../platform/logger';
import { createRedis } from '../platform/redis';
import { onShutdown } from '../platform/shutdown';
import { closeTemporal } from '../platform/temporal';
import { pruneExpiredKeys } from '../repositories/idempotency';
import { openRepositories } from '../repositories/transaction';
import { reconcileRails } from '../services/rail-reconciliation-service';
import { askAgainAboutCheckingClaims } from '../services/deposit-claims';
import { reconcileUnstartedOrders } from '../workflows/client';
import { startDiscovery } from './discovery';
import { matchBankDeposits } from './bank-deposits';
import { matchCryptoDeposits } from './crypto-deposits';
import {
  EXPIRE_IDEMPOTENCY_KEYS,
  everyMs,
  IMPORT_SANCTIONS,
  MAINTENANCE_QUEUE,
  MATCH_BANK_DEPOSITS,
  MATCH_CRYPTO_DEPOSITS,
  QUEUES,
  RECHECK_C2B_CLAIMS,
  RECONCILE_ORDERS,
  RECONCILE_RAILS,
} from './queues';
import { runSanctionsImport, scheduleSanctionsImport } from './sanctions-import';
import { startWebhookDelivery } from './webhooks';

/** What each scheduled job does. Job data carries no payload: the job name says it all. */
const processors: Record<string, () => Promise<unknown>> = {
  [RECONCILE_ORDERS]: () => reconcileUnstartedOrders(),
  [EXPIRE_IDEMPOTENCY_KEYS]: () => pruneExpiredKeys(),
  [IMPORT_SANCTIONS]: () => runSanctionsImport(),
  [MATCH_BANK_DEPOSITS]: () => matchBankDeposits(),
  [MATCH_CRYPTO_DEPOSITS]: () => matchCryptoDeposits(),
  [RECONCILE_RAILS]: () => reconcileRails(),
  [RECHECK_C2B_CLAIMS]: () => askAgainAboutCheckingClaims(),
};

export async function startJobs(cfg: Config): Promise<{ close: () => Promise<void> }> {
  const log = componentLogger('jobs');
  openRepositories();
  const connection = createRedis({ forWorker: true });
  const queue = new Queue(MAINTENANCE_QUEUE, { connection, prefix: cfg.queuePrefix });
  queue.on('error', (err) => log.warn({ err: err.message }, 'queue error'));
  const registerMaintenance = async () => {
    await queue.upsertJobScheduler(
      RECONCILE_ORDERS,
      { every: everyMs(cfg, RECONCILE_ORDERS) },
      { name: RECONCILE_ORDERS, opts: { removeOnComplete: 100, removeOnFail: 500 } },
    );
    await queue.upsertJobScheduler(
      EXPIRE_IDEMPOTENCY_KEYS,
      { every: everyMs(cfg, EXPIRE_IDEMPOTENCY_KEYS) },
      { name: EXPIRE_IDEMPOTENCY_KEYS, opts: { removeOnComplete: 24, removeOnFail: 100 } },
    );
    await queue.upsertJobScheduler(
      MATCH_BANK_DEPOSITS,
      { every: everyMs(cfg, MATCH_BANK_DEPOSITS) },
      { name: MATCH_BANK_DEPOSITS, opts: { removeOnComplete: 100, removeOnFail: 500 } },
    );
    await queue.upsertJobScheduler(
      MATCH_CRYPTO_DEPOSITS,
      { every: everyMs(cfg, MATCH_CRYPTO_DEPOSITS) },
      { name: MATCH_CRYPTO_DEPOSITS, opts: { removeOnComplete: 100, removeOnFail: 500 } },
    );
    await queue.upsertJobScheduler(
      RECONCILE_RAILS,
      { every: everyMs(cfg, RECONCILE_RAILS) },
      { name: RECONCILE_RAILS, opts: { removeOnComplete: 30, removeOnFail: 100 } },
    );
    await queue.upsertJobScheduler(
      RECHECK_C2B_CLAIMS,
      { every: everyMs(cfg, RECHECK_C2B_CLAIMS) },
      { name: RECHECK_C2B_CLAIMS, opts: { removeOnComplete: 100, removeOnFail: 500 } },
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
  log.info({ queues: QUEUES, prefix: cfg.queuePrefix }, 'jobs running');
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
