import { expect } from 'chai';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { loadConfig } from '../../platform/config';
import { ccxtExchanges } from '../../connectors/exchanges';
import { kenyanBankRegistry } from '../../domain/discovery/bank-registry';
import { enqueueRefresh, type DiscoveryJob } from '../../workers/discovery';
import { DISCOVERY_QUEUE, REFRESH_BANKS, REFRESH_EXCHANGES } from '../../workers/queues';
import { query } from './support/db';
import { Deployment, type PaygateProcess } from './support/paygate';
import { score } from './support/scoreboard';
import { until } from './support/wait';
import { faultStack } from './setup';

type Catalogue = 'exchanges' | 'banks';

interface CatalogueState {
  refreshedAt: number;
  rows: number;
  distinctIds: number;
  active: number;
  /** Distinct `refreshed_at` among active rows: 1 when the last refresh was written in one transaction. */
  generations: number;
  matchesRecord: boolean;
}

async function catalogueState(catalogue: Catalogue): Promise<CatalogueState> {
  const key = catalogue === 'exchanges' ? 'id' : 'code';
  const [record] = await query<{ refreshed_at: Date }>('SELECT refreshed_at FROM catalogue_refreshes WHERE catalogue = $1', [catalogue]);
  const [rows] = await query<{ total: string; ids: string; active: string; generations: string; newest: Date }>(
    `SELECT count(*) AS total, count(DISTINCT ${key}) AS ids, count(*) FILTER (WHERE active) AS active,
            count(DISTINCT refreshed_at) FILTER (WHERE active) AS generations, max(refreshed_at) AS newest
       FROM ${catalogue}`,
  );
  return {
    refreshedAt: new Date(record.refreshed_at).getTime(),
    rows: Number(rows.total),
    distinctIds: Number(rows.ids),
    active: Number(rows.active),
    generations: Number(rows.generations),
    matchesRecord: new Date(rows.newest).getTime() === new Date(record.refreshed_at).getTime(),
  };
}

const expectedActive = (catalogue: Catalogue): number =>
  catalogue === 'exchanges' ? ccxtExchanges().entries.length + 1 : kenyanBankRegistry().length;

/** Whole and consistent: one row per entry, every active row from the same (the recorded) refresh. */
function expectConsistent(state: CatalogueState, catalogue: Catalogue): void {
  expect(state.rows, `${catalogue}: one row per entry`).to.equal(state.distinctIds);
  expect(state.active, `${catalogue}: every entry active`).to.equal(expectedActive(catalogue));
  expect(state.generations, `${catalogue}: every active row written by one refresh`).to.equal(1);
  expect(state.matchesRecord, `${catalogue}: the rows are those of the recorded refresh`).to.equal(true);
}

/** How a refresh is stopped in the middle, so that the kill lands there every time. */
interface Obstacle {
  what: string;
  catalogue: Catalogue;
  job: DiscoveryJob;
  /** Take what the refresh will wait for, inside its transaction. */
  hold(client: Client): Promise<void>;
}

const OBSTACLES: Obstacle[] = [
  {
    what: 'exchanges, half-way through its upsert (a row held by another transaction)',
    catalogue: 'exchanges',
    job: REFRESH_EXCHANGES,
    hold: async (client) => {
      await client.query('BEGIN');
      await client.query("SELECT id FROM exchanges WHERE id = 'kraken' FOR UPDATE");
    },
  },
  {
    what: 'banks, half-way through its upsert',
    catalogue: 'banks',
    job: REFRESH_BANKS,
    hold: async (client) => {
      await client.query('BEGIN');
      await client.query("SELECT code FROM banks WHERE code = '63' FOR UPDATE");
    },
  },
  {
    what: 'exchanges, queued behind another refresh of the same catalogue (its advisory lock)',
    catalogue: 'exchanges',
    job: REFRESH_EXCHANGES,
    hold: async (client) => {
      await client.query('BEGIN');
      await client.query("SELECT pg_advisory_xact_lock(hashtext('paygate.catalogue.exchanges'))");
    },
  },
];

describe('faults: the jobs process is SIGKILLed in the middle of a catalogue refresh', () => {
  // A dead process's job is taken over after DISCOVERY_JOB_LOCK_MS: short here, but longer than the few seconds
  // a fresh process's first exchange refresh spends loading ccxt's metadata (during which no lock is renewed).
  const settings = { DISCOVERY_JOB_LOCK_MS: '8000', DISCOVERY_JOB_BACKOFF_MS: '200', RECONCILE_INTERVAL_MS: '3600000' };
  let deployment: Deployment;
  let jobs: PaygateProcess;
  let connection: Redis;
  let queue: Queue;
  let recovered = 0;
  let killed = 0;
  let duplicateRows = 0;

  before(async function () {
    this.timeout(60_000);
    deployment = new Deployment('refresh', faultStack.infra, settings);
    jobs = await deployment.startJobs();
    connection = new Redis(faultStack.redis.url, { maxRetriesPerRequest: null });
    queue = new Queue(DISCOVERY_QUEUE, { connection, prefix: deployment.queuePrefix });
  });
  after(async function () {
    this.timeout(60_000);
    score({
      scenario: 'jobs SIGKILL mid-refresh',
      injected: killed,
      recovered,
      requests: killed,
      lost: killed - recovered,
      duplicates: duplicateRows,
      note: 'requests here are the refresh jobs that were running when their process died',
    });
    await queue?.close();
    connection?.disconnect();
    await deployment?.stopAll();
  });

  for (const obstacle of OBSTACLES) {
    it(`when it dies refreshing ${obstacle.what}, then nothing of that refresh is kept, and the restarted process finishes the same job`, async function () {
      this.timeout(90_000);
      const cfg = loadConfig({ ...process.env, ...settings, REDIS_URL: faultStack.redis.url, QUEUE_PREFIX: deployment.queuePrefix });
      const before = await catalogueState(obstacle.catalogue);
      expectConsistent(before, obstacle.catalogue);

      const holder = new Client({ connectionString: faultStack.databaseUrl, application_name: 'paygate-fault-suite' });
      await holder.connect();
      try {
        await obstacle.hold(holder);
        const job = await enqueueRefresh(queue, cfg, obstacle.job);
        await until(
          'the refresh to be stuck inside its transaction',
          async () => {
            const [waiting] = await query<{ n: string }>(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            );
            return Number(waiting.n) > 0 && (await job.getState()) === 'active' ? true : undefined;
          },
          30_000,
        );

        await jobs.kill();
        killed += 1;
        await holder.query('COMMIT');
        const afterKill = await catalogueState(obstacle.catalogue);
        expect(afterKill.refreshedAt, 'the killed refresh recorded nothing').to.equal(before.refreshedAt);
        expectConsistent(afterKill, obstacle.catalogue);
        expect(await job.getState(), 'the job is still held by the dead process').to.equal('active');

        await jobs.start();
        const finished = await until(
          'the same job to be taken over and finished',
          async () => {
            const state = await job.getState();
            return state === 'completed' || state === 'failed' ? state : undefined;
          },
          45_000,
        );
        expect(finished).to.equal('completed');
        const done = (await Job.fromId(queue, job.id!))!;
        expect(done.stalledCounter, 'taken over after its worker died').to.be.at.least(1);
        const afterRestart = await catalogueState(obstacle.catalogue);
        duplicateRows += afterRestart.rows - afterRestart.distinctIds;
        expect(afterRestart.refreshedAt).to.be.greaterThan(before.refreshedAt);
        expectConsistent(afterRestart, obstacle.catalogue);
        recovered += 1;
      } finally {
        await holder.end();
      }
    });
  }
});
