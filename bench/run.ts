import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Client as PgClient } from 'pg';
import { Client, Connection, type WorkflowStartOptions } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../platform/config';
import { migrateUp } from '../models/migrate';
import {
  DEPOSIT_WORKFLOW,
  PAYMENT_WORKFLOW,
  TRADE_WORKFLOW,
  depositWorkflowId,
  paymentWorkflowId,
  tradeWorkflowId,
  type DepositResult,
  type PaymentResult,
  type PaymentWorkflowInput,
  type TradeWorkflowInput,
} from '../workflows/shared';
import { depositRunStart, orderRunMetadata, paymentRunInput } from '../workflows/client';
import type { OrderFacts } from '../domain/orders';
import { formatAmount } from '../domain/money';
import { assetForFiatMinor } from '../domain/p2p/ads';
import type { BackgroundRefreshes } from './discovery';
import {
  RESULTS_DIR,
  childPids,
  envInt,
  freePort,
  fundBenchUser,
  median,
  percentile,
  pool,
  processCpuMs,
  cpuSnapshot,
  registerSearchAttributes,
  ROOT,
  spawnNode,
  tailOf,
  temporalCliPath,
  waitForHttp,
  type Child,
} from './support';
import type { ParkedAppealsResult } from './appeals';

/**
 * `npm run bench`: Paygate against bare baselines, interleaved A/B in one run (A, B, A, B, ...), the
 * median of the rounds reported with the ratio Paygate / baseline. Absolute figures depend on the
 * machine; the ratios are the result. The knobs are printed at the end of every run.
 *
 * (a) GET /api/v1/payments/orders/{id} over seeded orders  vs  a bare Express + pg route (bench/bare-server.ts)
 *     running the same SQL with the same pool size, each in its own child process, same autocannon load.
 * (b) accepted POST /api/v1/payments/initiate             vs  client.workflow.start of the payment workflow
 *     from this process at the same concurrency. Both start on a task queue that no worker polls, so only
 *     acceptance is measured.
 * (c) payments completed through the sandbox rail         vs  `hello` workflows completed: same worker
 *     process, same batch size. The bench inserts the orders and starts each payment as the api does (its
 *     input, search attributes, memo and summary); the hello starts bare. The rail calls back after
 *     BENCH_CALLBACK_DELAY_MS (default 0) over HTTP to the api, which signals the workflow.
 *
 * (d) the exchange catalogue refresh, probe off             vs  a bare pg multi-row upsert of the same rows
 *     (bench/discovery.ts): median milliseconds of each, lower is better.
 * (e) (a)'s Paygate measurement while the real jobs process refreshes both catalogues every second (busy)
 *     vs the same measurement without it (quiet), rounds interleaved quiet, busy, quiet, busy …; same
 *     seeded orders, api process and token as (a). The jobs process is started for each busy round and
 *     stopped after it, so the quiet rounds are quiet.
 * (f) the compliance report over 1,000,000 seeded payments  vs  the same SQL statements run directly with
 *     pg (bench/compliance.ts, own stack and database): median seconds of each.
 * (g) payment initiate-to-completed p50 with 20,000 blocklist entries  vs  an empty blocklist
 *     (bench/compliance.ts, own stack and database).
 * (h) a Temporal worker's RSS with 1,000 parked appeal workflows  vs  the same worker warm and idle
 *     (bench/appeals.ts in a child process with --expose-gc); the target is on the growth per appeal.
 * (i) payouts completed, all held from one hot wallet       vs  the same batch spread over 100 wallets: same
 *     worker; each hold takes its wallet's row lock, so one busy merchant must not serialise the rest.
 * (j) STK Push deposits credited (sandbox rail)             vs  payments completed: same api and worker, same
 *     batch size; the rail calls back after BENCH_CALLBACK_DELAY_MS.
 * (k) GET /payments/history and GET /wallets/KES/transactions at the cursor of page 500  vs  page 1, for a user
 *     with 1,000,000 payments and wallet entries: keyset pages cost the same however deep.
 * (l) P2P trades settled against one hot ad                 vs  the same trades spread over 100 ads: same
 *     buyers and worker; a popular merchant's ad must not serialise the market.
 * (m) screening one name against 50,000 listed names        vs  against 1,000, in-process (bench/screening-scale.ts),
 *     with the floor: what any index must spend given the names a probe matches on each list.
 * (n) payment initiate-to-completed p50 with monitoring on (MONITORING_ENABLED=true for its api and worker)
 *     vs off (bench/compliance.ts, two stacks on their own databases, rounds interleaved).
 * (o) monitoring evaluations per second (history windows read in SQL + the rules) against the labelled month's
 *     1,000,000-odd movements in Postgres  vs  a bare indexed read of the customer's row, same pool, same run
 *     (bench/monitoring.ts, own database); the target is on the evaluations per second.
 * (p) payouts completed by one bulk payout of BENCH_BATCH_ITEMS (10,000) items on the sandbox rail  vs  the same
 *     payouts started one by one (POST /payments/initiate, BENCH_CONNECTIONS at a time), same api and worker;
 *     and the worker's peak RSS during the batch against its RSS idle, warm.
 *
 * Every run writes bench/REPORT.md (the ratios against their targets, the machine, how to reproduce)
 * and bench/results/latest.json.
 *
 * The Paygate rounds of (b) and (c) each use a fresh KYC-verified user, so that a user's growing 24-hour
 * volume (which the limit checks sum) does not make later rounds slower than earlier ones.
 */

const BENCHMARKS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p'];

const settings = {
  seconds: envInt('BENCH_SECONDS', 5),
  rounds: envInt('BENCH_ROUNDS', 3),
  connections: envInt('BENCH_CONNECTIONS', 20),
  warmupSeconds: envInt('BENCH_WARMUP_SECONDS', 2, 0),
  orders: envInt('BENCH_ORDERS', 10_000),
  cWorkflows: process.env.BENCH_C_WORKFLOWS ? envInt('BENCH_C_WORKFLOWS', 200) : undefined,
  batchItems: envInt('BENCH_BATCH_ITEMS', 10_000, 10),
  batchConcurrency: process.env.BENCH_BATCH_CONCURRENCY ? envInt('BENCH_BATCH_CONCURRENCY', 20) : undefined,
  refreshRounds: envInt('BENCH_REFRESH_ROUNDS', 15),
  reportPayments: envInt('BENCH_REPORT_PAYMENTS', 1_000_000),
  appeals: envInt('BENCH_APPEALS', 1000),
  deepRows: envInt('BENCH_DEEP_ROWS', 1_000_000),
  deepPages: envInt('BENCH_DEEP_PAGES', 500, 2),
  only: (process.env.BENCH_ONLY ?? BENCHMARKS.join(','))
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
  databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paygate_bench',
  redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  callbackDelayMs: envInt('BENCH_CALLBACK_DELAY_MS', 0, 0),
  strict: process.env.BENCH_STRICT === '1' || process.env.BENCH_STRICT === 'true',
  /** (o): keep the loaded month in its database and reuse it on the next run (pending migrations still applied). */
  keepMonitoring: process.env.BENCH_KEEP_MONITORING === '1' || process.env.BENCH_KEEP_MONITORING === 'true',
};

const REPORT_FILE = path.join(ROOT, 'bench', 'REPORT.md');

const HUGE_LIMIT_KES = '1000000000000000';
const PASSWORD = 'bench-password-0123456789';
const PAYMENT_BODY = {
  amount: '1500.00',
  currency: 'KES',
  method: 'mobile_money',
  destination: { provider: 'mpesa', phone: '+254712345678' },
  description: 'bench payment',
};

interface Round {
  rate: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
  seconds: number;
  /** CPU time of the measured process (see Side.cpuOf) per successful operation, when it can be read. */
  cpuMsPerOp?: number;
  /** CPU time per successful operation of the machine and of each process group measured (`cpuSnapshot`). */
  cpuSplit?: Record<string, number>;
}

interface Side {
  label: string;
  /** The process whose CPU time is reported per operation. */
  cpuOf: string;
  rounds: Round[];
  rate: number;
  p50: number;
  p99: number;
  cpuMsPerOp?: number;
}

interface Target {
  name: string;
  wanted: string;
  /** The bound in `wanted`. */
  limit: number;
  actual: number;
  met: boolean;
}

interface ResultBase {
  id: string;
  title: string;
  /** What the ratio divides, e.g. "Paygate / bare req/s". */
  ratioOf: string;
  ratio: number;
  targets: Target[];
  notes: string[];
  /** Wall-clock seconds the benchmark took, its set-up included. */
  wallSeconds?: number;
}

/** Two sides measured by this runner in interleaved rounds: (a), (b), (c), (e). */
interface RateResult extends ResultBase {
  kind: 'rate';
  unit: string;
  paygate: Side;
  bare: Side;
  p99Ratio: number;
}

/** One figure per side (a median time or a percentile) from a benchmark module: (d), (f), (g). */
interface FigureResult extends ResultBase {
  kind: 'figure';
  sides: Figure[];
  /** What the module returned, as is. */
  detail: unknown;
}

interface Figure {
  label: string;
  value: number;
  unit: string;
  digits: number;
  /** How the figure was obtained. */
  about: string;
}

type BenchResult = RateResult | FigureResult;

// ---------------------------------------------------------------------------------------------
// Lifecycle: every resource registers its own teardown, run in reverse on exit, error or signal.

const teardowns: { name: string; run: () => Promise<unknown> }[] = [];
let tearingDown: Promise<void> | undefined;

