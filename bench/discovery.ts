import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import readline from 'node:readline';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Client as PgClient } from 'pg';
import { createSequelize } from '../platform/database';
import { migrateUp } from '../models/migrate';
import { discoverExchanges } from '../connectors/exchanges';
import { EXCHANGE_COLUMNS, exchangeRows, refreshExchanges } from '../workers/catalogue-refresh';
import { DISCOVERY_QUEUE, MAINTENANCE_QUEUE } from '../workers/queues';
import { openRepositories } from '../repositories/transaction';
import { profileArgs } from './support';

/**
 * Discovery benchmarks, for the runner (`bench/run.ts`) to call:
 *
 * - `benchExchangeRefresh(databaseUrl)`: the exchange refresh with the probe off (one transaction: lock,
 *   multi-row upsert, deactivation, refresh record, through Sequelize) against a bare multi-row upsert of
 *   the same rows with `pg`, interleaved A, B, A, B …; medians in milliseconds and their ratio
 *   (target: at most 2×).
 * - `startBackgroundRefreshes(…)`: the real jobs process refreshing both catalogues in a loop, to run the
 *   order-status benchmark against (target: at least 0.9 of the quiet figure); `stop()` says how many
 *   refreshes ran meanwhile.
 *
 * `node dist/bench/discovery.js` runs the first one alone (database `BENCH_DISCOVERY_DATABASE_URL`,
 * default `paygate_bench_discovery`).
 */

const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export interface RefreshBenchResult {
  /** Median of one exchange refresh, probe off, in ms. */
  paygateMs: number;
  /** Median of the bare upsert of the same rows, in ms. */
  bareMs: number;
  /** paygateMs / bareMs; the target is at most 2. */
  ratio: number;
  rows: number;
  rounds: number;
}

/** The exchange refresh (probe off) against a bare `pg` upsert of the same rows, interleaved. */
export async function benchExchangeRefresh(databaseUrl: string, rounds = 15): Promise<RefreshBenchResult> {
  await migrateUp(databaseUrl);
  const sequelize = createSequelize(databaseUrl, 2);
  // The refresh reaches the tables through the repositories: bind them to this database.
  openRepositories(sequelize);
  const pg = new PgClient({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const options = { includeSandbox: true, probe: null };
    const { entries } = discoverExchanges(options);
    const width = EXCHANGE_COLUMNS.length + 2;
    const tuples = entries.map((_, i) => `(${Array.from({ length: width }, (__, j) => `$${i * width + j + 1}`).join(', ')})`);
    const bareSql = `INSERT INTO exchanges (${EXCHANGE_COLUMNS.join(', ')}, first_seen_at, refreshed_at) VALUES ${tuples.join(', ')}
      ON CONFLICT (id) DO UPDATE SET ${[...EXCHANGE_COLUMNS.slice(1), 'refreshed_at'].map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`;
    const bare = async () => {
      const now = new Date();
      await pg.query(
        bareSql,
        exchangeRows(entries, new Map(), now).flatMap((row) => [...row, now, now]),
      );
    };
    const paygate = () => refreshExchanges(options);

    // Warm-up: ccxt's metadata, connections, query plans.
    await paygate();
    await bare();
    const a: number[] = [];
    const b: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      let started = nowMs();
      await paygate();
      a.push(nowMs() - started);
      started = nowMs();
      await bare();
      b.push(nowMs() - started);
    }
    const paygateMs = median(a);
    const bareMs = median(b);
    return { paygateMs, bareMs, ratio: paygateMs / bareMs, rows: entries.length, rounds };
  } finally {
    await pg.end();
    await sequelize.close();
  }
}

export interface BackgroundRefreshes {
  /** Resolves once the jobs process has completed `count` refreshes (its boot and first catalogue build behind it). */
  refreshed(count: number): Promise<void>;
  /** Stop the jobs process and remove its queues; resolves with the number of refreshes it completed. */
  stop(): Promise<number>;
}

/**
 * Start the real jobs process (`dist/workers/jobs.js`) with both refreshes scheduled every `everyMs`
 * (at least 1000) and the probe off, on a queue prefix of its own. The database must be migrated.
 */
export async function startBackgroundRefreshes(options: {
  databaseUrl: string;
  redisUrl: string;
  temporalAddress?: string;
  everyMs?: number;
}): Promise<BackgroundRefreshes> {
  const everyMs = String(Math.max(1000, options.everyMs ?? 1000));
  const prefix = `paygate-bench-discovery-${randomBytes(3).toString('hex')}`;
  const child = spawn(process.execPath, [...profileArgs('jobs'), path.resolve(__dirname, '..', 'workers', 'jobs.js')], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      ...(options.temporalAddress ? { TEMPORAL_ADDRESS: options.temporalAddress } : {}),
      QUEUE_PREFIX: prefix,
      EXCHANGE_PROBE_ENABLED: 'false',
      REFRESH_EXCHANGES_EVERY_MS: everyMs,
      REFRESH_BANKS_EVERY_MS: everyMs,
      RECONCILE_INTERVAL_MS: '3600000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let refreshes = 0;
  let running: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    running = resolve;
  });
  const waiting: { count: number; resolve: () => void }[] = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.includes('"msg":"catalogue refreshed"')) {
      refreshes += 1;
      for (const w of waiting.filter((w) => refreshes >= w.count)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    }
    if (line.includes('"msg":"jobs running"')) running();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([
    started,
    exited.then(() => {
      throw new Error('the jobs process exited before it was running');
    }),
  ]);
  return {
    refreshed(count) {
      if (refreshes >= count) return Promise.resolve();
      return Promise.race([
        new Promise<void>((resolve) => waiting.push({ count, resolve })),
        exited.then(() => {
          throw new Error('the jobs process exited before its first refreshes');
        }),
      ]);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      // Leave nothing behind in Redis: the schedulers and jobs of this run go with it.
      const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
      try {
        for (const name of [DISCOVERY_QUEUE, MAINTENANCE_QUEUE]) {
          const queue = new Queue(name, { connection, prefix });
          await queue.obliterate({ force: true });
          await queue.close();
        }
      } finally {
        connection.disconnect();
      }
      return refreshes;
    },
  };
}

async function main(): Promise<void> {
  const databaseUrl = process.env.BENCH_DISCOVERY_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paygate_bench_discovery';
  const result = await benchExchangeRefresh(databaseUrl, Number(process.env.BENCH_ROUNDS ?? 15));
  process.stdout.write(
    `exchange refresh, probe off (${result.rows} rows, ${result.rounds} rounds): Paygate ${result.paygateMs.toFixed(2)} ms, ` +
      `bare pg upsert ${result.bareMs.toFixed(2)} ms, ratio ${result.ratio.toFixed(2)}x (target <= 2x)\n`,
  );
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  });
}
