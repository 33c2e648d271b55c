import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { DEFAULT_RULE_SET, type RuleSet } from '../domain/monitoring/rule-set';
import { evaluate, type Movement } from '../domain/monitoring/rules';
import { models } from '../models';
import { createSequelize } from '../platform/database';
import { historyAggregates } from '../repositories/monitoring';
import { FULL_MONTH, generateMonth, HistoryIndex, MONTH_START, type Month, type MonthMovement } from '../tests/support/monitoring-month';
import { median, percentile } from './support';

/**
 * Benchmark (o) (docs/monitoring.md#the-labelled-month): monitoring evaluations per second against a history of
 * the labelled month's 1,000,000-odd movements stored in Postgres — the repository's aggregate read of the
 * history windows and the rules over it, in a loop at a fixed concurrency — against a bare indexed read of the
 * customer's row by the same connection pool in the same run. Before measuring, a sample of the aggregates read
 * in SQL is compared with the in-memory index the labelled test uses: they must be the same.
 */

export interface MonitoringBenchResult {
  movements: number;
  customers: number;
  loadSeconds: number;
  /** The month was loaded by an earlier run and reused (`loadSeconds` is then its vacuum only). */
  reused: boolean;
  concurrency: number;
  evaluationsPerSecond: number;
  evaluationP50Ms: number;
  evaluationP99Ms: number;
  bareReadsPerSecond: number;
  ratio: number;
  rounds: { evaluations: number; bare: number }[];
  checked: number;
  mismatches: number;
}

const BATCH = 10_000;
/** A payout's destination as stored: the payee's phone; a P2P trade's order names its partner. */
const destination = (m: MonthMovement): string => JSON.stringify(m.kind === 'payout' ? { phone: m.counterparty } : { p2p: m.counterparty });

async function load(db: PgClient, month: Month, userIds: string[], movements: MonthMovement[]): Promise<void> {
  await db.query(
    `INSERT INTO users (id, email, password_hash, full_name, kyc_status, created_at, updated_at)
     SELECT id, 'monitoring-' || id || '@example.com', 'not-a-login', 'Monitoring bench', kyc, opened, opened
       FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS u (id, kyc, opened)`,
    [userIds, month.customers.map((c) => (c.kycVerified ? 'verified' : 'unverified')), month.customers.map((c) => new Date(c.openedAt))],
  );
  const orders = movements.filter((m) => m.kind !== 'deposit');
  const deposits = movements.filter((m) => m.kind === 'deposit');
  for (let i = 0; i < orders.length; i += BATCH) {
    const batch = orders.slice(i, i + BATCH);
    await db.query(
      `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                           description, reference, status, workflow_id, created_at, updated_at)
       SELECT gen_random_uuid(), u, 'monitoring-' || n, a, a, 'KES', 'mobile_money', d::jsonb, 'labelled month', 'M-' || n, 'completed',
              'payment-monitoring-' || n, t, t
         FROM unnest($1::uuid[], $2::int[], $3::numeric[], $4::text[], $5::timestamptz[]) AS r (u, n, a, d, t)`,
      [
        batch.map((m) => userIds[m.customer]),
        batch.map((m) => m.id),
        batch.map((m) => String(m.amountMinor)),
        batch.map(destination),
        batch.map((m) => new Date(m.at)),
      ],
    );
  }
  for (let i = 0; i < deposits.length; i += BATCH) {
    const batch = deposits.slice(i, i + BATCH);
    await db.query(
      `INSERT INTO deposits (user_id, channel, rail, currency, amount_minor, status, provider_reference, payer_phone, created_at, updated_at)
       SELECT u, 'mpesa_c2b', 'sandbox', 'KES', a, 'completed', 'MON' || n, p, t, t
         FROM unnest($1::uuid[], $2::int[], $3::numeric[], $4::text[], $5::timestamptz[]) AS r (u, n, a, p, t)`,
      [
        batch.map((m) => userIds[m.customer]),
        batch.map((m) => m.id),
        batch.map((m) => String(m.amountMinor)),
        batch.map((m) => m.counterparty),
        batch.map((m) => new Date(m.at)),
      ],
    );
  }
  // A table in steady state: vacuumed (its visibility map set) and analysed.
  await db.query('VACUUM ANALYZE users, orders, deposits');
}

/** A generated movement as the service is given it: the customer's id, a payout's payee as its stored destination. */
const movementOf = (m: MonthMovement, userIds: string[]): Movement => ({
  kind: m.kind,
  id: randomUUID(),
  customerId: userIds[m.customer],
  amountMinor: BigInt(m.amountMinor),
  at: new Date(m.at),
  counterparty: m.kind === 'payout' ? destination(m) : m.kind === 'p2p_trade' ? userIds[Number(m.counterparty.slice(1))] : m.counterparty,
});