function teardown(): Promise<void> {
  tearingDown ??= (async () => {
    for (const step of teardowns.reverse()) {
      try {
        await step.run();
      } catch (err) {
        process.stderr.write(`[bench] teardown of ${step.name} failed: ${(err as Error).message}\n`);
      }
    }
  })();
  return tearingDown;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\n[bench] ${signal}: stopping\n`);
    void teardown().finally(() => process.exit(130));
  });
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

function track(child: Child): Child {
  teardowns.push({ name: child.name, run: () => child.stop() });
  return child;
}

// ---------------------------------------------------------------------------------------------
// Stack

async function recreateDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`unsupported database name "${name}"`);
  target.pathname = '/postgres';
  const admin = new PgClient({ connectionString: target.toString() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
}

async function databaseExists(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  target.pathname = '/postgres';
  const admin = new PgClient({ connectionString: target.toString() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return found.rowCount === 1;
  } finally {
    await admin.end();
  }
}

async function startTemporal(): Promise<{ address: string; external: boolean }> {
  if (process.env.TEMPORAL_ADDRESS) return { address: process.env.TEMPORAL_ADDRESS, external: true };
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: temporalCliPath() }, ip: '127.0.0.1', ui: false },
  });
  teardowns.push({ name: 'temporal dev server', run: () => env.teardown() });
  return { address: env.address, external: false };
}

interface BenchUser {
  id: string;
  token: string;
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json().catch((): unknown => null) };
}

/** Register and log in through the API, then mark the account KYC-verified. */
async function newVerifiedUser(apiUrl: string, db: PgClient, label: string): Promise<BenchUser> {
  const email = `bench-${label}-${randomUUID().slice(0, 8)}@example.com`;
  const registered = await postJson(`${apiUrl}/api/v1/auth/register`, { email, password: PASSWORD, full_name: `Bench ${label}` });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${JSON.stringify(registered.json)}`);
  const id = (registered.json as { user_id: string }).user_id;
  await db.query(`UPDATE users SET kyc_status = 'verified' WHERE id = $1`, [id]);
  await fundBenchUser(db, id);
  const login = await postJson(`${apiUrl}/api/v1/auth/login`, { email, password: PASSWORD });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.json)}`);
  return { id, token: (login.json as { access_token: string }).access_token };
}

/** Completed orders spread over the last 30 days, each with its events, in two statements. */
async function seedOrders(db: PgClient, userId: string, count: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                         description, reference, status, rail_reference, workflow_id, workflow_started_at,
                         limits_checked_at, created_at, updated_at)
     SELECT id, $1, 'seed-' || g, 150000 + g, 150000 + g, 'KES', 'mobile_money',
            '{"provider": "mpesa", "phone": "+254712345678"}'::jsonb, 'seeded order ' || g, 'INV-' || g, 'completed',
            'SBX-SEED-' || g, 'payment-' || id, t, t, t, t + interval '2 seconds'
       FROM (SELECT g, gen_random_uuid() AS id, now() - g * (interval '30 days' / $2::int) AS t
               FROM generate_series(1, $2::int) AS g) AS s
     RETURNING id`,
    [userId, count],
  );
  await db.query(
    `INSERT INTO order_events (order_id, status, detail, at)
     SELECT o.id, e.status, e.detail, o.created_at + e.after
       FROM orders o
      CROSS JOIN (VALUES ('processing', 'funds held', interval '1 second'),
                         ('completed', 'settled by the rail', interval '2 seconds')) AS e (status, detail, after)
      WHERE o.user_id = $1`,
    [userId],
  );
  await db.query('ANALYZE');
  return rows.map((r) => r.id);
}

// ---------------------------------------------------------------------------------------------
// Measurements

async function cannon(options: autocannon.Options): Promise<Round> {
  const result = await autocannon({ ...options, connections: settings.connections });
  const ok = result['2xx'];
  return {
    rate: ok / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok,
    failed: result.non2xx + result.errors,
    seconds: result.duration,
  };
}

/** `concurrency` loops calling `op` until `seconds` have passed; per-call latency in ms. */
async function closedLoop(seconds: number, concurrency: number, op: () => Promise<unknown>): Promise<Round> {
  const latencies: number[] = [];
  let failed = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await op();
          latencies.push(performance.now() - t0);
        } catch {
          failed += 1;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return {
    rate: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ok: latencies.length,
    failed,
    seconds: elapsed,
  };
}

/**
 * Start `count` workflows (at most `concurrency` starts in flight) and wait for every result, or until
 * `timeoutMs` has passed: what has not finished by then counts as failed.
 */
async function completeAll(
  count: number,
  concurrency: number,
  timeoutMs: number,
  startOne: (i: number) => Promise<() => Promise<boolean>>,
): Promise<Round> {
  const latencies: number[] = [];
  const results: Promise<void>[] = [];
  const started = performance.now();
  await pool(
    Array.from({ length: count }, (_, i) => i),
    concurrency,
    async (i) => {
      const t0 = performance.now();
      try {
        const result = await startOne(i);
        results.push(
          result().then(
            (ok) => {
              if (ok) latencies.push(performance.now() - t0);
            },
            () => undefined,
          ),
        );
      } catch {
        // a start that failed counts as a workflow that did not complete
      }
    },
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(results),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, timeoutMs - (performance.now() - started)));
    }),
  ]);
  clearTimeout(timer);
  const elapsed = (performance.now() - started) / 1000;
  return {
    rate: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ok: latencies.length,
    failed: count - latencies.length,
    seconds: elapsed,
  };
}

async function interleave(
  rounds: number,
  a: (round: number) => Promise<Round>,
  b: (round: number) => Promise<Round>,
  labels: [string, string] = ['Paygate', 'bare'],
) {
  const ra: Round[] = [];
  const rb: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    ra.push(await a(i));
    progress(`  round ${i + 1}/${rounds} ${labels[0].padEnd(7)} ${ra[i].rate.toFixed(1)}/s`);
    rb.push(await b(i));
    progress(`  round ${i + 1}/${rounds} ${labels[1].padEnd(7)} ${rb[i].rate.toFixed(1)}/s`);
  }
  return [ra, rb] as const;
}

/** Run a round and charge the CPU time `pid` used during it to each successful operation. */
async function measured(pid: number | undefined, round: () => Promise<Round>): Promise<Round> {
  const before = processCpuMs(pid);
  const result = await round();
  const after = processCpuMs(pid);
  if (before !== undefined && after !== undefined && result.ok > 0) result.cpuMsPerOp = (after - before) / result.ok;
  return result;
}

/** As `measured`, and where the round's CPU went across the machine (`cpuSnapshot` of `groups`), per operation. */
async function measuredAcross(
  pid: number | undefined,
  groups: Record<string, number | string | undefined>,
  round: () => Promise<Round>,
): Promise<Round> {
  const before = cpuSnapshot(groups);
  const result = await measured(pid, round);
  const after = cpuSnapshot(groups);
  if (before && after && result.ok > 0) {
    result.cpuSplit = Object.fromEntries(Object.keys(after).map((k) => [k, (after[k] - (before[k] ?? 0)) / result.ok]));
  }
  return result;
}

/** The median of each group's CPU per operation over the rounds, as one line: `worker 20.1, … , machine 50.3 ms`. */
function cpuSplitLine(rounds: Round[], digits = 1): string | undefined {
  const splits = rounds.map((r) => r.cpuSplit).filter((v): v is Record<string, number> => v !== undefined);
  if (splits.length !== rounds.length || splits.length === 0) return undefined;
  return Object.keys(splits[0])
    .map((k) => `${k} ${fmt(median(splits.map((x) => x[k] ?? 0)), digits)}`)
    .join(', ');
}

function side(label: string, cpuOf: string, rounds: Round[]): Side {
  const cpu = rounds.map((r) => r.cpuMsPerOp).filter((v): v is number => v !== undefined);
  return {
    label,
    cpuOf,
    rounds,
    rate: median(rounds.map((r) => r.rate)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    cpuMsPerOp: cpu.length === rounds.length ? median(cpu) : undefined,
  };
}

function compare(id: string, title: string, unit: string, paygate: Side, bare: Side, minRatio: number, maxP99Ratio?: number): RateResult {
  const ratio = paygate.rate / bare.rate;
  const p99Ratio = paygate.p99 / bare.p99;
  const targets: Target[] = [
    { name: 'throughput ratio', wanted: `>= ${minRatio}`, limit: minRatio, actual: ratio, met: ratio >= minRatio },
  ];
  if (maxP99Ratio !== undefined) {
    targets.push({
      name: `p99 vs ${bare.label}`,
      wanted: `<= ${maxP99Ratio}x`,
      limit: maxP99Ratio,
      actual: p99Ratio,
      met: p99Ratio <= maxP99Ratio,
    });
  }
  const notes: string[] = [];
  for (const s of [paygate, bare]) {
    const failed = s.rounds.reduce((n, r) => n + r.failed, 0);
    if (failed > 0) notes.push(`${s.label}: ${failed} failed requests/workflows over all rounds (not counted)`);
  }
  return {
    kind: 'rate',
    id,
    title,
    unit,
    ratioOf: `${paygate.label} / ${bare.label} ${unit}`,
    paygate,
    bare,
    ratio,
    p99Ratio,
    targets,
    notes,
  };
}

/** A module's two figures, lower is better: the ratio first / second, at most `maxRatio`. */
function figures(
  id: string,
  title: string,
  sides: [Figure, Figure],
  ratio: number,
  targetName: string,
  maxRatio: number,
  detail: unknown,
): FigureResult {
  return {
    kind: 'figure',
    id,
    title,
    ratioOf: `${sides[0].label} / ${sides[1].label} ${sides[0].unit}`,
    ratio,
    sides,
    targets: [{ name: targetName, wanted: `<= ${maxRatio}x`, limit: maxRatio, actual: ratio, met: ratio <= maxRatio }],
    notes: [],
    detail,
  };
}

// ---------------------------------------------------------------------------------------------
// The benchmarks

interface Ctx {
  apiUrl: string;
  db: PgClient;
  temporal?: Client;
  temporalAddress?: string;
  acceptQueue: string;
  workQueue: string;
  apiEnv: NodeJS.ProcessEnv;
  apiPid?: number;
}

/** One autocannon round of GET /api/v1/payments/orders/{id} over random seeded orders. */
function orderReads(ctx: Ctx, user: BenchUser, ids: string[]): (seconds: number) => Promise<Round> {
  const pick = () => ids[Math.floor(Math.random() * ids.length)];
  return (seconds: number) =>
    cannon({
      url: ctx.apiUrl,
      duration: seconds,
      headers: { authorization: `Bearer ${user.token}` },
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/payments/orders/${pick()}` }) }],
    });
}

async function benchOrderRead(
  ctx: Ctx,
  bareUrl: string,
  barePid: number | undefined,
  user: BenchUser,
  ids: string[],
): Promise<BenchResult> {
  const pick = () => ids[Math.floor(Math.random() * ids.length)];
  const paygate = orderReads(ctx, user, ids);
  const bare = (seconds: number) =>
    cannon({
      url: bareUrl,
      duration: seconds,
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/orders/${pick()}` }) }],
    });
  if (settings.warmupSeconds > 0) {
    await paygate(settings.warmupSeconds);
    await bare(settings.warmupSeconds);
  }
  const [a, b] = await interleave(
    settings.rounds,
    () => measured(ctx.apiPid, () => paygate(settings.seconds)),
    () => measured(barePid, () => bare(settings.seconds)),
  );
  return compare(
    'a',
    `GET /api/v1/payments/orders/{id} over ${ids.length} seeded orders vs bare Express + pg route`,
    'req/s',
    side('Paygate', 'api process', a),
    side('bare', 'bare server', b),
    0.85,
    1.2,
  );
}

