import { createHash, timingSafeEqual } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { config } from '../platform/config';
import { AppError } from '../platform/errors';
import { componentLogger } from '../platform/logger';
import { redis } from '../platform/redis';
import { deferredStarts } from '../platform/temporal';
import { ORDER_STATUSES, PAYMENT_METHODS } from '../domain/orders';
import { APPEAL_STATUSES } from '../domain/appeals/contract';
import { countAppealsByStatus } from '../repositories/appeals';
import { catalogueRefreshTimes } from '../repositories/catalogue';
import { countByStatusAndMethod, countOverdue } from '../repositories/orders';
import { countLateResultsByVerdict } from '../repositories/rails';
import { countBreaks } from '../repositories/reconciliation';
import { inReadTransaction } from '../repositories/transaction';
import { QUEUES } from '../workers/queues';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'paygate_' });

const httpDuration = new Histogram({
  name: 'paygate_http_request_duration_seconds',
  help: 'HTTP request latency by route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

/** The route pattern a finished request matched (`/api/v1/payments/orders/:orderId`), or `unmatched`. */
export function routeOf(req: Request, res: Response): string {
  const route = (req.route as { path?: string } | undefined)?.path;
  const base = typeof res.locals.mountPath === 'string' ? res.locals.mountPath : req.baseUrl;
  return route ? `${base}${route}` : 'unmatched';
}

/** Time every request, labelled by its route pattern (never the raw path, which would explode cardinality). */
export const httpMetrics: RequestHandler = (req, res, next) => {
  const stop = httpDuration.startTimer();
  res.on('finish', () => {
    stop({ method: req.method, route: routeOf(req, res), status: String(res.statusCode) });
  });
  next();
};

/** Whether the request carries `Authorization: Bearer <METRICS_TOKEN>`, compared in constant time. */
function presentsMetricsToken(req: Request): boolean {
  const [scheme, token, ...rest] = (req.get('authorization') ?? '').trim().split(/\s+/);
  if (scheme?.toLowerCase() !== 'bearer' || !token || rest.length > 0) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(token), digest(config().metrics.token));
}

/**
 * Prometheus text, for a scraper presenting METRICS_TOKEN as a bearer token (Prometheus's `authorization`
 * or `bearer_token_file` in a scrape config; docs/operations.md#metrics). Anyone else gets a 401 problem:
 * the figures tell an outsider how much money moves and where it is stuck.
 */
export const metricsEndpoint: RequestHandler = async (req, res, next) => {
  if (!presentsMetricsToken(req)) {
    next(
      new AppError('unauthenticated', 'send the metrics token as a bearer token (Authorization: Bearer <METRICS_TOKEN>)', {
        headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      }),
    );
    return;
  }
  res.type(registry.contentType).send(await registry.metrics());
};

/** Mounted on a router: keeps its mount path, which Express forgets once an error leaves the router. */
export const rememberMountPath: RequestHandler = (req, res, next) => {
  res.locals.mountPath = req.baseUrl;
  next();
};

// ---------------------------------------------------------------------------------------------
// Operational gauges, read when Prometheus scrapes. Several api and worker processes share Postgres and
// Redis, so what every process would count for itself is read from there instead: each api reports the
// same figures (aggregate with `max without (instance)`). A read is reused for METRICS_CACHE_MS, never
// runs twice at once, and is bounded in time; when its source is down the series are left out and
// `paygate_metrics_source_up` says so, while /metrics still answers 200.

const READ_TIMEOUT_MS = 2000;
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
/** Every queue the jobs process works (the one list, in `workers/queues.ts`). */
export const METRIC_QUEUES = QUEUES;
type Source = 'postgres' | 'redis';

/** Whether the last read of each source succeeded, shown by `paygate_metrics_source_up`. */
const sourceState = new Map<Source, 0 | 1>();

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref())]);

/** A read shared by the scrapes of the next METRICS_CACHE_MS; undefined while its source fails. */
function cachedRead<T>(source: Source, read: () => Promise<T>): () => Promise<T | undefined> {
  let last: { at: number; value: T | undefined } | undefined;
  let inFlight: Promise<T | undefined> | undefined;
  return async () => {
    if (last && Date.now() - last.at < config().metrics.cacheMs) return last.value;
    inFlight ??= withTimeout(read(), READ_TIMEOUT_MS)
      .then(
        (value) => {
          sourceState.set(source, 1);
          return value;
        },
        (err: unknown) => {
          sourceState.set(source, 0);
          componentLogger('metrics').warn({ source, err: (err as Error).message }, 'metrics source unavailable');
          return undefined;
        },
      )
      .then((value) => {
        last = { at: Date.now(), value };
        inFlight = undefined;
        return value;
      });
    return inFlight;
  };
}

interface DatabaseFigures {
  payments: { status: string; method: string; n: number }[];
  appeals: { status: string; n: number }[];
  refreshes: { catalogue: string; refreshed_at: Date }[];
  lateResults: { verdict: string; n: number }[];
  overdue: number;
  breaks: { rail: string; kind: string; status: string; n: number }[];
}

/** Small aggregates in one short transaction, under a statement timeout. */
const readDatabase = cachedRead<DatabaseFigures>('postgres', () =>
  inReadTransaction(READ_TIMEOUT_MS, async (tx) => ({
    payments: await countByStatusAndMethod(tx),
    appeals: await countAppealsByStatus(tx),
    refreshes: await catalogueRefreshTimes(tx),
    lateResults: await countLateResultsByVerdict(tx),
    overdue: await countOverdue(tx),
    breaks: await countBreaks(tx),
  })),
);