async function closedLoop(
  seconds: number,
  concurrency: number,
  op: (i: number) => Promise<void>,
): Promise<{ count: number; latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const i = next++;
        const t = performance.now();
        await op(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { count: latencies.length, latencies, seconds: (performance.now() - started) / 1000 };
}

export async function benchMonitoringEvaluations(options: {
  databaseUrl: string;
  seconds: number;
  rounds: number;
  concurrency: number;
  /** The database holds the month from an earlier run: load it only when its customers are missing. */
  reuse?: boolean;
  log: (line: string) => void;
}): Promise<MonitoringBenchResult> {
  const { log } = options;
  log('generating the labelled month');
  const full = generateMonth(FULL_MONTH);
  // The month only, without its lead-in: the history stored is the month's movements.
  const month: Month = { customers: full.customers, movements: full.movements.filter((m) => m.at >= MONTH_START) };
  // Ids by the customer's place in the month, so that a kept database is read with the same ids.
  const userIds = month.customers.map((_c, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
  const db = new PgClient({ connectionString: options.databaseUrl });
  await db.connect();
  const loadStarted = performance.now();
  const loaded = async (): Promise<boolean> => {
    const present = options.reuse
      ? (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE id = ANY($1::uuid[])`, [userIds])).rows[0].n
      : 0;
    if (present !== userIds.length) return false;
    log(`reusing the ${month.customers.length} customers and their movements loaded earlier`);
    await db.query('VACUUM ANALYZE');
    return true;
  };
  let reused: boolean;
  try {
    reused = await loaded();
    if (!reused) {
      log(`loading ${month.movements.length} movements of ${month.customers.length} customers`);
      await load(db, month, userIds, month.movements);
    }
  } finally {
    await db.end();
  }
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const sequelize = createSequelize(options.databaseUrl, options.concurrency);
  models(sequelize);
  const rules: RuleSet = { version: 1, ...DEFAULT_RULE_SET };
  // Probes: movements of the month's second half (a full norm window behind them), in a fixed shuffled order.
  const probes = month.movements.filter((m) => m.at >= MONTH_START + 15 * 86_400_000 && m.kind !== 'p2p_trade');
  for (let i = probes.length - 1, s = 7; i > 0; i -= 1) {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = s % (i + 1);
    [probes[i], probes[j]] = [probes[j], probes[i]];
  }
  try {
    // The SQL aggregates and the in-memory index the labelled test uses read the same history.
    const index = new HistoryIndex(month);
    let mismatches = 0;
    const checked = Math.min(2_000, probes.length);
    for (const m of probes.slice(0, checked)) {
      const sql = await historyAggregates(movementOf(m, userIds), rules.parameters);
      const memory = index.aggregates(m, rules.parameters);
      if (
        JSON.stringify(sql, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) !==
        JSON.stringify(memory, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))
      ) {
        mismatches += 1;
        if (mismatches <= 3)
          log(
            `aggregates differ for movement ${m.id}: sql ${JSON.stringify(sql, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}, memory ${JSON.stringify(memory, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`,
          );
      }
    }
    log(`aggregates compared on ${checked} movements: ${mismatches} differ`);
    const evaluations = async (i: number) => {
      const movement = movementOf(probes[i % probes.length], userIds);
      const history = await historyAggregates(movement, rules.parameters);
      if (!history) throw new Error('a bench customer is missing');
      evaluate(movement, history, rules);
    };
    const bare = async (i: number) => {
      await sequelize.query('SELECT id FROM users WHERE id = :id', { replacements: { id: userIds[probes[i % probes.length].customer] } });
    };
    await closedLoop(1, options.concurrency, evaluations);
    await closedLoop(1, options.concurrency, bare);
    const rounds: { evaluations: number; bare: number }[] = [];
    const latencies: number[] = [];
    for (let r = 0; r < options.rounds; r += 1) {
      const e = await closedLoop(options.seconds, options.concurrency, evaluations);
      const b = await closedLoop(options.seconds, options.concurrency, bare);
      latencies.push(...e.latencies);
      rounds.push({ evaluations: e.count / e.seconds, bare: b.count / b.seconds });
      log(`round ${r + 1}: ${Math.round(e.count / e.seconds)} evaluations/s, bare ${Math.round(b.count / b.seconds)} reads/s`);
    }
    const evaluationsPerSecond = median(rounds.map((r) => r.evaluations));
    const bareReadsPerSecond = median(rounds.map((r) => r.bare));
    return {
      movements: month.movements.length,
      customers: month.customers.length,
      loadSeconds,
      reused,
      concurrency: options.concurrency,
      evaluationsPerSecond,
      evaluationP50Ms: percentile(latencies, 50),
      evaluationP99Ms: percentile(latencies, 99),
      bareReadsPerSecond,
      ratio: evaluationsPerSecond / bareReadsPerSecond,
      rounds,
      checked,
      mismatches,
    };
  } finally {
    await sequelize.close();
  }
}
