import { expect } from 'chai';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { DISCOVERY_QUEUE, REFRESH_BANKS, REFRESH_EXCHANGES } from '../../workers/queues';
import { auditPayments, awaitTerminal, duplicateCount } from './support/audit';
import { initiatePayment, newCustomer, paymentBody, type Attempted, type Customer, type PaymentKind } from './support/client';
import { Deployment, type PaygateProcess } from './support/paygate';
import { score } from './support/scoreboard';
import { sleep, until } from './support/wait';
import { faultStack } from './setup';

const CUSTOMERS = 4;
const PAYMENTS_PER_CUSTOMER = 10;
/** Payments sent to both apis at once with the same Idempotency-Key. */
const RACED = 6;
const EVERY_MS: Record<string, number> = { [REFRESH_BANKS]: 1000, [REFRESH_EXCHANGES]: 3000 };
const SCHEDULING_WINDOW_MS = 15_000;

interface RefreshRun {
  jobId: string;
  scheduler: string;
  tick: number;
  process: string;
}

/** The scheduled refreshes each jobs process ran, from its own log: `repeat:<scheduler>:<tick millis>` job ids. */
function scheduledRuns(jobs: PaygateProcess[]): RefreshRun[] {
  return jobs.flatMap((proc) =>
    proc
      .logged('catalogue refreshed')
      .map((r) => String(r.jobId))
      .filter((id) => id.startsWith('repeat:'))
      .map((jobId) => {
        const [, scheduler, tick] = jobId.split(':');
        return { jobId, scheduler, tick: Number(tick), process: proc.name };
      }),
  );
}