async function benchInitiate(ctx: Ctx, users: BenchUser[], warmupUser: BenchUser): Promise<RateResult> {
  const temporal = ctx.temporal!;
  const cfg = loadConfig(ctx.apiEnv);
  const body = JSON.stringify(PAYMENT_BODY);
  const paygate = (user: BenchUser, seconds: number) =>
    cannon({
      url: `${ctx.apiUrl}/api/v1/payments/initiate`,
      method: 'POST',
      duration: seconds,
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body,
      requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }) }],
    });
  const bare = (seconds: number) =>
    closedLoop(seconds, settings.connections, () => {
      const input: PaymentWorkflowInput = {
        orderId: randomUUID(),
        pollAfterMs: cfg.payments.pollAfterMs,
        settleTimeoutMs: cfg.payments.settleTimeoutMs,
      };
      return temporal.workflow.start(PAYMENT_WORKFLOW, {
        workflowId: paymentWorkflowId(input.orderId),
        taskQueue: ctx.acceptQueue,
        args: [input],
      });
    });
  if (settings.warmupSeconds > 0) {
    await paygate(warmupUser, settings.warmupSeconds);
    await bare(settings.warmupSeconds);
  }
  // Where an acceptance's CPU goes across the machine: the bare side's start is made by the bench process itself.
  const groups = { api: ctx.apiPid, 'Temporal server': 'temporal', Postgres: 'postgres', bench: process.pid };
  const [a, b] = await interleave(
    settings.rounds,
    (i) => measuredAcross(ctx.apiPid, groups, () => paygate(users[i], settings.seconds)),
    () => measuredAcross(process.pid, groups, () => bare(settings.seconds)),
  );
  const result = compare(
    'b',
    'accepted POST /api/v1/payments/initiate vs bare client.workflow.start (task queue without a worker)',
    'accepted/s',
    side('Paygate', 'api process', a),
    side('bare', 'starting process', b),
    0.8,
  );
  const [paySplit, bareSplit] = [cpuSplitLine(a, 2), cpuSplitLine(b, 2)];
  if (paySplit && bareSplit) result.notes.push(`CPU per acceptance across the machine, ms: Paygate ${paySplit}; bare ${bareSplit}`);
  // No worker polls this queue, so `workflow_started_at` (recorded by the workflow's first activity) stays empty
  // here. Every run was started all the same: mark them as the reconciler would on its first passes (200 orders
  // a pass, each a start Temporal answers "already started"), so that no later benchmark's jobs process spends
  // its rounds on those passes ((e) did: bench/PROFILE.md, round sixteen).
  const marked = await ctx.db.query(
    `UPDATE orders SET workflow_started_at = now() WHERE workflow_started_at IS NULL AND user_id = ANY($1::uuid[])`,
    [[warmupUser, ...users].map((u) => u.id)],
  );
  result.notes.push(
    `${marked.rowCount ?? 0} orders accepted here marked started afterwards, as the reconciler would (no worker runs them)`,
  );
  return result;
}

/** Orders for payment workflows started directly (as the api would after accepting them), round-robin over payers. */
async function insertBenchOrders(db: PgClient, userIds: string[], count: number, tag: string): Promise<BenchOrder[]> {
  const { rows } = await db.query<BenchOrder>(
    `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                         description, workflow_id, workflow_started_at)
     SELECT id, ($1::uuid[])[1 + (g % array_length($1::uuid[], 1))], $3 || '-' || id, 150000, 150000, 'KES', 'mobile_money',
            '{"provider": "mpesa", "phone": "+254712345678"}'::jsonb, 'bench payment', 'payment-' || id, now()
       FROM (SELECT g, gen_random_uuid() AS id FROM generate_series(1, $2::int) AS g) AS s
     RETURNING id, user_id`,
    [userIds, count, tag],
  );
  return rows;
}

/** An order the bench inserted: what its run's start needs of it. */
interface BenchOrder {
  id: string;
  user_id: string;
}

/** The order as the api knows it when it starts the run (insertBenchOrders's columns). */
const benchOrderFacts = (order: BenchOrder): OrderFacts => ({
  id: order.id,
  userId: order.user_id,
  method: 'mobile_money',
  status: 'pending',
  amountMinor: '150000',
  currency: 'KES',
  destination: { provider: 'mpesa', phone: '+254712345678' },
});

/** A worker on the work queue, as the worker process is started in production, with the `hello` baseline beside. */
function startBenchWorker(ctx: Ctx): Child {
  return track(
    spawnNode('worker', path.join(__dirname, 'worker.js'), {
      ...ctx.apiEnv,
      TEMPORAL_TASK_QUEUE: ctx.workQueue,
    }),
  );
}

const roundTimeoutMs = () => Math.max(60, 12 * settings.seconds) * 1000;

/** Start one workflow per business id on the work queue, and wait for each to end `completed`. */
function completedBatch<T>(
  ctx: Ctx,
  type: string,
  workflowId: (item: T) => string,
  start: (item: T) => { args: unknown[] } & Partial<Pick<WorkflowStartOptions, 'memo' | 'staticSummary' | 'typedSearchAttributes'>>,
  items: T[],
) {
  const temporal = ctx.temporal!;
  return completeAll(items.length, settings.connections, roundTimeoutMs(), async (i) => {
    const handle = await temporal.workflow.start(type, { workflowId: workflowId(items[i]), taskQueue: ctx.workQueue, ...start(items[i]) });
    return async () => ((await handle.result()) as PaymentResult | DepositResult).status === 'completed';
  });
}

/**
 * Start `count` payment workflows for orders of `payerIds` as the api starts them (`startPaymentWorkflow`: the same
 * input, search attributes, memo and summary), and wait for each to complete.
 */
async function paymentBatch(ctx: Ctx, payerIds: string[], count: number, tag: string): Promise<Round> {
  const input = paymentRunInput(loadConfig(ctx.apiEnv));
  const orders = await insertBenchOrders(ctx.db, payerIds, count, tag);
  return completedBatch(
    ctx,
    PAYMENT_WORKFLOW,
    (order) => paymentWorkflowId(order.id),
    (order) => ({
      args: [{ orderId: order.id, ...input } satisfies PaymentWorkflowInput],
      ...orderRunMetadata(benchOrderFacts(order), true),
    }),
    orders,
  );
}

async function helloBatch(ctx: Ctx, count: number): Promise<Round> {
  const temporal = ctx.temporal!;
  return completeAll(count, settings.connections, roundTimeoutMs(), async () => {
    const handle = await temporal.workflow.start('hello', {
      workflowId: `bench-hello-${randomUUID()}`,
      taskQueue: ctx.workQueue,
      args: ['bench'],
    });
    return async () => (await handle.result()) === 'hello, bench';
  });
}

/** Warm the worker up with hello workflows (this also waits for it to poll); their rate sizes the batches. */
async function warmWorker(ctx: Ctx, worker: Child): Promise<Round> {
  return Promise.race([
    helloBatch(ctx, 40),
    worker.exited.then(() => {
      throw new Error(`the worker exited; see ${worker.logFile}`);
    }),
  ]);
}

const batchSize = (warm: Round) => settings.cWorkflows ?? Math.max(50, Math.min(5000, Math.round(warm.rate * settings.seconds)));

async function benchCompletion(ctx: Ctx, payers: BenchUser[], warmupPayer: BenchUser): Promise<RateResult> {
  const cfg = loadConfig(ctx.apiEnv);
  const worker = startBenchWorker(ctx);
  const warmHello = await warmWorker(ctx, worker);
  const warmPay = await paymentBatch(ctx, [warmupPayer.id], 20, 'bench-c');
  // The same batch for both sides, sized so that the hello round lasts about BENCH_SECONDS. The warm-up's 40 hellos
  // take mostly one workflow's latency, not the worker's rate, so a second hello batch sized from them measures the
  // rate the rounds are sized from: otherwise a round lasts a fraction of BENCH_SECONDS and filling and draining the
  // pipeline, not throughput, sets its rate.
  const sizing = settings.cWorkflows === undefined ? await helloBatch(ctx, batchSize(warmHello)) : warmHello;
  const n = batchSize(sizing);
  progress(
    `  batches of ${n} workflows (warm-up: payments ${warmPay.rate.toFixed(1)}/s, hello ${warmHello.rate.toFixed(1)}/s, then ${sizing.rate.toFixed(1)}/s)`,
  );

  // Both sides saturate the machine's cores, so their rates are set by all the CPU a workflow costs: the split shows it.
  const groups = { worker: worker.proc.pid, api: ctx.apiPid, 'Temporal server': 'temporal', Postgres: 'postgres', bench: process.pid };
  const [a, b] = await interleave(
    settings.rounds,
    (i) => measuredAcross(worker.proc.pid, groups, () => paymentBatch(ctx, [payers[i].id], n, 'bench-c')),
    () => measuredAcross(worker.proc.pid, groups, () => helloBatch(ctx, n)),
  );
  const result = compare(
    'c',
    `payments completed (sandbox rail, callback after ${settings.callbackDelayMs} ms) vs hello workflows completed, same worker`,
    'workflows/s',
    side('Paygate', 'worker process', a),
    side('bare', 'worker process', b),
    0.7,
  );
  const [payCpu, helloCpu] = [result.paygate.cpuMsPerOp, result.bare.cpuMsPerOp];
  if (payCpu !== undefined && helloCpu !== undefined) {
    const cpuRatio = payCpu / helloCpu;
    result.targets.push({ name: 'worker CPU vs a hello', wanted: '<= 2.5x', limit: 2.5, actual: cpuRatio, met: cpuRatio <= 2.5 });
  }
  result.notes.push(
    `batches of ${n} workflows per round (each round stops after ${roundTimeoutMs() / 1000} s); latency is start to result`,
  );
  const [paySplit, helloSplit] = [cpuSplitLine(a), cpuSplitLine(b)];
  if (paySplit && helloSplit) {
    result.notes.push(`CPU per workflow across the machine, ms: Paygate ${paySplit}; bare ${helloSplit}`);
  }
  const { rows } = await ctx.db.query<{ missed: string }>(
    'SELECT count(*) AS missed FROM sandbox_transfers WHERE sends_callback AND callback_sent_at IS NULL',
  );
  if (Number(rows[0].missed) > 0) {
    result.notes.push(
      `Paygate: ${rows[0].missed} sandbox callbacks were not accepted; those payments waited for polling (PAYMENT_POLL_AFTER_MS=${cfg.payments.pollAfterMs})`,
    );
  }
  await worker.stop();
  return result;
}

