import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client as PgClient, Pool } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { migrateUp } from '../models/migrate';
import { usdToKesMinorCeil } from '../domain/compliance/report';
import { REPORT_SECTIONS, type ComplianceReportInput } from '../domain/compliance/report-contract';
import { REPORT_STATEMENTS } from '../repositories/compliance-reports';
import { freePort, fundBenchUser, median, percentile, spawnNode, temporalCliPath, waitForHttp, type Child } from './support';

/**
 * Compliance benchmarks (issue 4), each against its bare baseline, interleaved A/B in one run:
 *
 * - `benchComplianceReport`: GET /compliance/report?refresh=true over 1,000,000 seeded payments (a new
 *   `compliance-report` workflow run each time: start, six section activities aggregating in SQL, the
 *   stored report read back and sent) against the bare SQL it is built on: the same statements run
 *   directly with pg, sections in parallel as the workflow runs them. Target: at most 2x.
 * - `benchScreeningLatency`: a payment's initiate-to-completed latency (POST /payments/initiate until the
 *   workflow result) with 20,000 blocklist entries against an empty blocklist, same stack, the blocklist
 *   filled and emptied between rounds. Target: p50 at most 1.1x.
 *
 * Each function starts its own api and worker (child processes) on its own database, which it drops and
 * recreates, against the Temporal server at `temporalAddress`. Run both standalone with
 * `node dist/bench/compliance.js` (after `npm run build`); it starts a Temporal dev server unless
 * TEMPORAL_ADDRESS is set.
 */

export interface BenchOptions {
  temporalAddress: string;
  /** Dropped and recreated. */
  databaseUrl?: string;
  redisUrl?: string;
  rounds?: number;
  log?: (line: string) => void;
}

export interface ComplianceReportBench {
  payments: number;
  /** Median seconds of a report run, as the API answers it. */
  reportSeconds: number;
  /** Median seconds of the same SQL run directly. */
  sqlSeconds: number;
  /** reportSeconds / sqlSeconds; target <= 2. */
  ratio: number;
}

export interface ScreeningLatencyBench {
  entries: number;
  paymentsPerRound: number;
  /** p50 initiate-to-completed, ms, with an empty blocklist. */
  emptyP50Ms: number;
  /** p50 initiate-to-completed, ms, with `entries` blocklist entries. */
  loadedP50Ms: number;
  emptyP99Ms: number;
  loadedP99Ms: number;
  /** loadedP50Ms / emptyP50Ms; target <= 1.1. */
  ratio: number;
}

const PASSWORD = 'bench-password-0123456789';
const HUGE_LIMIT_KES = '1000000000000000';
const DAY_MS = 24 * 3600 * 1000;

async function onServer(url: string, run: (admin: PgClient, name: string) => Promise<void>): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`unsupported database name "${name}"`);
  target.pathname = '/postgres';
  const admin = new PgClient({ connectionString: target.toString() });
  await admin.connect();
  try {
    await run(admin, name);
  } finally {
    await admin.end();
  }
}

const recreateDatabase = (url: string) =>
  onServer(url, async (admin, name) => {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  });

/** The seeded databases are large: dropped afterwards unless BENCH_KEEP_DATABASE is set. */
const dropDatabase = (url: string) =>
  process.env.BENCH_KEEP_DATABASE
    ? Promise.resolve()
    : onServer(url, (admin, name) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).then(() => undefined));

interface Stack {
  apiUrl: string;
  db: PgClient;
  temporal: Client;
  stop(): Promise<void>;
}

