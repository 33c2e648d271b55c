import { Queue, Worker, type Job, type JobSchedulerTemplateOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../platform/config';
import { catalogueEmpty } from '../repositories/catalogue';
import { componentLogger } from '../platform/logger';
import { configuredRails } from '../connectors';
import { ccxtStatusCheck, type StatusCheck } from '../connectors/exchange-probe';
import type { ExchangeCatalogue } from '../connectors/exchanges';
import { DISCOVERY_QUEUE, everyMs, REFRESH_BANKS, REFRESH_EXCHANGES } from './queues';
import { refreshBanks, refreshExchanges, type RefreshSummary } from './catalogue-refresh';

/**
 * Platform discovery in the jobs process: queue `discovery`, job schedulers `refresh-exchanges` (every
 * REFRESH_EXCHANGES_EVERY_MS, 15 minutes by default) and `refresh-banks` (daily), upserted at every boot,
 * so that booting many times, or many jobs processes, leaves one scheduler per name. A catalogue whose
 * table is empty is also refreshed right away. Jobs carry no payload: the name says what to refresh.
 */

export const DISCOVERY_JOBS = [REFRESH_EXCHANGES, REFRESH_BANKS] as const;
export type DiscoveryJob = (typeof DISCOVERY_JOBS)[number];

/** Every discovery job: retried with exponential backoff, and only the recent history kept in Redis. */
export function discoveryJobOptions(cfg: Config): JobSchedulerTemplateOptions {
  return {
    attempts: cfg.discovery.jobs.attempts,
    backoff: { type: 'exponential', delay: cfg.discovery.jobs.backoffMs },
    removeOnComplete: { count: 50 },
    removeOnFail: { count: 200 },
  };
}

const intervalOf = (cfg: Config, job: DiscoveryJob): number => everyMs(cfg, job);

export interface DiscoveryDependencies {
  /** How to ask an exchange for its live status; ccxt by default. */
  statusCheck?: StatusCheck;
  /** What the exchanges are, sandbox ones included; ccxt's metadata (and the sandbox's) by default. */
  exchanges?: () => ExchangeCatalogue;
}

/** What each discovery job does. */
export function discoveryProcessors(cfg: Config, deps: DiscoveryDependencies = {}): Record<DiscoveryJob, () => Promise<RefreshSummary>> {
  // The sandbox rail's simulated exchanges are listed while the crypto rail is the sandbox.
  const includeSandbox = configuredRails(cfg).crypto === 'sandbox';
  const { probe } = cfg.discovery;
  return {
    [REFRESH_EXCHANGES]: () =>
      refreshExchanges({
        includeSandbox,
        catalogue: deps.exchanges?.(),
        probe: probe.enabled ? { check: deps.statusCheck ?? ccxtStatusCheck, limits: probe } : null,
      }),
    [REFRESH_BANKS]: () => refreshBanks(),
  };
}

/** Is the catalogue behind a job still empty (a fresh database)? */
export async function catalogueIsEmpty(job: DiscoveryJob): Promise<boolean> {
  return catalogueEmpty(job === REFRESH_EXCHANGES ? 'exchanges' : 'banks');
}

/** Queue one refresh now, with the same retry policy as the scheduled ones. */
export async function enqueueRefresh(queue: Queue, cfg: Config, job: DiscoveryJob, deduplicationId?: string): Promise<Job> {
  return queue.add(job, {}, { ...discoveryJobOptions(cfg), ...(deduplicationId ? { deduplication: { id: deduplicationId } } : {}) });
}

/**
 * Upsert both schedulers (idempotent) and queue a first refresh of every empty catalogue. The first
 * scheduled run is one interval away: the boot refresh covers an empty table, and a full table needs
 * nothing sooner. Concurrent boots queue one boot refresh between them (deduplicated while it waits).
 */
export async function registerDiscoverySchedulers(
  queue: Queue,
  cfg: Config,
  isEmpty: (job: DiscoveryJob) => Promise<boolean> = catalogueIsEmpty,
): Promise<void> {
  const opts = discoveryJobOptions(cfg);
  for (const job of DISCOVERY_JOBS) {
    const every = intervalOf(cfg, job);
    await queue.upsertJobScheduler(job, { every, startDate: Date.now() + every }, { name: job, data: {}, opts });
    if (await isEmpty(job)) await enqueueRefresh(queue, cfg, job, `${job}:boot`);
  }
}

export interface DiscoveryWorkers {
  queue: Queue;
  worker: Worker;
  /** Upsert the schedulers again (after Redis came back empty, say). */
  register(): Promise<void>;
  close(): Promise<void>;
}

/** Register the discovery schedulers and start the worker that runs the refreshes. */
export async function startDiscovery(cfg: Config, connection: Redis, deps: DiscoveryDependencies = {}): Promise<DiscoveryWorkers> {
  const log = componentLogger('discovery');
  const processors = discoveryProcessors(cfg, deps);
  const queue = new Queue(DISCOVERY_QUEUE, { connection, prefix: cfg.queuePrefix });
  queue.on('error', (err) => log.warn({ err: err.message }, 'queue error'));
  const register = () => registerDiscoverySchedulers(queue, cfg);
  await register();
  const worker = new Worker(
    DISCOVERY_QUEUE,
    async (job: Job) => {
      const run = processors[job.name as DiscoveryJob] as (() => Promise<RefreshSummary>) | undefined;
      if (!run) throw new Error(`no processor for job ${job.name}`);
      const summary = await run();
      log.info({ job: job.name, jobId: job.id, ...summary }, 'catalogue refreshed');
      return summary;
    },
    {
      connection,
      prefix: cfg.queuePrefix,
      concurrency: 2,
      // A job whose worker died (killed process, lost host) is taken over after this long without a heartbeat.
      lockDuration: cfg.discovery.jobs.lockMs,
      stalledInterval: cfg.discovery.jobs.lockMs,
    },
  );
  worker.on('error', (err) => log.error({ err: err.message }, 'worker error'));
  worker.on('failed', (job, err) => log.warn({ job: job?.name, attempts: job?.attemptsMade, err: err.message }, 'refresh failed'));
  return {
    queue,
    worker,
    register,
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}