/** Verified, funded payers made straight in the database: (i) needs a hundred, and none of them logs in. */
async function benchPayers(db: PgClient, count: number, label: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO users (id, email, password_hash, full_name, kyc_status)
     SELECT id, 'bench-' || $2 || '-' || id || '@example.com', 'not-a-login', 'Bench ' || $2, 'verified'
       FROM (SELECT gen_random_uuid() AS id FROM generate_series(1, $1::int)) AS s
     RETURNING id`,
    [count, label],
  );
  for (const { id } of rows) await fundBenchUser(db, id);
  return rows.map((r) => r.id);
}

/** One hot account against the same work spread over many, interleaved on the same worker: at least half the rate. */
async function hotVsSpread(
  worker: Child,
  id: string,
  title: string,
  unit: string,
  hot: () => Promise<Round>,
  spread: () => Promise<Round>,
): Promise<RateResult> {
  const [a, b] = await interleave(
    settings.rounds,
    () => measured(worker.proc.pid, hot),
    () => measured(worker.proc.pid, spread),
    ['hot', 'spread'],
  );
  return compare(id, title, unit, side('hot', 'worker process', a), side('spread', 'worker process', b), 0.5);
}

/**
 * (i) A hot merchant wallet: the same batch of payouts, all held from one wallet, against spread over a
 * hundred wallets. Every hold takes its wallet's row lock in \`accounts\`: one wallet must not serialise
 * the system.
 */
async function benchHotWallet(ctx: Ctx): Promise<RateResult> {
  const worker = startBenchWorker(ctx);
  const warm = await warmWorker(ctx, worker);
  // One hot wallet a round: a wallet paying out hundreds in minutes, round after round, is velocity that
  // monitoring (on, as by default) holds for review, and (i) measures the wallet's row lock, not that hold.
  const hot = await benchPayers(ctx.db, settings.rounds, 'hot');
  const spread = await benchPayers(ctx.db, 100, 'spread');
  await paymentBatch(ctx, spread, 20, 'bench-i-warm');
  const n = batchSize(warm);
  progress(`  batches of ${n} payouts (hello warm-up ${warm.rate.toFixed(1)}/s)`);
  let hotRound = 0;
  const result = await hotVsSpread(
    worker,
    'i',
    'payouts completed from one hot wallet vs the same number spread over 100 wallets, same worker',
    'payouts/s',
    () => paymentBatch(ctx, [hot[hotRound++ % hot.length]], n, 'bench-i-hot'),
    () => paymentBatch(ctx, spread, n, 'bench-i-spread'),
  );
  result.notes.push(`batches of ${n} payouts per round; latency is start to result`);
  await worker.stop();
  return result;
}

/** A process's resident set size in MB, from /proc (undefined where there is none). */
function rssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Sample `pid`'s RSS every 200 ms until stopped; the peak seen. */
function rssPeak(pid: number | undefined): () => number {
  let peak = rssMb(pid) ?? 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid) ?? 0);
  }, 200);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rssMb(pid) ?? 0);
  };
}

/** Start to end of a set of orders, and their own start-to-outcome latencies (the database's clock). */
async function ordersRound(db: PgClient, where: string, params: unknown[], startedAt: Date, count: number): Promise<Round> {
  const { rows } = await db.query<{ ms: string; done: boolean; last: Date }>(
    `SELECT extract(epoch FROM (updated_at - created_at)) * 1000 AS ms, status = 'completed' AS done, updated_at AS last
       FROM orders WHERE ${where}`,
    params,
  );
  const done = rows.filter((r) => r.done);
  const last = Math.max(...rows.map((r) => r.last.getTime()));
  const seconds = (last - startedAt.getTime()) / 1000;
  const latencies = done.map((r) => Number(r.ms));
  return {
    rate: done.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ok: done.length,
    failed: count - done.length,
    seconds,
  };
}

async function untilDone(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * (p) A bulk payout of BENCH_BATCH_ITEMS items against the same payouts started one by one, on one api and one
 * worker polling the same queue: payouts completed per second, and the worker's peak RSS during the batch
 * against its RSS warm and idle. The batch keeps BENCH_BATCH_CONCURRENCY items in flight (its
 * BATCH_CONCURRENCY_MOBILE_MONEY; the sandbox rail has no rate limit), by default the one-by-one client's
 * BENCH_CONNECTIONS requests in flight.
 */
async function benchBulkPayouts(ctx: Ctx): Promise<RateResult> {
  const items = settings.batchItems;
  const concurrency = settings.batchConcurrency ?? settings.connections;
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const env = {
    ...ctx.apiEnv,
    PORT: String(port),
    PUBLIC_BASE_URL: apiUrl,
    TEMPORAL_TASK_QUEUE: ctx.workQueue,
    BATCH_CONCURRENCY_MOBILE_MONEY: String(concurrency),
    // Thousands of payouts from one payer to one phone in minutes are what monitoring holds for review
    // (docs/monitoring.md): off for both sides, as in the fault suite.
    MONITORING_ENABLED: 'false',
    // A batch of KES 1,000,000 waits for a second staff member's approval at the default threshold
    // (docs/access.md#four-eyes); the approval is not what is measured, so the threshold is above the batch.
    FOUR_EYES_ABOVE_KES: '100000000',
  };
  const api = track(spawnNode('api-p', path.resolve(__dirname, '..', 'api', 'server.js'), env));
  await waitForHttp(`${apiUrl}/healthz`, api);
  const worker = track(spawnNode('worker-p', path.join(__dirname, 'worker.js'), env));
  await warmWorker(ctx, worker);
  const [batchPayer, onePayer, warmPayer] = await Promise.all(
    ['p-batch', 'p-one', 'p-warm'].map((label) => newVerifiedUser(apiUrl, ctx.db, label)),
  );
  const body = (i: number) => ({ ...PAYMENT_BODY, amount: '100.00', description: `bench payout ${i}` });
  const postBatch = async (user: BenchUser, n: number) => {
    const res = await postJson(
      `${apiUrl}/api/v1/payouts/batches`,
      { items: Array.from({ length: n }, (_, i) => ({ ...body(i), reference: `BENCH-${i + 1}` })) },
      { authorization: `Bearer ${user.token}`, 'idempotency-key': randomUUID() },
    );
    if (res.status !== 202) throw new Error(`batch refused: ${res.status} ${JSON.stringify(res.json).slice(0, 500)}`);
    return (res.json as { batch_id: string }).batch_id;
  };
  const batchEnded = (batchId: string) => async () => {
    const { rows } = await ctx.db.query<{ status: string }>('SELECT status FROM payout_batches WHERE id = $1', [batchId]);
    return rows[0]?.status === 'completed' || rows[0]?.status === 'cancelled';
  };
  const oneByOne = async (user: BenchUser, n: number) => {
    await completeAll(n, settings.connections, 30 * 60_000, async (i) => {
      const res = await postJson(`${apiUrl}/api/v1/payments/initiate`, body(i), {
        authorization: `Bearer ${user.token}`,
        'idempotency-key': randomUUID(),
      });
      if (res.status !== 202) throw new Error(`initiate refused: ${res.status}`);
      return () => Promise.resolve(true);
    });
  };
  const allSettled = (userId: string, n: number) => async () => {
    const { rows } = await ctx.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM orders WHERE user_id = $1 AND status IN ('completed', 'failed', 'rejected', 'reversed')`,
      [userId],
    );
    return Number(rows[0].n) >= n;
  };
  const timeoutMs = Math.max(600_000, items * 200);

  // Warm-up: a small batch and as many payouts one by one.
  progress('  warm-up: 50 items as a batch and 50 one by one');
  const warmBatch = await postBatch(warmPayer, 50);
  await untilDone('the warm-up batch', batchEnded(warmBatch), 120_000);
  await oneByOne(warmPayer, 50);
  await untilDone('the warm-up payouts', allSettled(warmPayer.id, 100), 120_000);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const idle = rssMb(worker.proc.pid) ?? 0;

  progress(`  a batch of ${items} payouts, ${concurrency} in flight (worker idle RSS ${fmt(idle, 0)} MB)`);
  const peakOf = rssPeak(worker.proc.pid);
  const cpuBefore = processCpuMs(worker.proc.pid);
  const batchStarted = new Date();
  const batchId = await postBatch(batchPayer, items);
  await untilDone('the batch', batchEnded(batchId), timeoutMs);
  const peak = peakOf();
  const batchCpu = processCpuMs(worker.proc.pid);
  const batchRound = await ordersRound(ctx.db, 'payout_batch_id = $1', [batchId], batchStarted, items);
  if (cpuBefore !== undefined && batchCpu !== undefined && batchRound.ok > 0)
    batchRound.cpuMsPerOp = (batchCpu - cpuBefore) / batchRound.ok;
  progress(`  batch: ${fmt(batchRound.rate)} payouts/s, worker peak RSS ${fmt(peak, 0)} MB`);

  progress(`  the same ${items} payouts one by one, ${settings.connections} requests in flight`);
  const onePeakOf = rssPeak(worker.proc.pid);
  const oneStarted = new Date();
  const oneRound = await measured(worker.proc.pid, async () => {
    await oneByOne(onePayer, items);
    await untilDone('the payouts one by one', allSettled(onePayer.id, items), timeoutMs);
    return ordersRound(ctx.db, 'user_id = $1', [onePayer.id], oneStarted, items);
  });
  const onePeak = onePeakOf();
  progress(`  one by one: ${fmt(oneRound.rate)} payouts/s, worker peak RSS ${fmt(onePeak, 0)} MB`);

  const result = compare(
    'p',
    `payouts completed by one batch of ${items} items vs the same payouts started one by one, sandbox rail, same api and worker`,
    'payouts/s',
    side('batch', 'worker process', [batchRound]),
    side('one by one', 'worker process', [oneRound]),
    0.9,
  );
  const rssLimit = 1.2 * idle + 200;
  result.targets.push({
    name: 'worker peak RSS (MB) during the batch',
    wanted: `<= 1.2x idle + 200 MB (${fmt(rssLimit, 0)})`,
    limit: rssLimit,
    actual: peak,
    met: peak <= rssLimit,
  });
  result.notes.push(
    `one round each (${items} payouts a side); the batch ran ${concurrency} items in flight (BATCH_CONCURRENCY_MOBILE_MONEY), the one-by-one client ${settings.connections} initiate requests in flight`,
    `worker RSS: idle ${fmt(idle, 0)} MB, peak ${fmt(peak, 0)} MB during the batch, ${fmt(onePeak, 0)} MB during the one-by-one payouts`,
    'latency is each order from its creation to its outcome; the rate is payouts completed over first request to last outcome',
    'transaction monitoring off for both sides (thousands of payouts from one payer to one phone would be held for review)',
  );
  await worker.stop();
  await api.stop();
  return result;
}

/**
 * (j) Money in as fast as money out: STK Push deposits (sandbox, callback after BENCH_CALLBACK_DELAY_MS)
 * credited, against payments completed on the same api and worker.
 */
async function benchDepositCredits(ctx: Ctx): Promise<RateResult> {
  const cfg = loadConfig(ctx.apiEnv);
  const worker = startBenchWorker(ctx);
  const warm = await warmWorker(ctx, worker);
  // A payer and a depositor a round, as in (i): one customer's hundreds of movements in minutes, round after
  // round, are velocity that monitoring holds for review.
  const payers = await benchPayers(ctx.db, settings.rounds + 1, 'payments');
  const depositors = await benchPayers(ctx.db, settings.rounds + 1, 'deposits');
  let round = 0;
  const [payer, depositor] = [payers[0], depositors[0]];
  const deposits = async (count: number, by = depositor): Promise<Round> => {
    const { rows } = await ctx.db.query<{ id: string }>(
      `INSERT INTO deposits (user_id, channel, rail, currency, amount_minor, status, payer_phone)
       SELECT $1, 'mpesa_stk', 'sandbox', 'KES', 200000, 'pending', '+254712345678' FROM generate_series(1, $2::int)
       RETURNING id`,
      [by, count],
    );
    return completedBatch(
      ctx,
      DEPOSIT_WORKFLOW,
      depositWorkflowId,
      (depositId) => depositRunStart(depositId, cfg),
      rows.map((r) => r.id),
    );
  };
  await deposits(20);
  await paymentBatch(ctx, [payer], 20, 'bench-j-warm');
  const n = batchSize(warm);
  progress(`  batches of ${n} deposits and payments (hello warm-up ${warm.rate.toFixed(1)}/s)`);
  const [a, b] = await interleave(
    settings.rounds,
    () => measured(worker.proc.pid, () => deposits(n, depositors[1 + (round % settings.rounds)])),
    () => measured(worker.proc.pid, () => paymentBatch(ctx, [payers[1 + (round++ % settings.rounds)]], n, 'bench-j')),
    ['deposits', 'payments'],
  );
  const result = compare(
    'j',
    `STK Push deposits credited (sandbox, callback after ${settings.callbackDelayMs} ms) vs payments completed, same api and worker`,
    'workflows/s',
    side('deposits', 'worker process', a),
    side('payments', 'worker process', b),
    0.9,
  );
  const { rows } = await ctx.db.query<{ credited: string }>(
    `SELECT count(*) AS credited FROM deposits WHERE user_id = $1 AND status = 'completed'`,
    [depositor],
  );
  result.notes.push(`batches of ${n} per round; ${rows[0].credited} deposits credited in all (warm-up included)`);
  await worker.stop();
  return result;
}