/** A fresh database, an api and a worker on their own task queue. */
async function startStack(options: BenchOptions, databaseUrl: string, extraEnv: NodeJS.ProcessEnv): Promise<Stack> {
  const log = options.log ?? (() => undefined);
  log(`database ${databaseUrl}: recreating and migrating`);
  await recreateDatabase(databaseUrl);
  await migrateUp(databaseUrl);
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_BASE_URL: apiUrl,
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_URL: options.redisUrl ?? 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: `paygate-bench-compliance-${randomUUID().slice(0, 8)}`,
    TEMPORAL_ADDRESS: options.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: `paygate-bench-compliance-${randomUUID().slice(0, 8)}`,
    JWT_TTL_SECONDS: '3600', // the longest lifetime the config allows
    RATE_LIMIT_LOGIN_PER_IP: '1000000',
    RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP: '1000000',
    RATE_LIMIT_LOGIN_PER_ACCOUNT: '1000000',
    RATE_LIMIT_REGISTER_PER_IP: '1000000',
    RATE_LIMIT_API_PER_MINUTE: '100000000',
    RATE_LIMIT_API_PER_ACCOUNT_PER_MINUTE: '100000000',
    LIMIT_VERIFIED_PER_PAYMENT_KES: HUGE_LIMIT_KES,
    LIMIT_VERIFIED_DAILY_KES: HUGE_LIMIT_KES,
    ...extraEnv,
  };
  delete env.ADMIN_EMAIL;
  delete env.ADMIN_PASSWORD;
  delete env.SANCTIONS_LIST_PATH_OR_URL;
  const children: Child[] = [];
  const db = new PgClient({ connectionString: databaseUrl });
  const connection = await Connection.connect({ address: options.temporalAddress });
  const stop = async () => {
    for (const child of children.reverse()) await child.stop();
    await db.end().catch(() => undefined);
    await connection.close();
    await dropDatabase(databaseUrl);
  };
  try {
    await db.connect();
    const api = spawnNode('compliance-api', path.resolve(__dirname, '..', 'api', 'server.js'), env);
    children.push(api);
    await waitForHttp(`${apiUrl}/healthz`, api);
    children.push(spawnNode('compliance-worker', path.resolve(__dirname, '..', 'workers', 'temporal-worker.js'), env));
    return { apiUrl, db, temporal: new Client({ connection, namespace: 'default' }), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json().catch((): unknown => null) };
}

/** Register and log in through the API; roles and KYC status are then set directly. */
async function newUser(stack: Stack, label: string, roles: string[]): Promise<{ id: string; token: string }> {
  const email = `bench-${label}-${randomUUID().slice(0, 8)}@example.com`;
  const registered = await postJson(`${stack.apiUrl}/api/v1/auth/register`, { email, password: PASSWORD, full_name: `Bench ${label}` });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${JSON.stringify(registered.json)}`);
  const id = (registered.json as { user_id: string }).user_id;
  await stack.db.query(`UPDATE users SET kyc_status = 'verified', roles = $2 WHERE id = $1`, [id, roles]);
  await fundBenchUser(stack.db, id);
  const login = await postJson(`${stack.apiUrl}/api/v1/auth/login`, { email, password: PASSWORD });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.json)}`);
  return { id, token: (login.json as { access_token: string }).access_token };
}

const seconds = (startedAt: number) => (performance.now() - startedAt) / 1000;

// ---------------------------------------------------------------------------------------------
// The report over 1,000,000 payments

/**
 * Payments by 2,000 users over 30 days: most small, some medium (structuring candidates), about 0.5%
 * at or above the CTR threshold; every status, method and a few currencies.
 */
async function seedPayments(db: PgClient, count: number, from: Date, users = 2000): Promise<void> {
  await db.query(
    `INSERT INTO users (id, email, password_hash, full_name, kyc_status, created_at)
     SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, 'seed-' || i || '@example.com', 'x', 'Seed ' || i,
            (ARRAY['unverified', 'pending', 'verified', 'rejected'])[1 + i % 4], $1::timestamptz - interval '1 day'
       FROM generate_series(1, $2::int) AS i`,
    [from, users],
  );
  await db.query(
    `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination, status,
                         workflow_id, workflow_started_at, limits_checked_at, created_at, updated_at)
     SELECT id, ('00000000-0000-7000-8000-' || lpad(to_hex(1 + g % $3::int), 12, '0'))::uuid, 'seed-' || g,
            CASE WHEN g % 7 = 0 THEN kes::bigint * 10000 / 129 ELSE kes END, kes,
            CASE WHEN g % 7 = 0 THEN 'USDT' ELSE 'KES' END,
            CASE WHEN g % 7 = 0 THEN 'crypto' WHEN g % 2 = 0 THEN 'mobile_money' ELSE 'bank_transfer' END,
            '{}'::jsonb,
            (ARRAY['completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'failed', 'rejected', 'pending', 'processing'])[1 + g % 10],
            'payment-' || id, t, t, t, t
       FROM (SELECT g, gen_random_uuid() AS id,
                    $1::timestamptz + (g::float8 / $2::int) * interval '30 days' AS t,
                    CASE WHEN g % 200 = 0 THEN 200000000 + (g % 997) * 100000
                         WHEN g % 20 = 0 THEN 30000000 + (g % 991) * 50000
                         ELSE 10000 + (g % 4999) * 1000 END AS kes
               FROM generate_series(1, $2::int) AS g) AS s`,
    [from, count, users],
  );
  await db.query('ANALYZE');
}

