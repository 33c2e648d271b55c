import { expect } from 'chai';
import { auditPayments, awaitTerminal, duplicateCount } from './support/audit';
import { initiatePayment, newCustomer, paymentBody, readiness, type Attempted } from './support/client';
import { query } from './support/db';
import { Deployment, type PaygateProcess } from './support/paygate';
import { score } from './support/scoreboard';
import { sleep, until } from './support/wait';
import { faultStack } from './setup';

const DROPS = 8;
const CLIENTS = 4;
const PAYMENTS_PER_CLIENT = 8;

/** Terminate every server connection to the run's database except the suite's own; returns how many. */
async function dropConnections(): Promise<number> {
  const dropped = await query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND application_name <> 'paygate-fault-suite' AND pg_terminate_backend(pid)`,
  );
  return dropped.length;
}

describe('faults: every Postgres connection of the deployment is dropped, repeatedly, while payments flow', () => {
  let deployment: Deployment;
  let api: PaygateProcess;

  before(async function () {
    this.timeout(120_000);
    deployment = new Deployment('pgdrop', faultStack.infra);
    api = await deployment.startApi();
    await deployment.startWorker(api);
    await deployment.startJobs();
  });
  after(async function () {
    this.timeout(60_000);
    await deployment?.stopAll();
  });

  it(`when the server terminates the api's, worker's and jobs' connections ${DROPS} times, then no process dies, clients that retry with their key get one order each, and every payment completes once`, async function () {
    this.timeout(240_000);
    const customers = await Promise.all(Array.from({ length: CLIENTS }, () => newCustomer(api.baseUrl)));
    const attempts: Attempted[] = [];
    const clients = customers.map(async (customer, c) => {
      for (let i = 0; i < PAYMENTS_PER_CLIENT; i += 1) {
        const n = c * 100 + i;
        attempts.push(await initiatePayment(api.baseUrl, customer, paymentBody(i % 2 === 0 ? 'mpesa_callback' : 'bank_transfer', n)));
        await sleep(150);
      }
    });
    const faults = (async () => {
      const counts: number[] = [];
      await sleep(500);
      for (let drop = 0; drop < DROPS; drop += 1) {
        counts.push(await dropConnections());
        await sleep(400);
      }
      return counts;
    })();
    await Promise.all(clients);
    const dropped = await faults;
    // A drop that found nobody connected (all pools idle and empty at that instant) injected nothing.
    const injected = dropped.filter((n) => n > 0).length;

    const accepted = attempts.filter((a) => a.orderId).map((a) => a.orderId!);
    await awaitTerminal(accepted, 120_000);
    await until('the api to report Postgres up', async () => ((await readiness(api.baseUrl)).checks.postgres === 'up' ? true : undefined));
    const audit = await auditPayments(attempts, {
      customerIds: customers.map((c) => c.userId),
      temporalAddress: faultStack.temporal.address,
      taskQueue: deployment.taskQueue,
    });
    const retried = attempts.reduce<Record<string, number>>((acc, a) => {
      for (const [status, n] of Object.entries(a.retried)) acc[status] = (acc[status] ?? 0) + n;
      return acc;
    }, {});
    score({
      scenario: 'Postgres connections dropped',
      injected,
      recovered: deployment.unexpectedExits() === 0 && audit.lost.length === 0 ? injected : 0,
      requests: audit.requests,
      lost: audit.lost.length,
      duplicates: duplicateCount(audit),
      note: `connections terminated per drop: ${dropped.join(', ')}; answers the clients retried (status: count): ${
        Object.entries(retried)
          .map(([s, n]) => `${s === '0' ? 'no answer' : s}: ${n}`)
          .join(', ') || 'none'
      }`,
    });

    expect(injected, 'drops that terminated connections').to.be.at.least(DROPS / 2);
    expect(audit.lost, 'requests lost').to.deep.equal([]);
    expect(audit.completed).to.equal(CLIENTS * PAYMENTS_PER_CLIENT);
    expect(audit.duplicates).to.deep.equal({ orders: 0, ledger: 0, events: 0, transfers: 0, workflowRuns: 0 });
    for (const order of audit.orders) expect(order.ledger, `ledger of ${order.orderId}`).to.deep.equal({ hold: 1, settle: 1 });
    expect(deployment.unexpectedExits(), 'processes that died on their own').to.equal(0);
  });
});
