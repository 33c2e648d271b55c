import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { config, loadConfig, type Config } from '../platform/config';
import { ccxtExchanges, discoverExchanges } from '../connectors/exchanges';
import { startJobs } from '../workers/jobs';
import { DISCOVERY_QUEUE, MAINTENANCE_QUEUE, REFRESH_BANKS, REFRESH_EXCHANGES } from '../workers/queues';
import { enqueueRefresh, registerDiscoverySchedulers, startDiscovery } from '../workers/discovery';
import { ensureCatalogue } from './support/catalogue';
import { rows } from './support/db';
import { startJobsProcess, until, type JobsProcess } from './support/processes';
import { startPrivateRedis as startRedisServer, type PrivateRedis as RedisServer } from './support/redis-server';

/** A queue prefix of its own for each test, under the run's prefix: tests never see each other's jobs. */
const freshPrefix = (what: string) => `${config().queuePrefix}-${what}-${randomBytes(3).toString('hex')}`;

/**
 * The jobs processes here run with the sandbox crypto rail whatever rails the suite uses: the catalogue they
 * refresh is the suite's, and it lists the sandbox's exchange, which other tests pay.
 */
const SANDBOX_CRYPTO = { RAIL_CRYPTO: 'sandbox' };

const configWith = (env: Record<string, string>): Config => loadConfig({ ...process.env, ...SANDBOX_CRYPTO, ...env });

async function lastRefresh(catalogue: 'exchanges' | 'banks'): Promise<Date> {
  const [row] = await rows<{ refreshed_at: Date }>('SELECT refreshed_at FROM catalogue_refreshes WHERE catalogue = :catalogue', {
    catalogue,
  });
  return new Date(row.refreshed_at);
}

async function expectNoDuplicateExchanges(): Promise<void> {
  const [counts] = await rows<{ total: string; distinct_ids: string; active: string }>(
    'SELECT count(*) AS total, count(DISTINCT id) AS distinct_ids, count(*) FILTER (WHERE active) AS active FROM exchanges',
  );
  expect(counts.total).to.equal(counts.distinct_ids);
  // Every ccxt exchange plus the sandbox's one, all active: nothing half-written, nothing lost.
  expect(Number(counts.active)).to.equal(ccxtExchanges().entries.length + 1);
}