/** The statements a report runs, run directly: sections in parallel, each section's statements in order. */
async function bareReportSql(pool: Pool, input: ComplianceReportInput): Promise<void> {
  await Promise.all(
    REPORT_SECTIONS.map(async (section) => {
      const client = await pool.connect();
      try {
        for (const statement of REPORT_STATEMENTS[section](input)) await client.query(statement.sql, statement.bind);
      } finally {
        client.release();
      }
    }),
  );
}

export async function benchComplianceReport(options: BenchOptions & { payments?: number }): Promise<ComplianceReportBench> {
  const log = options.log ?? (() => undefined);
  const payments = options.payments ?? 1_000_000;
  const rounds = options.rounds ?? 3;
  const databaseUrl = options.databaseUrl ?? 'postgres://postgres@127.0.0.1:5432/paygate_bench_report';
  const stack = await startStack(options, databaseUrl, {});
  const pool = new Pool({ connectionString: databaseUrl, max: REPORT_SECTIONS.length });
  try {
    const from = new Date(Date.UTC(2026, 0, 1));
    const to = new Date(from.getTime() + 31 * DAY_MS);
    log(`seeding ${payments} payments`);
    const seeding = performance.now();
    await seedPayments(stack.db, payments, from);
    log(`  seeded in ${seconds(seeding).toFixed(1)} s`);
    const staff = await newUser(stack, 'compliance', ['user', 'compliance']);
    const input: ComplianceReportInput = {
      from: from.toISOString(),
      to: to.toISOString(),
      ctrThresholdUsd: '15000',
      usdRateKes: '129.00',
      ctrThresholdKesMinor: usdToKesMinorCeil('15000', '129.00').toString(),
      maxRows: 10000,
    };
    const reportUrl = `${stack.apiUrl}/api/v1/compliance/report?from=${input.from}&to=${input.to}&refresh=true`;
    const report = async (): Promise<number> => {
      const startedAt = performance.now();
      const res = await fetch(reportUrl, { headers: { authorization: `Bearer ${staff.token}` } });
      const body = (await res.json()) as { totals?: { count: number } };
      if (res.status !== 200 || body.totals?.count !== payments)
        throw new Error(`report failed: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      return seconds(startedAt);
    };
    const bare = async (): Promise<number> => {
      const startedAt = performance.now();
      await bareReportSql(pool, input);
      return seconds(startedAt);
    };
    log('warming up (one of each)');
    await report();
    await bare();
    const reportTimes: number[] = [];
    const sqlTimes: number[] = [];
    for (let i = 0; i < rounds; i++) {
      reportTimes.push(await report());
      sqlTimes.push(await bare());
      log(`  round ${i + 1}/${rounds}: report ${reportTimes[i].toFixed(2)} s, bare SQL ${sqlTimes[i].toFixed(2)} s`);
    }
    const reportSeconds = median(reportTimes);
    const sqlSeconds = median(sqlTimes);
    return { payments, reportSeconds, sqlSeconds, ratio: reportSeconds / sqlSeconds };
  } finally {
    await pool.end();
    await stack.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Payment latency with a full blocklist

const SYLLABLES = [
  'ka',
  'ma',
  'wa',
  'ngi',
  'jo',
  'ot',
  'ie',
  'no',
  'ach',
  'ru',
  'ki',
  'mu',
  'ri',
  'ke',
  'ny',
  'an',
  'zi',
  'bo',
  'le',
  'si',
];

/** `count` entries shaped like a real list: three quarters names, the rest identifiers. */
function blocklistRows(count: number): { types: string[]; values: string[]; keys: string[] } {
  const types: string[] = [];
  const values: string[] = [];
  const keys: string[] = [];
  let seed = 12345;
  const next = () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const word = () => Array.from({ length: 2 + Math.floor(next() * 3) }, () => SYLLABLES[Math.floor(next() * SYLLABLES.length)]).join('');
  for (let i = 0; i < count; i++) {
    const kind = i % 20;
    if (kind < 15) {
      const tokens = Array.from({ length: 2 + Math.floor(next() * 2) }, word);
      types.push('name');
      values.push(tokens.join(' '));
      keys.push([...tokens].sort().join(' '));
      continue;
    }
    const digits = String(10_000_000 + i).padStart(8, '0');
    const [type, value] =
      kind < 17
        ? ['phone', `+2547${digits}`]
        : kind < 18
          ? ['email', `listed-${i}@example.org`]
          : kind < 19
            ? ['national_id', digits]
            : ['bank_account', `99${digits}`];
    types.push(type);
    values.push(value);
    keys.push(value);
  }
  return { types, values, keys };
}

async function fillBlocklist(db: PgClient, count: number): Promise<void> {
  const rows = blocklistRows(count);
  await db.query(
    `INSERT INTO blocklist_entries (id, type, value, match_key, reason, source)
     SELECT gen_random_uuid(), type, value, key, 'bench entry', 'manual'
       FROM unnest($1::text[], $2::text[], $3::text[]) AS r (type, value, key)
     ON CONFLICT (type, match_key) DO NOTHING`,
    [rows.types, rows.values, rows.keys],
  );
}

/** Payments of one payer, initiated and awaited until completed, `concurrency` at a time: their latencies in ms. */
/** How long one payment may take before the bench stops and says why, instead of waiting for ever. */
const PAYMENT_DEADLINE_MS = 60_000;

/**
 * A closed loop of payouts (`concurrency` at a time), each timed from initiate to its workflow's result. With
 * `paymentsPerPayer`, each payer makes at most that many before a new one (registered and funded outside the
 * timing) takes over: an ordinary customer's pattern, which transaction monitoring lets through.
 */
async function paymentBatches(
  stack: Stack,
  concurrency: number,
  paymentsPerPayer = Number.POSITIVE_INFINITY,
): Promise<(count: number) => Promise<number[]>> {
  // One payer at a time, shared by the loop's workers; a new one is registered when it has made its share.
  let payer: Promise<{ token: string }> = newUser(stack, 'payer', ['user']);
  let madeByPayer = 0;
  await payer;
  const nextPayer = (): Promise<{ token: string }> => {
    if (madeByPayer >= paymentsPerPayer) {
      payer = newUser(stack, 'payer', ['user']);
      madeByPayer = 0;
    }
    madeByPayer += 1;
    return payer;
  };
  const pay = async (token: string): Promise<number> => {
    const startedAt = performance.now();
    const accepted = await postJson(
      `${stack.apiUrl}/api/v1/payments/initiate`,
      { amount: '1500.00', currency: 'KES', method: 'mobile_money', destination: { provider: 'mpesa', phone: '+254712345678' } },
      { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID() },
    );
    if (accepted.status !== 202) throw new Error(`initiate failed: ${accepted.status} ${JSON.stringify(accepted.json)}`);
    const { workflow_id: workflowId, order_id: orderId } = accepted.json as { workflow_id: string; order_id: string };
    const outcome = stack.temporal.workflow.getHandle(workflowId).result() as Promise<{ status: string }>;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void stack.db
          .query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [orderId])
          .then(
            ({ rows }) => rows[0]?.status ?? 'not found',
            (err: Error) => `unreadable (${err.message})`,
          )
          .then((status) =>
            reject(new Error(`payment ${orderId} did not end within ${PAYMENT_DEADLINE_MS / 1000} s; its order is ${status}`)),
          );
      }, PAYMENT_DEADLINE_MS);
    });
    try {
      const result = await Promise.race([outcome, deadline]);
      if (result.status !== 'completed') throw new Error(`payment ended ${result.status}`);
    } finally {
      clearTimeout(timer);
    }
    return performance.now() - startedAt;
  };
  return async (count: number): Promise<number[]> => {
    const latencies: number[] = [];
    let left = count;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left > 0) {
          left -= 1;
          const { token } = await nextPayer();
          latencies.push(await pay(token));
        }
      }),
    );
    return latencies;
  };
}

export interface MonitoringLatencyBench {
  paymentsPerRound: number;
  onP50Ms: number;
  offP50Ms: number;
  onP99Ms: number;
  offP99Ms: number;
  /** Evaluations stored by each side: every payment's on the "on" side, none on the "off" side. */
  onEvaluations: number;
  offEvaluations: number;
  /** onP50Ms / offP50Ms; target <= 1.1. */
  ratio: number;
}

/**
 * Benchmark (n): payment initiate-to-completed p50 with transaction monitoring on (`MONITORING_ENABLED=true` for
 * the api and worker) against off, two stacks on their own databases, rounds interleaved on, off, on, off …
 */
/** Payouts per payer in (g) and (n): well below the default velocity rule's `min_count` of 30 a day (docs/monitoring.md#rules). */
const PAYMENTS_PER_PAYER = 10;

export async function benchMonitoringLatency(
  options: BenchOptions & { paymentsPerRound?: number; concurrency?: number },
): Promise<MonitoringLatencyBench> {
  const log = options.log ?? (() => undefined);
  const perRound = options.paymentsPerRound ?? 150;
  const rounds = options.rounds ?? 3;
  const concurrency = options.concurrency ?? 1;
  const base = options.databaseUrl ?? 'postgres://postgres@127.0.0.1:5432/paygate_bench_monitoring_latency';
  const on = await startStack(options, `${base}_on`, { SANDBOX_CALLBACK_DELAY_MS: '0', MONITORING_ENABLED: 'true' });
  try {
    const off = await startStack(options, `${base}_off`, { SANDBOX_CALLBACK_DELAY_MS: '0', MONITORING_ENABLED: 'false' });
    try {
      // Both sides pay the same way: a payer makes a few payouts, as an ordinary customer does, then another
      // takes over. One payer making hundreds in minutes is velocity that monitoring holds for review.
      const onBatch = await paymentBatches(on, concurrency, PAYMENTS_PER_PAYER);
      const offBatch = await paymentBatches(off, concurrency, PAYMENTS_PER_PAYER);
      log('warming up both stacks');
      await onBatch(20);
      await offBatch(20);
      const onLatencies: number[] = [];
      const offLatencies: number[] = [];
      for (let i = 0; i < rounds; i++) {
        // Which side goes first alternates, so that neither always follows the other's burst.
        let a: number[];
        let b: number[];
        if (i % 2 === 0) {
          a = await onBatch(perRound);
          b = await offBatch(perRound);
        } else {
          b = await offBatch(perRound);
          a = await onBatch(perRound);
        }
        onLatencies.push(...a);
        offLatencies.push(...b);
        log(`  round ${i + 1}/${rounds}: p50 on ${percentile(a, 50).toFixed(1)} ms, off ${percentile(b, 50).toFixed(1)} ms`);
      }
      // The figure means something only if the switch did: every payment evaluated on one side, none on the other.
      const evaluations = async (stack: Stack) =>
        Number((await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM monitoring_evaluations')).rows[0].n);
      const onEvaluations = await evaluations(on);
      const offEvaluations = await evaluations(off);
      const payments = 20 + perRound * rounds;
      if (onEvaluations < payments || offEvaluations !== 0) {
        throw new Error(
          `MONITORING_ENABLED did not take effect: ${onEvaluations} evaluations with it on and ${offEvaluations} with it off, for ${payments} payments each`,
        );
      }
      const onP50Ms = percentile(onLatencies, 50);
      const offP50Ms = percentile(offLatencies, 50);
      return {
        paymentsPerRound: perRound,
        onEvaluations,
        offEvaluations,
        onP50Ms,
        offP50Ms,
        onP99Ms: percentile(onLatencies, 99),
        offP99Ms: percentile(offLatencies, 99),
        ratio: onP50Ms / offP50Ms,
      };
    } finally {
      await off.stop();
    }
  } finally {
    await on.stop();
  }
}

export async function benchScreeningLatency(
  options: BenchOptions & { entries?: number; paymentsPerRound?: number; concurrency?: number },
): Promise<ScreeningLatencyBench> {
  const log = options.log ?? (() => undefined);
  const entries = options.entries ?? 20_000;
  const perRound = options.paymentsPerRound ?? 150;
  const rounds = options.rounds ?? 3;
  const concurrency = options.concurrency ?? 1;
  const databaseUrl = options.databaseUrl ?? 'postgres://postgres@127.0.0.1:5432/paygate_bench_screening';
  const stack = await startStack(options, databaseUrl, { SANDBOX_CALLBACK_DELAY_MS: '0' });
  try {
    // Payers take turns as in (n): one payer making hundreds of payouts in minutes is velocity that monitoring
    // (on, as by default) holds for a review, and (g) measures screening, not that hold.
    const batch = await paymentBatches(stack, concurrency, PAYMENTS_PER_PAYER);
    const side = async (loaded: boolean): Promise<number[]> => {
      if (loaded) await fillBlocklist(stack.db, entries);
      else await stack.db.query('DELETE FROM blocklist_entries');
      // The first screenings after the change reload the processes' blocklist: not measured.
      await batch(Math.max(5, concurrency * 2));
      return batch(perRound);
    };
    log(`warming up; the loaded side has ${entries} blocklist entries`);
    await batch(20);
    const empty: number[] = [];
    const full: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const a = await side(true);
      const b = await side(false);
      full.push(...a);
      empty.push(...b);
      log(`  round ${i + 1}/${rounds}: p50 loaded ${percentile(a, 50).toFixed(1)} ms, empty ${percentile(b, 50).toFixed(1)} ms`);
    }
    const loadedP50Ms = percentile(full, 50);
    const emptyP50Ms = percentile(empty, 50);
    return {
      entries,
      paymentsPerRound: perRound,
      emptyP50Ms,
      loadedP50Ms,
      emptyP99Ms: percentile(empty, 99),
      loadedP99Ms: percentile(full, 99),
      ratio: loadedP50Ms / emptyP50Ms,
    };
  } finally {
    await stack.stop();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const log = (line: string) => process.stderr.write(`[bench:compliance] ${line}\n`);
  process.env.LOG_LEVEL ??= 'warn';
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
  let env: TestWorkflowEnvironment | undefined;
  let temporalAddress = process.env.TEMPORAL_ADDRESS;
  if (!temporalAddress) {
    log('starting a Temporal dev server');
    env = await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: 'existing-path', path: temporalCliPath() }, ip: '127.0.0.1', ui: false },
    });
    temporalAddress = env.address;
  }
  try {
    const only = (process.env.BENCH_ONLY ?? 'report,screening').split(',').map((s) => s.trim());
    const rounds = process.env.BENCH_ROUNDS ? Number(process.env.BENCH_ROUNDS) : undefined;
    if (only.includes('report')) {
      const payments = process.env.BENCH_REPORT_PAYMENTS ? Number(process.env.BENCH_REPORT_PAYMENTS) : undefined;
      const r = await benchComplianceReport({ temporalAddress, rounds, payments, log });
      say(`compliance report over ${r.payments} payments: ${r.reportSeconds.toFixed(2)} s; bare SQL ${r.sqlSeconds.toFixed(2)} s`);
      say(`  ratio ${r.ratio.toFixed(2)} (target <= 2): ${r.ratio <= 2 ? 'MET' : 'NOT MET'}`);
    }
    if (only.includes('screening')) {
      const s = await benchScreeningLatency({ temporalAddress, rounds, log });
      say(
        `payment initiate-to-completed p50: ${s.loadedP50Ms.toFixed(1)} ms with ${s.entries} blocklist entries, ` +
          `${s.emptyP50Ms.toFixed(1)} ms with none (p99 ${s.loadedP99Ms.toFixed(1)} / ${s.emptyP99Ms.toFixed(1)} ms)`,
      );
      say(`  ratio ${s.ratio.toFixed(3)} (target <= 1.1): ${s.ratio <= 1.1 ? 'MET' : 'NOT MET'}`);
    }
  } finally {
    await env?.teardown();
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`[bench:compliance] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