/**
 * (k)'s user: `count` completed payments, each with the hold it took from the wallet in the ledger (a wallet
 * debit and a hold credit), so that both the payment history and the wallet statement hold `count` rows.
 * Written straight into the tables with the triggers off for this session (the account balance, webhook
 * events and the deferred balance check are not what (k) measures); the entries still balance.
 */
async function seedDeepHistory(db: PgClient, userId: string, count: number): Promise<void> {
  await db.query('SET session_replication_role = replica');
  try {
    await db.query(
      `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                           description, reference, status, rail_reference, workflow_id, workflow_started_at,
                           created_at, updated_at)
       SELECT id, $1, 'deep-' || g, 150000, 150000, 'KES', 'mobile_money',
              '{"provider": "mpesa", "phone": "+254712345678"}'::jsonb, 'seeded order ' || g, 'INV-' || g, 'completed',
              'SBX-DEEP-' || g, 'payment-' || id, t, t, t
         FROM (SELECT g, paygate_uuid_v7() AS id, now() - interval '60 days' + g * interval '1 second' AS t
                 FROM generate_series(1, $2::int) AS g) AS s`,
      [userId, count],
    );
    await db.query('ANALYZE orders');
    await db.query(
      `INSERT INTO ledger_transactions (id, order_id, kind, currency, created_at)
       SELECT paygate_uuid_v7(), id, 'hold', 'KES', created_at FROM orders WHERE user_id = $1 ORDER BY created_at`,
      [userId],
    );
    // Fresh statistics, or the planner joins a million rows it believes to be one.
    await db.query('ANALYZE ledger_transactions');
    await db.query(
      `INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor, balance_after_minor, created_at)
       SELECT t.id, e.account, 'KES', e.direction, 150000, e.after, t.created_at
         FROM (SELECT t.id, t.order_id, t.created_at, row_number() OVER (ORDER BY t.created_at) AS n
                 FROM ledger_transactions t JOIN orders o ON o.id = t.order_id
                WHERE o.user_id = $1 AND t.kind = 'hold') AS t
        CROSS JOIN LATERAL (VALUES ('wallet:' || $1 || ':KES', 'debit', $2::numeric - t.n * 150000),
                                   ('hold:' || t.order_id, 'credit', 150000::numeric)) AS e (account, direction, after)
        ORDER BY t.n, e.direction DESC`,
      [userId, '100000000000000'],
    );
  } finally {
    await db.query('RESET session_replication_role');
  }
  await db.query('ANALYZE ledger_entries');
}

/**
 * (k) Keyset pagination must cost the same on page 500 as on page 1: the payment history and the wallet
 * statement of a user with BENCH_DEEP_ROWS rows each, read at the cursor of page 500 (walked to through the
 * API) against page 1. Each figure is the time per request, 1 / throughput at BENCH_CONNECTIONS.
 */