describe('discovery jobs', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  before(async function () {
    this.timeout(60_000);
    await ensureCatalogue();
  });
  afterEach(async function () {
    this.timeout(30_000);
    while (cleanup.length > 0) await cleanup.pop()!().catch(() => undefined);
  });

  /** A queue on `connection`, obliterated (with its schedulers and jobs) after the test. */
  function queueFor(name: string, prefix: string, connection: Redis): Queue {
    const queue = new Queue(name, { connection, prefix });
    queue.on('error', () => undefined);
    cleanup.push(async () => {
      await queue.obliterate({ force: true });
      await queue.close();
    });
    return queue;
  }

  function redisClient(url = config().redisUrl): Redis {
    const client = new Redis(url, { maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    cleanup.push(() => Promise.resolve(client.disconnect()));
    return client;
  }

  describe('when the jobs process boots three times', () => {
    it('then there is exactly one scheduler per name, with retries and bounded history', async function () {
      this.timeout(30_000);
      const cfg = configWith({ QUEUE_PREFIX: freshPrefix('boot') });
      const connection = redisClient();
      const discovery = queueFor(DISCOVERY_QUEUE, cfg.queuePrefix, connection);
      const maintenance = queueFor(MAINTENANCE_QUEUE, cfg.queuePrefix, connection);

      // Twice at once (two processes starting together), then once more.
      const together = await Promise.all([startJobs(cfg), startJobs(cfg)]);
      await Promise.all(together.map((jobs) => jobs.close()));
      await (await startJobs(cfg)).close();

      const schedulers = await discovery.getJobSchedulers();
      expect(schedulers.map((s) => s.key).sort()).to.deep.equal([REFRESH_BANKS, REFRESH_EXCHANGES]);
      const byKey = Object.fromEntries(schedulers.map((s) => [s.key, s]));
      expect(Number(byKey[REFRESH_EXCHANGES].every)).to.equal(15 * 60 * 1000);
      expect(Number(byKey[REFRESH_BANKS].every)).to.equal(24 * 60 * 60 * 1000);
      const template = byKey[REFRESH_EXCHANGES].template?.opts;
      expect(template).to.deep.include({ attempts: 5, backoff: { type: 'exponential', delay: 10_000 } });
      expect(template?.removeOnComplete).to.deep.equal({ count: 50 });
      expect(template?.removeOnFail).to.deep.equal({ count: 200 });
      const maintenanceKeys = (await maintenance.getJobSchedulers()).map((s) => s.key);
      expect(new Set(maintenanceKeys).size).to.equal(maintenanceKeys.length);
      expect(maintenanceKeys).to.include.members(['expire-idempotency-keys', 'reconcile-orders']);
    });

    it('then a catalogue that is empty is refreshed once at boot, however many boot at once', async () => {
      const cfg = configWith({ QUEUE_PREFIX: freshPrefix('empty') });
      const queue = queueFor(DISCOVERY_QUEUE, cfg.queuePrefix, redisClient());
      const empty = () => Promise.resolve(true);
      await Promise.all([1, 2, 3].map(() => registerDiscoverySchedulers(queue, cfg, empty)));

      const waiting = await queue.getJobs(['waiting', 'prioritized']);
      expect(waiting.map((j) => j.name).sort()).to.deep.equal([REFRESH_BANKS, REFRESH_EXCHANGES]);
      for (const job of waiting) expect(job.data).to.deep.equal({});
      // The scheduled runs wait a whole interval: the boot refresh covers the empty table.
      const delayed = await queue.getJobs(['delayed']);
      expect(delayed).to.have.length(2);
      for (const job of delayed) expect(job.opts.delay).to.be.greaterThan(10 * 60 * 1000);
    });

    it('then a full catalogue is not refreshed at boot', async () => {
      const cfg = configWith({ QUEUE_PREFIX: freshPrefix('full') });
      const queue = queueFor(DISCOVERY_QUEUE, cfg.queuePrefix, redisClient());
      await registerDiscoverySchedulers(queue, cfg);
      expect(await queue.getJobs(['waiting', 'prioritized', 'active'])).to.deep.equal([]);
    });
  });

  describe('when a refresh fails half-way through its transaction', () => {
    it('then nothing of it is kept, and the retry (with backoff) completes without duplicate rows', async function () {
      this.timeout(30_000);
      const cfg = configWith({ QUEUE_PREFIX: freshPrefix('retry'), DISCOVERY_JOB_BACKOFF_MS: '50', EXCHANGE_PROBE_ENABLED: 'false' });
      const connection = redisClient();
      const queue = queueFor(DISCOVERY_QUEUE, cfg.queuePrefix, connection);
      const before = await lastRefresh('exchanges');
      let calls = 0;
      // The first attempt lists one exchange twice: the multi-row upsert fails in the middle of the transaction.
      const flaky = () => {
        calls += 1;
        const real = discoverExchanges({ includeSandbox: true });
        return calls === 1 ? { ...real, entries: [...real.entries, real.entries[0]] } : real;
      };
      const discovery = await startDiscovery(cfg, connection, { exchanges: flaky });
      cleanup.push(() => discovery.close());

      const job = await enqueueRefresh(queue, cfg, REFRESH_EXCHANGES);
      const finished = await until('the refresh to complete', async () => {
        const state = await job.getState();
        return state === 'completed' || state === 'failed' ? state : undefined;
      });
      expect(finished).to.equal('completed');
      const done = (await Job.fromId(queue, job.id!))!;
      expect(done.attemptsMade).to.equal(2);
      expect(calls).to.equal(2);
      await expectNoDuplicateExchanges();
      expect((await lastRefresh('exchanges')).getTime()).to.be.greaterThan(before.getTime());
    });
  });

  describe('when the jobs process is killed in the middle of a refresh', () => {
    let jobsProcesses: JobsProcess[] = [];
    afterEach(async () => {
      await Promise.all(jobsProcesses.map((p) => p.kill()));
      jobsProcesses = [];
    });

    it('then the refresh is rolled back, taken over by the next jobs process, and leaves no duplicate rows', async function () {
      this.timeout(90_000);
      const prefix = freshPrefix('kill');
      const env = {
        QUEUE_PREFIX: prefix,
        EXCHANGE_PROBE_ENABLED: 'false',
        // Longer than the few seconds a fresh process's first exchange refresh spends loading ccxt's metadata,
        // during which it renews no lock (a shorter lock fails the taken-over job as stalled twice).
        DISCOVERY_JOB_LOCK_MS: '8000',
        RECONCILE_INTERVAL_MS: '3600000',
      };
      const cfg = configWith(env);
      const client = redisClient();
      const queue = queueFor(DISCOVERY_QUEUE, prefix, client);
      queueFor(MAINTENANCE_QUEUE, prefix, client);
      const before = await lastRefresh('exchanges');

      // Hold one exchange row: the refresh stops inside its transaction, half of its upsert done.
      const holder = new Client({ connectionString: cfg.databaseUrl });
      await holder.connect();
      cleanup.push(() => holder.end());
      await holder.query('BEGIN');
      await holder.query("SELECT id FROM exchanges WHERE id = 'binance' FOR UPDATE");

      const first = startJobsProcess({ ...SANDBOX_CRYPTO, ...env });
      jobsProcesses.push(first);
      await until('the first jobs process to boot', async () => ((await queue.getJobSchedulersCount()) === 2 ? true : undefined));
      const job = await enqueueRefresh(queue, cfg, REFRESH_EXCHANGES);
      await until(
        'the refresh to block on the held row',
        async () => {
          const [waiting] = await rows<{ n: string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          return Number(waiting.n) > 0 && (await job.getState()) === 'active' ? true : undefined;
        },
        30_000,
      );

      await first.kill();
      expect(await job.getState()).to.equal('active');
      await holder.query('COMMIT');
      expect((await lastRefresh('exchanges')).getTime()).to.equal(before.getTime());

      const second = startJobsProcess({ ...SANDBOX_CRYPTO, ...env });
      jobsProcesses.push(second);
      const finished = await until(
        'the refresh to be retried and complete',
        async () => {
          const state = await job.getState();
          return state === 'completed' || state === 'failed' ? state : undefined;
        },
        60_000,
      );
      expect(finished).to.equal('completed');
      const done = (await Job.fromId(queue, job.id!))!;
      expect(done.stalledCounter, 'the job was taken over after its worker died').to.be.at.least(1);
      await expectNoDuplicateExchanges();
      expect((await lastRefresh('exchanges')).getTime()).to.be.greaterThan(before.getTime());

      // SIGTERM closes the worker and exits cleanly.
      expect(await second.stop()).to.equal(0);
    });
  });

  describe('when Redis restarts under a running jobs process', () => {
    let redisServer: RedisServer | undefined;
    let jobs: JobsProcess | undefined;
    after(async () => {
      await jobs?.kill();
      await redisServer?.stop();
    });

    it('then the process survives, puts its schedulers back and refreshes again', async function () {
      this.timeout(60_000);
      redisServer = await startRedisServer();
      const prefix = freshPrefix('restart');
      jobs = startJobsProcess({
        ...SANDBOX_CRYPTO,
        REDIS_URL: redisServer.url,
        QUEUE_PREFIX: prefix,
        EXCHANGE_PROBE_ENABLED: 'false',
        REFRESH_BANKS_EVERY_MS: '1000',
        RECONCILE_INTERVAL_MS: '3600000',
      });
      const queue = new Queue(DISCOVERY_QUEUE, { connection: redisClient(redisServer.url), prefix });
      queue.on('error', () => undefined);
      cleanup.push(() => queue.close());
      const schedulersBack = () =>
        until(
          'both discovery schedulers',
          async () => ((await queue.getJobSchedulersCount().catch(() => 0)) === 2 ? true : undefined),
          30_000,
        );

      await schedulersBack();
      const booted = new Date();
      await until('a scheduled bank refresh', async () => ((await lastRefresh('banks')) > booted ? true : undefined), 15_000);

      await redisServer.stop();
      await new Promise((r) => setTimeout(r, 1500));
      await redisServer.start();
      const restarted = new Date();

      await schedulersBack();
      await until('a bank refresh after the restart', async () => ((await lastRefresh('banks')) > restarted ? true : undefined), 20_000);
      expect(jobs.child.exitCode).to.equal(null);
      expect(await jobs.stop()).to.equal(0);
    });
  });
});
