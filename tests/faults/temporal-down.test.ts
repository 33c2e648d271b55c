import { expect } from 'chai';
import { auditPayments, awaitTerminal, duplicateCount } from './support/audit';
import { initiatePayment, newCustomer, paymentBody, readiness, type Attempted } from './support/client';
import { query } from './support/db';
import { Deployment, type PaygateProcess } from './support/paygate';
import { score } from './support/scoreboard';
import { startPrivateTemporal, type PrivateTemporal } from './support/servers';
import { sleep } from './support/wait';
import { faultStack } from './setup';

const BEFORE = 4;
const DURING = 10;

describe('faults: the Temporal server is down while payments are being accepted', () => {
  let temporal: PrivateTemporal;
  let deployment: Deployment;
  let api: PaygateProcess;

  before(async function () {
    this.timeout(120_000);
    temporal = await startPrivateTemporal('outage');
    deployment = new Deployment('temporal', { ...faultStack.infra, temporalAddress: temporal.address }, { RECONCILE_INTERVAL_MS: '1000' });
    api = await deployment.startApi();
    await deployment.startWorker(api);
  });
  after(async function () {
    this.timeout(60_000);
    await deployment?.stopAll();
    await temporal?.stop();
  });

  it('when the server dies with payments in flight and new ones keep coming, then the api accepts them (202) and, once the server is back on the same store, the reconciler starts each one once and every payment completes', async function () {
    this.timeout(240_000);
    const customer = await newCustomer(api.baseUrl);
    const attempts: Attempted[] = [];

    // In flight when the server dies: accepted and started, not finished (no callback: they settle by polling).
    for (let i = 0; i < BEFORE; i += 1) attempts.push(await initiatePayment(api.baseUrl, customer, paymentBody('mpesa_polled', i)));
    await temporal.crash();
    // The jobs process (its reconciler) boots during the outage: its first connection to Temporal fails.
    await deployment.startJobs();

    // Customers keep paying, several at once.
    const latencies: number[] = [];
    attempts.push(
      ...(await Promise.all(
        Array.from({ length: DURING }, async (_, i) => {
          const started = Date.now();
          const attempt = await initiatePayment(
            api.baseUrl,
            customer,
            paymentBody(i % 2 === 0 ? 'mpesa_callback' : 'bank_transfer', 100 + i),
          );
          latencies.push(Date.now() - started);
          return attempt;
        }),
      )),
    );
    const during = attempts.slice(BEFORE);
    const outageAnswers = during.map((a) => a.answer?.status ?? 0);
    const unready = await readiness(api.baseUrl);
    const [unstarted] = await query<{ n: string }>(
      'SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND workflow_started_at IS NULL',
      [during.map((a) => a.orderId).filter(Boolean)],
    );
    await sleep(2000);

    await temporal.start();
    const back = Date.now();
    const open = await awaitTerminal(
      attempts.filter((a) => a.orderId).map((a) => a.orderId!),
      90_000,
    );
    const catchUpMs = Date.now() - back;
    const audit = await auditPayments(attempts, {
      customerIds: [customer.userId],
      temporalAddress: temporal.address,
      taskQueue: deployment.taskQueue,
    });
    score({
      scenario: 'Temporal server down',
      injected: 1,
      recovered: open.length === 0 ? 1 : 0,
      requests: audit.requests,
      lost: audit.lost.length,
      duplicates: duplicateCount(audit),
      note: `${DURING} payments while down answered ${[...new Set(outageAnswers)].join('/')} in ${Math.min(...latencies)}-${Math.max(...latencies)} ms; all ${audit.accepted} finished ${catchUpMs} ms after the server came back`,
    });

    expect(outageAnswers, 'answers while Temporal is down').to.deep.equal(Array<number>(DURING).fill(202));
    for (const a of during) expect(a.attempts, 'accepted at the first try').to.equal(1);
    expect(Number(unstarted.n), 'orders waiting for the reconciler').to.equal(DURING);
    expect(unready.status).to.equal(503);
    expect(unready.checks.temporal).to.equal('down');
    expect(audit.lost, 'requests lost').to.deep.equal([]);
    expect(audit.completed).to.equal(BEFORE + DURING);
    expect(audit.duplicates).to.deep.equal({ orders: 0, ledger: 0, events: 0, transfers: 0, workflowRuns: 0 });
    for (const order of audit.orders) {
      expect(order.ledger, `ledger of ${order.orderId}`).to.deep.equal({ hold: 1, settle: 1 });
      expect(order.workflowRuns, `workflow runs of ${order.orderId}`).to.equal(1);
    }
    expect(deployment.unexpectedExits(), 'processes that died on their own').to.equal(0);
  });
});