let queues: { client: Redis; queues: Queue[] } | undefined;
/** Queue handles on the api's Redis connection, made again if that connection was replaced. */
function metricQueues(): Queue[] {
  const client = redis();
  if (queues?.client !== client) {
    const made = METRIC_QUEUES.map((name) => new Queue(name, { connection: client, prefix: config().queuePrefix }));
    for (const queue of made) queue.on('error', () => undefined); // the connection logs its own errors
    queues = { client, queues: made };
  }
  return queues.queues;
}

const readQueues = cachedRead('redis', () =>
  Promise.all(metricQueues().map(async (queue) => ({ queue: queue.name, counts: await queue.getJobCounts(...QUEUE_STATES) }))),
);

new Gauge({
  name: 'paygate_metrics_source_up',
  help: 'Whether the last read of a metrics source (postgres, redis) succeeded (1) or failed (0)',
  labelNames: ['source'] as const,
  registers: [registry],
  async collect() {
    await Promise.all([readDatabase(), readQueues()]);
    this.reset();
    for (const [source, up] of sourceState) this.set({ source }, up);
  },
});

new Gauge({
  name: 'paygate_payments',
  help: 'Payment orders by current status and method (every process reads the same totals from Postgres)',
  labelNames: ['status', 'method'] as const,
  registers: [registry],
  async collect() {
    const figures = await readDatabase();
    this.reset();
    if (!figures) return;
    // Every pair is present, at zero when no order is in it, so that rates and alerts see the series.
    for (const status of ORDER_STATUSES) for (const method of PAYMENT_METHODS) this.set({ status, method }, 0);
    for (const { status, method, n } of figures.payments) this.set({ status, method }, n);
  },
});

new Gauge({
  name: 'paygate_payments_overdue',
  help: 'Payments still processing past the settle deadline: the rail gave no definite answer yet, their holds are kept',
  registers: [registry],
  async collect() {
    const figures = await readDatabase();
    this.reset();
    if (figures) this.set(figures.overdue);
  },
});

new Gauge({
  name: 'paygate_appeals',
  help: 'Appeals by status (open, approved, rejected, expired)',
  labelNames: ['status'] as const,
  registers: [registry],
  async collect() {
    const figures = await readDatabase();
    this.reset();
    if (!figures) return;
    for (const status of APPEAL_STATUSES) this.set({ status }, 0);
    for (const { status, n } of figures.appeals) this.set({ status }, n);
  },
});

new Gauge({
  name: 'paygate_catalogue_refresh_age_seconds',
  help: 'Seconds since the last successful refresh of a discovery catalogue (exchanges, banks); absent before the first',
  labelNames: ['catalogue'] as const,
  registers: [registry],
  async collect() {
    const figures = await readDatabase();
    this.reset();
    for (const { catalogue, refreshed_at } of figures?.refreshes ?? []) {
      this.set({ catalogue }, Math.max(0, (Date.now() - new Date(refreshed_at).getTime()) / 1000));
    }
  },
});

new Gauge({
  name: 'paygate_late_rail_results',
  help: 'Rail results that arrived after their order closed, by verdict (agrees, contradicts: an operator must reconcile, unsettled)',
  labelNames: ['verdict'] as const,
  registers: [registry],
  async collect() {
    const figures = await readDatabase();
    this.reset();
    if (!figures) return;
    for (const verdict of ['agrees', 'contradicts', 'unsettled']) this.set({ verdict }, 0);
    for (const { verdict, n } of figures.lateResults) this.set({ verdict }, n);
  },
});

// Breaks are recorded by the jobs process and never deleted: their count in Postgres is the counter, the
// same from every api (docs/wallets.md#reconciliation-line-by-line).
new Counter({
  name: 'paygate_reconciliation_breaks_total',
  help: "Breaks found between a rail's own record and the ledger, by rail and kind (missing_in_ledger, missing_at_rail, amount_mismatch, duplicate)",
  labelNames: ['rail', 'kind'] as const,
  registers: [registry],
  async collect() {
    const figures = await readDatabase();
    this.reset();
    for (const { rail, kind, n } of figures?.breaks ?? []) this.inc({ rail, kind }, n);
  },
});

new Gauge({
  name: 'paygate_reconciliation_breaks_open',
  help: 'Breaks not yet resolved by staff, by rail',
  labelNames: ['rail'] as const,
  registers: [registry],
  async collect() {
    const figures = await readDatabase();
    this.reset();
    if (!figures) return;
    for (const { rail, status, n } of figures.breaks) if (status === 'open') this.inc({ rail }, n);
  },
});

new Gauge({
  name: 'paygate_queue_jobs',
  help: 'BullMQ jobs by queue and state (waiting, active, delayed, failed)',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    const depths = await readQueues();
    this.reset();
    for (const { queue, counts } of depths ?? []) {
      for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state] ?? 0);
    }
  },
});

new Counter({
  name: 'paygate_payment_starts_deferred_total',
  help: 'Payment workflows this api left to the reconciler: its start failed (start_failed), or one failed moments before (backing_off)',
  labelNames: ['reason'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [reason, n] of Object.entries(deferredStarts)) this.inc({ reason }, n);
  },
});