async function benchDeepPages(ctx: Ctx): Promise<FigureResult> {
  const user = await newVerifiedUser(ctx.apiUrl, ctx.db, 'deep');
  progress(`  seeding ${settings.deepRows} payments and wallet entries`);
  const seededAt = performance.now();
  await seedDeepHistory(ctx.db, user.id, settings.deepRows);
  const seedSeconds = (performance.now() - seededAt) / 1000;
  const auth = { authorization: `Bearer ${user.token}` };
  const limit = 100;
  const endpoints = [
    { name: 'history', path: '/api/v1/payments/history' },
    { name: 'statement', path: '/api/v1/wallets/KES/transactions' },
  ];
  const measuredSides: Figure[] = [];
  const targets: Target[] = [];
  const notes: string[] = [`seeding ${settings.deepRows} payments with their ledger entries took ${fmt(seedSeconds)} s (not measured)`];
  for (const endpoint of endpoints) {
    // Walk to page `deepPages` the way a client does: each page's next_cursor.
    let cursor: string | null = null;
    for (let page = 1; page < settings.deepPages; page++) {
      const res = await fetch(`${ctx.apiUrl}${endpoint.path}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        headers: auth,
      });
      if (res.status !== 200) throw new Error(`${endpoint.path} page ${page}: ${res.status} ${await res.text()}`);
      cursor = ((await res.json()) as { next_cursor: string | null }).next_cursor;
      if (!cursor) throw new Error(`${endpoint.path} ran out of pages at page ${page}`);
    }
    const first = `${endpoint.path}?limit=${limit}`;
    const deep = `${first}&cursor=${encodeURIComponent(cursor!)}`;
    const read = (url: string) => (seconds: number) => cannon({ url: `${ctx.apiUrl}${url}`, duration: seconds, headers: auth });
    if (settings.warmupSeconds > 0) {
      await read(deep)(settings.warmupSeconds);
      await read(first)(settings.warmupSeconds);
    }
    const [d, f] = await interleave(
      settings.rounds,
      () => measured(ctx.apiPid, () => read(deep)(settings.seconds)),
      () => measured(ctx.apiPid, () => read(first)(settings.seconds)),
      [`p${settings.deepPages}`, 'p1'],
    );
    const deepSide = side(`${endpoint.name} page ${settings.deepPages}`, 'api process', d);
    const firstSide = side(`${endpoint.name} page 1`, 'api process', f);
    const ratio = firstSide.rate / deepSide.rate;
    for (const s of [deepSide, firstSide]) {
      measuredSides.push({
        label: s.label,
        value: 1000 / s.rate,
        unit: 'ms per request',
        digits: 3,
        about: `${fmt(s.rate)} req/s, p50 ${fmt(s.p50)} ms, p99 ${fmt(s.p99)} ms, ${limit} rows a page; rounds ${s.rounds.map((r) => fmt(r.rate)).join(', ')}`,
      });
      const failed = s.rounds.reduce((n, r) => n + r.failed, 0);
      if (failed > 0) notes.push(`${s.label}: ${failed} failed requests over all rounds (not counted)`);
    }
    targets.push({ name: `${endpoint.name} time ratio`, wanted: '<= 1.2x', limit: 1.2, actual: ratio, met: ratio <= 1.2 });
  }
  return {
    kind: 'figure',
    id: 'k',
    title: `GET /payments/history and GET /wallets/KES/transactions at page ${settings.deepPages} (by cursor, ${limit} a page) vs page 1, for a user with ${settings.deepRows} rows`,
    ratioOf: `page ${settings.deepPages} / page 1 ms per request, history`,
    ratio: targets[0].actual,
    sides: measuredSides,
    targets,
    notes,
    detail: { rows: settings.deepRows, pages: settings.deepPages, limit },
  };
}

/** (l)'s ads sell USDT at KES 130.00; each trade buys KES 100.00 of it. */
const P2P_PRICE_MINOR = 13000n;
const P2P_TRADE_KES_MINOR = 10000n;

/** A P2P ad posted through the API by a verified seller whose USDT wallet funds it. */
async function postBenchAd(ctx: Ctx, label: string): Promise<{ adId: string; ownerId: string }> {
  const seller = await newVerifiedUser(ctx.apiUrl, ctx.db, label);
  await fundBenchUser(ctx.db, seller.id, 'USDT');
  const res = await postJson(
    `${ctx.apiUrl}/api/v1/p2p/ads`,
    {
      side: 'sell',
      asset: 'USDT',
      fiat: 'KES',
      price_type: 'fixed',
      price: formatAmount(P2P_PRICE_MINOR, 'KES'),
      total_amount: '1000000.000000',
      min_order: '100.00',
      max_order: '13000.00',
      payment_methods: ['mpesa'],
    },
    { authorization: `Bearer ${seller.token}`, 'idempotency-key': randomUUID() },
  );
  if (res.status !== 201) throw new Error(`posting an ad failed: ${res.status} ${JSON.stringify(res.json)}`);
  return { adId: (res.json as { ad_id: string }).ad_id, ownerId: seller.id };
}

/**
 * Trades of 100 KES against `ads` (round-robin), taken by `buyerIds` (round-robin): the order and its trade as
 * the api records them at initiate, then the payment workflow of each started as a trade and awaited.
 */
async function tradeBatch(
  ctx: Ctx,
  ads: { adId: string; ownerId: string }[],
  buyerIds: string[],
  count: number,
  tag: string,
): Promise<Round> {
  const asset = assetForFiatMinor(P2P_TRADE_KES_MINOR, P2P_PRICE_MINOR, 'USDT');
  const { rows } = await ctx.db.query<{ id: string }>(
    `WITH o AS (
       INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                           description, workflow_id, workflow_started_at)
       SELECT id, ($1::uuid[])[1 + (g % array_length($1::uuid[], 1))], $3 || '-' || id, $4::numeric, $4::numeric, 'KES', 'p2p',
              jsonb_build_object('ad_id', ($2::uuid[])[1 + (g % array_length($2::uuid[], 1))], 'payment_method', 'mpesa'),
              'bench trade', 'trade-' || id, now()
         FROM (SELECT g, paygate_uuid_v7() AS id FROM generate_series(1, $5::int) AS g) AS s
       RETURNING id, user_id, destination
     )
     INSERT INTO p2p_trades (order_id, ad_id, maker_id, taker_id, seller_id, buyer_id, asset, asset_amount_minor, price_minor, payment_method)
     SELECT o.id, ad.id, ad.owner_id, o.user_id, ad.owner_id, o.user_id, 'USDT', $6::numeric, $7::numeric, 'mpesa'
       FROM o JOIN p2p_ads ad ON ad.id = (o.destination ->> 'ad_id')::uuid
     RETURNING order_id AS id`,
    [buyerIds, ads.map((a) => a.adId), tag, P2P_TRADE_KES_MINOR.toString(), count, asset.toString(), P2P_PRICE_MINOR.toString()],
  );
  return completedBatch(
    ctx,
    TRADE_WORKFLOW,
    tradeWorkflowId,
    (orderId) => ({ args: [{ orderId } satisfies TradeWorkflowInput] }),
    rows.map((r) => r.id),
  );
}

/**
 * (l) A popular merchant's ad must not serialise the market: trades settled against one hot ad (its row and
 * escrow locked by every settlement) against the same trades spread over 100 ads of 100 sellers, same buyers
 * and worker.
 */
async function benchHotAd(ctx: Ctx): Promise<RateResult> {
  const worker = startBenchWorker(ctx);
  const warm = await warmWorker(ctx, worker);
  const hot = [await postBenchAd(ctx, 'l-hot')];
  const spread: { adId: string; ownerId: string }[] = [];
  await pool(
    Array.from({ length: 100 }, (_, i) => i),
    4,
    async (i) => {
      spread.push(await postBenchAd(ctx, `l-spread${i}`));
    },
  );
  const buyers = await benchPayers(ctx.db, 100, 'l-buyer');
  await tradeBatch(ctx, spread, buyers, 20, 'bench-l-warm');
  await tradeBatch(ctx, hot, buyers, 20, 'bench-l-warm');
  const n = batchSize(warm);
  progress(`  batches of ${n} trades (hello warm-up ${warm.rate.toFixed(1)}/s)`);
  const result = await hotVsSpread(
    worker,
    'l',
    'P2P trades settled against one hot ad vs the same number spread over 100 ads, same buyers and worker',
    'trades/s',
    () => tradeBatch(ctx, hot, buyers, n, 'bench-l-hot'),
    () => tradeBatch(ctx, spread, buyers, n, 'bench-l-spread'),
  );
  const { rows } = await ctx.db.query<{ status: string; n: string }>(
    `SELECT status, count(*) AS n FROM orders WHERE method = 'p2p' AND idempotency_key LIKE 'bench-l-%' GROUP BY status ORDER BY status`,
  );
  result.notes.push(`batches of ${n} trades of 100 KES per round; orders by status: ${rows.map((r) => `${r.status} ${r.n}`).join(', ')}`);
  await worker.stop();
  return result;
}

// Loaded when used, after main() has set LOG_LEVEL: their imports create loggers (and load ccxt).
const discovery = () => import('./discovery');
const compliance = () => import('./compliance');

async function benchExchangeRefreshes(): Promise<FigureResult> {
  const { benchExchangeRefresh } = await discovery();
  const r = await benchExchangeRefresh(settings.databaseUrl, settings.refreshRounds);
  return figures(
    'd',
    `exchange catalogue refresh, probe off (${r.rows} exchanges) vs bare pg multi-row upsert of the same rows`,
    [
      {
        label: 'Paygate',
        value: r.paygateMs,
        unit: 'ms',
        digits: 2,
        about: `median of ${r.rounds} refreshes (one transaction: lock, upsert, deactivation, refresh record)`,
      },
      { label: 'bare', value: r.bareMs, unit: 'ms', digits: 2, about: `median of ${r.rounds} upserts` },
    ],
    r.ratio,
    'time ratio',
    2,
    r,
  );
}

/** (a)'s Paygate measurement, quiet rounds interleaved with rounds under background catalogue refreshes. */
async function benchOrderReadUnderRefreshes(ctx: Ctx, user: BenchUser, ids: string[]): Promise<RateResult> {
  const { startBackgroundRefreshes } = await discovery();
  const everyMs = 1000;
  const read = orderReads(ctx, user, ids);
  let running: BackgroundRefreshes | undefined;
  teardowns.push({ name: 'background refreshes', run: async () => running?.stop() });
  const refreshes: number[] = [];
  // Where a read's CPU goes across the machine, quiet and busy: what the refreshes take from the reads.
  const groups = { api: ctx.apiPid, Postgres: 'postgres', Redis: 'redis-server', 'Temporal server': 'temporal', bench: process.pid };
  /** Share of one core the jobs process used during each busy round, when it can be read. */
  const jobsCpu: number[] = [];
  const busy = async (): Promise<Round> => {
    running = await startBackgroundRefreshes({
      databaseUrl: settings.databaseUrl,
      redisUrl: settings.redisUrl,
      temporalAddress: ctx.temporalAddress,
      everyMs,
    });
    try {
      // Let the jobs process settle into its schedule: its boot (loading ccxt and describing every exchange
      // once, about a second of CPU) is not what is measured, so the round starts after both catalogues
      // have been refreshed once.
      await running.refreshed(2);
      const [jobsPid] = childPids(path.join('workers', 'jobs.js'));
      const before = processCpuMs(jobsPid);
      const round = await measuredAcross(ctx.apiPid, { ...groups, jobs: jobsPid }, () => read(settings.seconds));
      const after = processCpuMs(jobsPid);
      if (before !== undefined && after !== undefined) jobsCpu.push((after - before) / (round.seconds * 1000));
      return round;
    } finally {
      const stopping = running;
      running = undefined;
      refreshes.push(await stopping.stop());
    }
  };
  if (settings.warmupSeconds > 0) await read(settings.warmupSeconds);
  const [quiet, loaded] = await interleave(settings.rounds, () => measuredAcross(ctx.apiPid, groups, () => read(settings.seconds)), busy, [
    'quiet',
    'busy',
  ]);
  const result = compare(
    'e',
    `GET /api/v1/payments/orders/{id} (as in (a)) while the jobs process refreshes both catalogues every ${everyMs / 1000} s vs quiet`,
    'req/s',
    side('busy', 'api process', loaded),
    side('quiet', 'api process', quiet),
    0.9,
  );
  const total = refreshes.reduce((n, r) => n + r, 0);
  result.notes.push(
    `${total} catalogue refreshes ran with the busy rounds (${refreshes.join(', ')}; probe off, every ${everyMs / 1000} s; ` +
      'the jobs process started before each busy round, which began once both catalogues had been refreshed, and stopped after it)',
  );
  if (jobsCpu.length > 0) {
    result.notes.push(`the jobs process used ${fmt(100 * median(jobsCpu), 0)}% of one core during the busy rounds (median of rounds)`);
  }
  const [busySplit, quietSplit] = [cpuSplitLine(loaded, 3), cpuSplitLine(quiet, 3)];
  if (busySplit && quietSplit) result.notes.push(`CPU per read across the machine, ms: busy ${busySplit}; quiet ${quietSplit}`);
  if (total === 0) result.notes.push('no refresh ran: the busy rounds were not busy');
  return result;
}

/** The database the compliance benchmarks use next to the main one: same server, name with a suffix. */
function siblingDatabase(url: string, suffix: string): string {
  const target = new URL(url);
  target.pathname = `${target.pathname}_${suffix}`;
  return target.toString();
}

async function benchReport(temporalAddress: string): Promise<FigureResult> {
  const { benchComplianceReport } = await compliance();
  let seededSeconds: number | undefined;
  const r = await benchComplianceReport({
    temporalAddress,
    databaseUrl: siblingDatabase(settings.databaseUrl, 'report'),
    redisUrl: settings.redisUrl,
    rounds: settings.rounds,
    payments: settings.reportPayments,
    log: (line) => {
      progress(`  ${line}`);
      const seeded = /seeded in ([\d.]+) s/.exec(line);
      if (seeded) seededSeconds = Number(seeded[1]);
    },
  });
  const result = figures(
    'f',
    `compliance report over ${r.payments} seeded payments vs the same SQL run directly with pg`,
    [
      {
        label: 'Paygate',
        value: r.reportSeconds,
        unit: 's',
        digits: 2,
        about: `median of ${settings.rounds} GET /compliance/report?refresh=true (workflow, six section activities)`,
      },
      { label: 'bare', value: r.sqlSeconds, unit: 's', digits: 2, about: `median of ${settings.rounds} runs, sections in parallel` },
    ],
    r.ratio,
    'time ratio',
    2,
    r,
  );
  if (seededSeconds !== undefined) result.notes.push(`seeding ${r.payments} payments took ${fmt(seededSeconds)} s (not measured)`);
  return result;
}

async function benchScreening(temporalAddress: string): Promise<FigureResult> {
  const { benchScreeningLatency } = await compliance();
  const s = await benchScreeningLatency({
    temporalAddress,
    databaseUrl: siblingDatabase(settings.databaseUrl, 'screening'),
    redisUrl: settings.redisUrl,
    rounds: settings.rounds,
    log: (line) => progress(`  ${line}`),
  });
  const payments = `${s.paymentsPerRound} payments x ${settings.rounds} rounds`;
  return figures(
    'g',
    `payment initiate-to-completed p50 with ${s.entries} blocklist entries vs an empty blocklist`,
    [
      { label: 'loaded', value: s.loadedP50Ms, unit: 'ms p50', digits: 1, about: `p99 ${fmt(s.loadedP99Ms)} ms, ${payments}` },
      { label: 'empty', value: s.emptyP50Ms, unit: 'ms p50', digits: 1, about: `p99 ${fmt(s.emptyP99Ms)} ms, ${payments}` },
    ],
    s.ratio,
    'p50 ratio',
    1.1,
    s,
  );
}

async function benchMonitoringLatency(temporalAddress: string): Promise<FigureResult> {
  const { benchMonitoringLatency: measure } = await compliance();
  const s = await measure({
    temporalAddress,
    databaseUrl: siblingDatabase(settings.databaseUrl, 'monitoring_latency'),
    redisUrl: settings.redisUrl,
    rounds: settings.rounds,
    log: (line) => progress(`  ${line}`),
  });
  const payments = `${s.paymentsPerRound} payments x ${settings.rounds} rounds`;
  const result = figures(
    'n',
    'payment initiate-to-completed p50 with monitoring on (MONITORING_ENABLED=true) vs off',
    [
      { label: 'on', value: s.onP50Ms, unit: 'ms p50', digits: 1, about: `p99 ${fmt(s.onP99Ms)} ms, ${payments}` },
      { label: 'off', value: s.offP50Ms, unit: 'ms p50', digits: 1, about: `p99 ${fmt(s.offP99Ms)} ms, ${payments}` },
    ],
    s.ratio,
    'p50 ratio',
    1.1,
    s,
  );
  result.notes.push(
    `evaluations stored: ${s.onEvaluations} with monitoring on, ${s.offEvaluations} with it off (warm-up included); each payer makes at most 10 payouts`,
  );
  return result;
}

async function benchScreeningScale(): Promise<FigureResult> {
  const { benchScreeningScale: measure } = await import('./screening-scale');
  const s = await measure({ rounds: settings.rounds, log: (line) => progress(`  ${line}`) });
  return figures(
    'm',
    `screening one name p50 against ${s.large} listed names vs against ${s.small}`,
    [
      {
        label: `${s.large} names`,
        value: s.largeP50Us,
        unit: 'µs p50',
        digits: 0,
        about: `p99 ${fmt(s.largeP99Us, 0)} µs, ${s.probes} names x ${settings.rounds} rounds; ${fmt(s.largeMatches, 2)} names matched per screening; floor ${fmt(s.largeFloorP50Us, 0)} µs`,
      },
      {
        label: `${s.small} names`,
        value: s.smallP50Us,
        unit: 'µs p50',
        digits: 0,
        about: `p99 ${fmt(s.smallP99Us, 0)} µs; ${fmt(s.smallMatches, 2)} names matched per screening; floor ${fmt(s.smallFloorP50Us, 0)} µs, floor ratio ${fmt(s.floorRatio, 2)}`,
      },
    ],
    s.ratio,
    'p50 ratio',
    1.5,
    s,
  );
}

async function benchMonitoring(): Promise<FigureResult> {
  const url = siblingDatabase(settings.databaseUrl, 'monitoring');
  const reuse = settings.keepMonitoring && (await databaseExists(url));
  progress(`  database ${url}: ${reuse ? 'kept from an earlier run, migrating' : 'recreating and migrating'}`);
  if (!reuse) await recreateDatabase(url);
  await migrateUp(url);
  const { benchMonitoringEvaluations } = await import('./monitoring');
  const r = await benchMonitoringEvaluations({
    databaseUrl: url,
    seconds: settings.seconds,
    rounds: settings.rounds,
    concurrency: settings.connections,
    reuse,
    log: (line) => progress(`  ${line}`),
  });
  return {
    kind: 'figure',
    id: 'o',
    title: `monitoring evaluations per second over ${r.movements} stored movements vs a bare indexed read of the customer`,
    ratioOf: 'evaluations / bare reads',
    ratio: r.ratio,
    sides: [
      {
        label: 'paygate',
        value: r.evaluationsPerSecond,
        unit: 'evals/s',
        digits: 0,
        about: `history windows read in SQL + rules, concurrency ${r.concurrency}; p50 ${fmt(r.evaluationP50Ms, 2)} ms, p99 ${fmt(r.evaluationP99Ms, 2)} ms`,
      },
      { label: 'bare', value: r.bareReadsPerSecond, unit: 'reads/s', digits: 0, about: 'SELECT id FROM users WHERE id = $1, same pool' },
    ],
    targets: [
      { name: 'evaluations/s', wanted: '>= 2000', limit: 2000, actual: r.evaluationsPerSecond, met: r.evaluationsPerSecond >= 2000 },
    ],
    notes: [
      `${r.customers} customers, ${r.movements} movements ${r.reused ? 'kept from an earlier run (BENCH_KEEP_MONITORING)' : `loaded in ${fmt(r.loadSeconds, 0)} s`}`,
      `SQL aggregates equal to the labelled test's in-memory ones on ${r.checked - r.mismatches} of ${r.checked} movements`,
    ],
    detail: r,
  };
}

async function benchParkedAppeals(temporalAddress: string): Promise<FigureResult> {
  const child = spawnNode(
    'appeals',
    path.join(__dirname, 'appeals.js'),
    {
      ...process.env,
      TEMPORAL_ADDRESS: temporalAddress,
      BENCH_APPEALS: String(settings.appeals),
    },
    ['--expose-gc'],
  );
  await child.exited;
  if (child.proc.exitCode !== 0) throw new Error(`the appeals benchmark failed:\n${tailOf(child.logFile)}`);
  const lines = fs.readFileSync(child.logFile, 'utf8').trim().split('\n');
  const r = JSON.parse(lines[lines.length - 1]) as ParkedAppealsResult;
  const MB = 1024 * 1024;
  const perAppealMb = r.rssPerAppealBytes / MB;
  const ratio = r.parkedRssBytes / r.idleRssBytes;
  return {
    kind: 'figure',
    id: 'h',
    title: `Temporal worker RSS with ${r.count} parked appeal workflows vs the same worker warm and idle (maxCachedWorkflows ${r.maxCachedWorkflows})`,
    ratioOf: 'parked / idle RSS',
    ratio,
    sides: [
      { label: 'parked', value: r.parkedRssBytes / MB, unit: 'MB RSS', digits: 1, about: `${r.count} appeals waiting on their SLA timer` },
      { label: 'idle', value: r.idleRssBytes / MB, unit: 'MB RSS', digits: 1, about: 'the worker after one warm-up appeal' },
    ],
    targets: [{ name: 'MB per parked appeal', wanted: '<= 1', limit: 1, actual: perAppealMb, met: perAppealMb <= 1 }],
    notes: [`growth per parked appeal: ${fmt(perAppealMb, 3)} MB RSS, ${fmt(r.heapPerAppealBytes / MB, 3)} MB heap`],
    detail: r,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/** A ratio to two decimals, or three when two would not show on which side of its target's bound it is. */
const fmtRatio = (n: number, limit?: number) => fmt(n, limit !== undefined && fmt(n, 2) === fmt(limit, 2) && n !== limit ? 3 : 2);

function print(results: BenchResult[], machine: Record<string, unknown>, wallSeconds: number): void {
  say('');
  say('Paygate benchmarks: Paygate vs bare baseline, interleaved A/B rounds, median of rounds');
  say(`machine: ${String(machine.cores)} cores (${String(machine.cpu)}), Node ${String(machine.node)}, ${String(machine.platform)}`);
  say(
    `settings: ${settings.rounds} rounds x ${settings.seconds} s, ${settings.connections} connections/concurrency, warm-up ${settings.warmupSeconds} s`,
  );
  for (const r of results) {
    say('');
    say(`(${r.id}) ${r.title}`);
    const ratio = fmtRatio(r.ratio, r.targets[0]?.limit);
    if (r.kind === 'rate') {
      for (const s of [r.paygate, r.bare]) {
        say(
          `    ${s.label.padEnd(8)} ${fmt(s.rate).padStart(9)} ${r.unit.padEnd(11)} p50 ${fmt(s.p50).padStart(7)} ms  p99 ${fmt(s.p99).padStart(7)} ms` +
            `   rounds: ${s.rounds.map((x) => fmt(x.rate)).join(', ')}`,
        );
      }
      say(`    ratio ${ratio} (${r.ratioOf}); p99 ${fmt(r.p99Ratio, 2)}x ${r.bare.label}`);
      const cpu = [r.paygate, r.bare].filter((s) => s.cpuMsPerOp !== undefined).map((s) => `${s.cpuOf} ${fmt(s.cpuMsPerOp!, 2)} ms`);
      if (cpu.length > 0) say(`    CPU per operation: ${cpu.join(', ')}`);
    } else {
      for (const f of r.sides) say(`    ${f.label.padEnd(8)} ${fmt(f.value, f.digits).padStart(9)} ${f.unit.padEnd(11)} ${f.about}`);
      say(`    ratio ${ratio} (${r.ratioOf})`);
    }
    for (const t of r.targets) say(`    target ${t.name} ${t.wanted}: ${fmtRatio(t.actual, t.limit)} -> ${t.met ? 'MET' : 'NOT MET'}`);
    for (const n of r.notes) say(`    note: ${n}`);
    if (r.wallSeconds !== undefined) say(`    took ${fmt(r.wallSeconds, 0)} s, set-up included`);
  }
  say('');
  say(`total ${fmt(wallSeconds, 0)} s (the build not included)`);
  say('reproduce: npm run bench');
  say('  knobs: BENCH_SECONDS (per round, default 5), BENCH_ROUNDS (default 3, also (f) and (g)), BENCH_CONNECTIONS (default 20),');
  say('         BENCH_KEEP_MONITORING=1 ((o) reuses the month it loaded on an earlier run with the same BENCH_DATABASE_URL),');
  say('         BENCH_WARMUP_SECONDS (default 2), BENCH_ORDERS (default 10000), BENCH_C_WORKFLOWS (default: sized from warm-up),');
  say(`         BENCH_ONLY=${BENCHMARKS.join(',')}, BENCH_CALLBACK_DELAY_MS (sandbox rail callback delay in (c) and (j), default 0),`);
  say('         BENCH_REFRESH_ROUNDS (refreshes in (d), default 15), BENCH_REPORT_PAYMENTS (seeded payments in (f), default 1000000),');
  say('         BENCH_APPEALS (parked appeals in (h), default 1000), BENCH_KEEP_DATABASE=1 (keep the databases of (f) and (g)),');
  say('         BENCH_DEEP_ROWS (payments and wallet entries of the user in (k), default 1000000), BENCH_DEEP_PAGES (default 500),');
  say('         BENCH_STRICT=1 (exit 1 when a target is missed), BENCH_DATABASE_URL, BENCH_REDIS_URL,');
  say("         BENCH_BATCH_ITEMS (payouts in (p), default 10000), BENCH_BATCH_CONCURRENCY (the batch's items in flight in (p),");
  say('         default BENCH_CONNECTIONS), TEMPORAL_ADDRESS (use that server instead of a dev server)');
  say('  needs Postgres (databases paygate_bench, and paygate_bench_report and paygate_bench_screening for (f) and (g), are dropped');
  say('  and recreated) and Redis; nothing else may be loading the machine.');
  say('  results: bench/REPORT.md and bench/results/latest.json; child logs in bench/results/*.log');
}

/** Where each benchmark came from, for the report. */
const ORIGIN: Record<string, string> = {
  a: 'walking skeleton',
  b: 'walking skeleton',
  c: 'walking skeleton',
  d: 'platform discovery',
  e: 'platform discovery',
  f: 'users, KYC and compliance',
  g: 'users, KYC and compliance',
  h: 'P2P and appeals',
  i: 'wallets and money in',
  j: 'wallets and money in',
  k: 'performance',
  l: 'performance',
  m: 'screening across scripts',
  p: 'bulk payouts',
};

/** bench/REPORT.md: every ratio against its target, the machine, the settings and how to reproduce. */
function renderReport(
  results: BenchResult[],
  machine: Record<string, unknown>,
  wallSeconds: number,
  finishedAt: string,
  temporal: string,
  failed: string | undefined,
): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const lines: string[] = [];
  lines.push('# Paygate benchmark report', '');
  lines.push('Written by `npm run bench`; every run overwrites it. Each figure is Paygate measured against a bare');
  lines.push('baseline in the same run, in interleaved rounds (A, B, A, B …), the median of the rounds. Absolute times');
  lines.push('depend on the machine and its load and are not comparable between machines; the ratios are the result.', '');
  lines.push(`- finished: ${finishedAt}, ${fmt(wallSeconds, 0)} s in all (the build not included)`);
  lines.push(
    `- machine: ${String(machine.cores)} cores (${String(machine.cpu)}), Node ${String(machine.node)}, ${String(machine.platform)}`,
  );
  lines.push(`- Temporal: ${temporal}`);
  lines.push(
    `- settings: ${settings.rounds} rounds x ${settings.seconds} s, ${settings.connections} connections, warm-up ${settings.warmupSeconds} s, ` +
      `${settings.orders} seeded orders, ${settings.reportPayments} report payments, ${settings.appeals} parked appeals, ` +
      `${settings.deepRows} rows in (k)`,
  );
  const missing = BENCHMARKS.filter((id) => !results.some((r) => r.id === id));
  if (missing.length > 0)
    lines.push(`- not run this time: ${missing.map((id) => `(${id})`).join(', ')}${failed ? ` — stopped early: ${failed}` : ''}`);
  lines.push('', '| | benchmark | ratio | target | result | from |', '|---|---|---|---|---|---|');
  for (const r of results) {
    for (const [i, t] of r.targets.entries()) {
      const ratio = i === 0 ? `${fmtRatio(r.ratio, r.targets[0]?.limit)} (${r.ratioOf})` : '';
      lines.push(
        `| ${i === 0 ? `(${r.id})` : ''} | ${i === 0 ? cell(r.title) : ''} | ${cell(ratio)} | ${cell(`${t.name} ${t.wanted}: ${fmtRatio(t.actual, t.limit)}`)} | ${t.met ? 'met' : '**missed**'} | ${i === 0 ? (ORIGIN[r.id] ?? '') : ''} |`,
      );
    }
  }
  const missed = results.flatMap((r) => r.targets.filter((t) => !t.met).map((t) => `(${r.id}) ${t.name}`));
  lines.push('', missed.length === 0 ? 'Every target was met in this run.' : `Missed in this run: ${missed.join('; ')}.`, '');
  lines.push('## Figures', '');
  for (const r of results) {
    lines.push(`### (${r.id}) ${r.title}`, '');
    if (r.kind === 'rate') {
      for (const side of [r.paygate, r.bare]) {
        const cpu = side.cpuMsPerOp !== undefined ? `, ${side.cpuOf} CPU ${fmt(side.cpuMsPerOp, 2)} ms/op` : '';
        lines.push(
          `- ${side.label}: ${fmt(side.rate)} ${r.unit}, p50 ${fmt(side.p50)} ms, p99 ${fmt(side.p99)} ms${cpu}; rounds ${side.rounds.map((x) => fmt(x.rate)).join(', ')}`,
        );
      }
      lines.push(`- p99 ratio: ${fmt(r.p99Ratio, 2)}x`);
    } else {
      for (const f of r.sides) lines.push(`- ${f.label}: ${fmt(f.value, f.digits)} ${f.unit} — ${f.about}`);
    }
    for (const n of r.notes) lines.push(`- note: ${n}`);
    if (r.wallSeconds !== undefined) lines.push(`- took ${fmt(r.wallSeconds, 0)} s, set-up included`);
    lines.push('');
  }
  lines.push('## How to reproduce', '');
  lines.push(
    '```bash',
    'npm run bench                 # everything, 20 to 40 minutes on two cores',
    'BENCH_ONLY=a,e npm run bench  # a selection',
    '```',
    '',
  );
  lines.push('It needs Postgres and Redis at their defaults (or `BENCH_DATABASE_URL`, `BENCH_REDIS_URL`) and starts its own');
  lines.push('Temporal dev server unless `TEMPORAL_ADDRESS` is set. Nothing else should load the machine while it runs.');
  lines.push('The knobs (`BENCH_SECONDS`, `BENCH_ROUNDS`, `BENCH_CONNECTIONS`, …) are listed at the end of its output;');
  lines.push("`bench/results/latest.json` holds the same results as JSON, and `bench/results/*.log` the child processes' logs.");
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const startedAt = performance.now();
  const wanted = new Set(settings.only);
  for (const id of wanted) {
    if (!BENCHMARKS.includes(id)) throw new Error(`BENCH_ONLY: unknown benchmark "${id}" (${BENCHMARKS.join(', ')})`);
  }
  process.env.LOG_LEVEL = 'warn';
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const runTag = Date.now().toString(36);
  const machine = {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };

  progress(`database ${settings.databaseUrl}: recreating and migrating`);
  await recreateDatabase(settings.databaseUrl);
  await migrateUp(settings.databaseUrl);
  const db = new PgClient({ connectionString: settings.databaseUrl });
  await db.connect();
  teardowns.push({ name: 'database client', run: () => db.end() });

  let temporal: Client | undefined;
  let temporalAddress = '127.0.0.1:7233';
  let externalTemporal = false;
  const acceptQueue = `paygate-bench-accept-${runTag}`;
  if (['b', 'c', 'f', 'g', 'h', 'i', 'j', 'l', 'n', 'p'].some((id) => wanted.has(id))) {
    Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
    progress(process.env.TEMPORAL_ADDRESS ? `temporal at ${process.env.TEMPORAL_ADDRESS}` : 'starting a Temporal dev server');
    ({ address: temporalAddress, external: externalTemporal } = await startTemporal());
    const connection = await Connection.connect({ address: temporalAddress });
    temporal = new Client({ connection, namespace: 'default' });
    teardowns.push({ name: 'temporal client', run: () => connection.close() });
    // The bench starts payments as the api does, search attributes included.
    await registerSearchAttributes(connection);
    if (externalTemporal) {
      // Workflows parked on the worker-less queue would stay open forever on a shared server.
      teardowns.push({
        name: 'terminate parked workflows',
        run: () =>
          connection.workflowService.startBatchOperation({
            namespace: 'default',
            jobId: `paygate-bench-cleanup-${runTag}`,
            visibilityQuery: `TaskQueue = '${acceptQueue}' AND ExecutionStatus = 'Running'`,
            reason: 'paygate bench cleanup',
            terminationOperation: {},
          }),
      });
    }
  }

  const cfgDefaults = loadConfig({});
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const apiEnv: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_BASE_URL: apiUrl,
    LOG_LEVEL: 'warn',
    DATABASE_URL: settings.databaseUrl,
    DATABASE_POOL_MAX: String(cfgDefaults.databasePoolMax),
    REDIS_URL: settings.redisUrl,
    QUEUE_PREFIX: 'paygate-bench',
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: acceptQueue,
    JWT_TTL_SECONDS: '3600', // the longest lifetime the config allows
    RATE_LIMIT_LOGIN_PER_IP: '1000000',
    RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP: '1000000',
    RATE_LIMIT_LOGIN_PER_ACCOUNT: '1000000',
    RATE_LIMIT_REGISTER_PER_IP: '1000000',
    RATE_LIMIT_API_PER_MINUTE: '100000000',
    RATE_LIMIT_API_PER_ACCOUNT_PER_MINUTE: '100000000',
    LIMIT_VERIFIED_PER_PAYMENT_KES: HUGE_LIMIT_KES,
    LIMIT_VERIFIED_DAILY_KES: HUGE_LIMIT_KES,
    LIMIT_VERIFIED_BALANCE_KES: HUGE_LIMIT_KES,
    SANDBOX_CALLBACK_DELAY_MS: String(settings.callbackDelayMs),
  };
  delete apiEnv.ADMIN_EMAIL;
  delete apiEnv.ADMIN_PASSWORD;

  // (d), (f) and (g) do not use this api: (f) and (g) start their own stack.
  let apiPid: number | undefined;
  if (['a', 'b', 'c', 'e', 'i', 'j', 'k', 'l'].some((id) => wanted.has(id))) {
    progress(`starting the api on ${apiUrl}`);
    const api = track(spawnNode('api', path.resolve(__dirname, '..', 'api', 'server.js'), apiEnv));
    await waitForHttp(`${apiUrl}/healthz`, api);
    apiPid = api.proc.pid;
  }

  const ctx: Ctx = { apiUrl, db, temporal, temporalAddress, acceptQueue, workQueue: `paygate-bench-work-${runTag}`, apiEnv, apiPid };
  const results: BenchResult[] = [];
  let failure: Error | undefined;
  const run = async (id: string, what: string, bench: () => Promise<BenchResult>) => {
    if (!wanted.has(id) || failure !== undefined) return;
    progress(`(${id}) ${what}`);
    const benchStartedAt = performance.now();
    try {
      const result = await bench();
      result.wallSeconds = (performance.now() - benchStartedAt) / 1000;
      results.push(result);
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }
  };

  // The orders of (a), read again by (e).
  let seeded: { reader: BenchUser; ids: string[] } | undefined;
  const seededOrders = async () => {
    if (!seeded) {
      const reader = await newVerifiedUser(apiUrl, db, 'reader');
      progress(`seeding ${settings.orders} orders`);
      seeded = { reader, ids: await seedOrders(db, reader.id, settings.orders) };
    }
    return seeded;
  };

  await run('a', 'order reads', async () => {
    const { reader, ids } = await seededOrders();
    const barePort = await freePort();
    const bareUrl = `http://127.0.0.1:${barePort}`;
    const bare = track(
      spawnNode('bare', path.join(__dirname, 'bare-server.js'), {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(barePort),
        DATABASE_URL: settings.databaseUrl,
        DATABASE_POOL_MAX: String(cfgDefaults.databasePoolMax),
      }),
    );
    try {
      await waitForHttp(`${bareUrl}/healthz`, bare);
      return await benchOrderRead(ctx, bareUrl, bare.proc.pid, reader, ids);
    } finally {
      await bare.stop();
    }
  });
  await run('b', 'payment acceptance', async () => {
    const users = await Promise.all(Array.from({ length: settings.rounds + 1 }, (_, i) => newVerifiedUser(apiUrl, db, `payer-b${i}`)));
    return benchInitiate(ctx, users.slice(1), users[0]);
  });
  await run('c', 'workflow completion', async () => {
    const users = await Promise.all(Array.from({ length: settings.rounds + 1 }, (_, i) => newVerifiedUser(apiUrl, db, `payer-c${i}`)));
    return benchCompletion(ctx, users.slice(1), users[0]);
  });
  await run('d', 'exchange catalogue refresh', () => benchExchangeRefreshes());
  await run('e', 'order reads under background catalogue refreshes', async () => {
    const { reader, ids } = await seededOrders();
    return benchOrderReadUnderRefreshes(ctx, reader, ids);
  });
  await run('f', 'compliance report', () => benchReport(temporalAddress));
  await run('g', 'payment latency with a full blocklist', () => benchScreening(temporalAddress));
  await run('h', 'worker memory per parked appeal', () => benchParkedAppeals(temporalAddress));
  await run('i', 'payouts from one hot wallet', () => benchHotWallet(ctx));
  await run('j', 'deposits credited', () => benchDepositCredits(ctx));
  await run('k', 'page 500 vs page 1', () => benchDeepPages(ctx));
  await run('l', 'trades on one hot ad', () => benchHotAd(ctx));
  await run('m', 'screening against 50,000 listed names', () => benchScreeningScale());
  await run('n', 'payment latency with monitoring on and off', () => benchMonitoringLatency(temporalAddress));
  await run('o', 'monitoring evaluations over the labelled month', () => benchMonitoring());
  await run('p', 'a bulk payout vs the same payouts one by one', () => benchBulkPayouts(ctx));

  const wallSeconds = (performance.now() - startedAt) / 1000;
  print(results, machine, wallSeconds);
  const failed = failure?.message;
  if (failed !== undefined) say(`\nstopped early, the benchmarks after the last one above did not run: ${failed}`);
  const file = path.join(RESULTS_DIR, 'latest.json');
  const report = {
    finishedAt: new Date().toISOString(),
    wallSeconds,
    machine,
    settings,
    temporal: externalTemporal ? 'external' : 'dev server',
    ...(failed !== undefined ? { failed } : {}),
    results,
  };
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  say(`wrote ${path.relative(process.cwd(), file) || file}`);
  fs.writeFileSync(REPORT_FILE, renderReport(results, machine, wallSeconds, report.finishedAt, report.temporal, failed));
  say(`wrote ${path.relative(process.cwd(), REPORT_FILE) || REPORT_FILE}`);
  if (failure !== undefined) throw failure;
  if (settings.strict && results.some((r) => r.targets.some((t) => !t.met))) process.exitCode = 1;
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`[bench] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    void teardown().finally(() => process.exit());
  });