describe('faults: scale-out, two api, two worker and two jobs processes on one stack', () => {
  let deployment: Deployment;
  const apis: PaygateProcess[] = [];
  const jobs: PaygateProcess[] = [];
  let connection: Redis;

  before(async function () {
    this.timeout(180_000);
    deployment = new Deployment('scale', faultStack.infra, {
      REFRESH_BANKS_EVERY_MS: String(EVERY_MS[REFRESH_BANKS]),
      REFRESH_EXCHANGES_EVERY_MS: String(EVERY_MS[REFRESH_EXCHANGES]),
    });
    apis.push(await deployment.startApi(), await deployment.startApi());
    // Each worker's sandbox rails call back to one of the apis; either api signals any workflow.
    await Promise.all(apis.map((api) => deployment.startWorker(api)));
    jobs.push(...(await Promise.all([deployment.startJobs(), deployment.startJobs()])));
    connection = new Redis(faultStack.redis.url, { maxRetriesPerRequest: null });
  });
  after(async function () {
    this.timeout(60_000);
    connection?.disconnect();
    await deployment?.stopAll();
  });

  it('when payments arrive through both apis at once, some with the same key at both, then each settles exactly once', async function () {
    this.timeout(180_000);
    const customers: Customer[] = await Promise.all(Array.from({ length: CUSTOMERS }, (_, i) => newCustomer(apis[i % 2].baseUrl)));
    const kinds: PaymentKind[] = ['mpesa_callback', 'bank_transfer', 'mpesa_polled'];
    const attempts: Attempted[] = [];

    await Promise.all(
      customers.map(async (customer, c) => {
        for (let i = 0; i < PAYMENTS_PER_CUSTOMER; i += 1) {
          const n = c * 100 + i;
          attempts.push(await initiatePayment(apis[(c + i) % 2].baseUrl, customer, paymentBody(kinds[i % kinds.length], n)));
        }
      }),
    );
    // The same request at both apis at the same moment: one order, both answered with it.
    const raced: Attempted[][] = [];
    for (let i = 0; i < RACED; i += 1) {
      const customer = customers[i % CUSTOMERS];
      const key = `raced-${customer.userId}-${i}`;
      const body = paymentBody('mpesa_callback', 900 + i);
      const pair = await Promise.all(apis.map((api) => initiatePayment(api.baseUrl, customer, body, { key })));
      raced.push(pair);
      attempts.push(pair[0]);
    }

    await awaitTerminal(
      attempts.filter((a) => a.orderId).map((a) => a.orderId!),
      90_000,
    );
    const audit = await auditPayments(attempts, {
      customerIds: customers.map((c) => c.userId),
      temporalAddress: faultStack.temporal.address,
      taskQueue: deployment.taskQueue,
    });
    score({
      scenario: 'scale-out: payments, 2 of each process',
      injected: 0,
      recovered: 0,
      requests: audit.requests,
      lost: audit.lost.length,
      duplicates: duplicateCount(audit),
      note: `${audit.completed} of ${audit.requests} settled once; ${RACED} requests raced at both apis with one key each`,
    });

    for (const [a, b] of raced) {
      expect(a.orderId, 'both apis answer with the one order').to.equal(b.orderId);
      expect([a.answer?.status, b.answer?.status]).to.deep.equal([202, 202]);
    }
    expect(audit.lost, 'requests lost').to.deep.equal([]);
    expect(audit.completed).to.equal(CUSTOMERS * PAYMENTS_PER_CUSTOMER + RACED);
    expect(audit.duplicates).to.deep.equal({ orders: 0, ledger: 0, events: 0, transfers: 0, workflowRuns: 0 });
    for (const order of audit.orders) {
      expect(order.ledger, `ledger of ${order.orderId}`).to.deep.equal({ hold: 1, settle: 1 });
      expect(order.transfers).to.equal(1);
      expect(order.workflowRuns).to.equal(1);
    }
    expect(deployment.unexpectedExits(), 'processes that died on their own').to.equal(0);
  });

  it('when both jobs processes run the same schedulers, then each scheduled refresh runs once per tick, never twice', async function () {
    this.timeout(120_000);
    const queue = new Queue(DISCOVERY_QUEUE, { connection, prefix: deployment.queuePrefix });
    try {
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.map((s) => s.key).sort(), 'one scheduler per name, however many processes upserted them').to.deep.equal([
        REFRESH_BANKS,
        REFRESH_EXCHANGES,
      ]);
      const since = Date.now();
      await sleep(SCHEDULING_WINDOW_MS);
      // Stop taking new ticks, and let what runs finish.
      await Promise.all(jobs.map((j) => j.stop()));

      const runs = scheduledRuns(jobs).filter((r) => r.tick >= since);
      const completed = (await queue.getJobs(['completed'], 0, 1000))
        .map((j) => j.id ?? '')
        .filter((id) => id.startsWith('repeat:') && Number(id.split(':')[2]) >= since);
      const perJob = runs.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.jobId]: (acc[r.jobId] ?? 0) + 1 }), {});
      const twice = Object.values(perJob).filter((n) => n > 1).length;
      const byScheduler = (name: string) =>
        runs
          .filter((r) => r.scheduler === name)
          .map((r) => r.tick)
          .sort((a, b) => a - b);
      const gaps = (ticks: number[]) => ticks.slice(1).map((t, i) => t - ticks[i]);
      // Under load the scheduler may fire a tick late (and the next one from then on): never twice, never early.
      const late = [REFRESH_BANKS, REFRESH_EXCHANGES].reduce(
        (sum, name) => sum + gaps(byScheduler(name)).filter((gap) => gap > EVERY_MS[name]).length,
        0,
      );
      const failed = (await queue.getJobs(['failed'], 0, 1000))
        .map((j) => j.id ?? '')
        .filter((id) => id.startsWith('repeat:') && Number(id.split(':')[2]) >= since);
      const byProcess = jobs.map((j) => `${j.name} ${runs.filter((r) => r.process === j.name).length}`).join(', ');
      score({
        scenario: 'scale-out: scheduled refreshes, 2 jobs',
        injected: 0,
        recovered: 0,
        requests: runs.length,
        lost: failed.length,
        duplicates: twice,
        note: `${runs.length} scheduled refreshes in ${SCHEDULING_WINDOW_MS / 1000} s (${REFRESH_BANKS} ${byScheduler(REFRESH_BANKS).length}, ${REFRESH_EXCHANGES} ${byScheduler(REFRESH_EXCHANGES).length}); ran by ${byProcess}; ticks run twice: ${twice}; ticks fired late under load: ${late}`,
      });

      expect(twice, 'ticks run by both processes').to.equal(0);
      expect(failed, 'scheduled refreshes that failed').to.deep.equal([]);
      expect(new Set(completed), 'BullMQ completed each tick the processes ran, and no other').to.deep.equal(new Set(Object.keys(perJob)));
      for (const name of [REFRESH_BANKS, REFRESH_EXCHANGES]) {
        const ticks = byScheduler(name);
        expect(ticks.length, `${name} ticks in the window`).to.be.at.least(Math.floor(SCHEDULING_WINDOW_MS / EVERY_MS[name]) - 2);
        for (const gap of gaps(ticks))
          expect(gap, `${name}: one run per tick, never two within one interval`).to.be.at.least(EVERY_MS[name]);
      }
      await until('nothing left running', async () => ((await queue.getActiveCount()) === 0 ? true : undefined), 10_000);
    } finally {
      await queue.close();
    }
  });
});
