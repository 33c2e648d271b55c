import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import { auditPayments, awaitTerminal, duplicateCount } from './support/audit';
import { initiatePayment, newCustomer, paymentBody, type Attempted, type PaymentKind } from './support/client';
import { query } from './support/db';
import { Deployment, type PaygateProcess } from './support/paygate';
import { score } from './support/scoreboard';
import { seededRandom, sleep } from './support/wait';
import { faultStack } from './setup';

const KILLS = 20;
const KINDS: PaymentKind[] = ['mpesa_callback', 'mpesa_polled', 'bank_transfer'];

/** Where a payment stood when the worker died, read from the system of record. */
async function stageOf(orderId: string): Promise<string> {
  const [order] = await query<{ status: string; rail_reference: string | null }>(
    'SELECT status, rail_reference FROM orders WHERE id = $1',
    [orderId],
  );
  if (order.status !== 'processing') return order.status;
  return order.rail_reference ? 'processing, at the rail' : 'processing, funds held';
}

describe('faults: the Temporal worker is SIGKILLed in the middle of payments', () => {
  // FAULTS_SEED replays a schedule of kills; each run otherwise draws its own and prints it.
  const seed = process.env.FAULTS_SEED ? Number(process.env.FAULTS_SEED) : randomInt(2 ** 31);
  let deployment: Deployment;
  let api: PaygateProcess;
  let worker: PaygateProcess;

  before(async function () {
    this.timeout(120_000);
    deployment = new Deployment('kills', faultStack.infra);
    api = await deployment.startApi();
    worker = await deployment.startWorker(api);
  });
  after(async function () {
    this.timeout(60_000);
    await deployment?.stopAll();
  });

  it(`when the worker is killed at ${KILLS} random points of ${KILLS} payments and restarted each time, then every payment completes with one order, one set of ledger postings and one rail transfer`, async function () {
    this.timeout(300_000);
    console.log(`      seed ${seed} (FAULTS_SEED=${seed} replays this schedule of kills)`);
    const random = seededRandom(seed);
    const customer = await newCustomer(api.baseUrl);

    // Each kill is drawn across the lifecycle of an undisturbed payment of the same kind, measured here.
    const lifecycle = {} as Record<PaymentKind, number>;
    const coldStart = await initiatePayment(api.baseUrl, customer, paymentBody('mpesa_callback', 899));
    expect(await awaitTerminal([coldStart.orderId!], 30_000)).to.deep.equal([]);
    for (const kind of KINDS) {
      const started = Date.now();
      const warmUp = await initiatePayment(api.baseUrl, customer, paymentBody(kind, 900 + KINDS.indexOf(kind)));
      expect(warmUp.answer?.status).to.equal(202);
      expect(await awaitTerminal([warmUp.orderId!], 30_000)).to.deep.equal([]);
      lifecycle[kind] = Date.now() - started;
    }

    const attempts: Attempted[] = [];
    const stages: string[] = [];
    for (let i = 0; i < KILLS; i += 1) {
      const kind = KINDS[i % KINDS.length];
      const delay = Math.floor(random() * lifecycle[kind]);
      const attempt = await initiatePayment(api.baseUrl, customer, paymentBody(kind, i + 1));
      attempts.push(attempt);
      expect(attempt.answer?.status, JSON.stringify(attempt.answer?.body)).to.equal(202);
      await sleep(delay);
      await worker.kill();
      stages.push(await stageOf(attempt.orderId!));
      await worker.start();
    }

    // A client that lost its answer sends the same request with the same key: it gets the same order back.
    for (const [i, attempt] of attempts.entries()) {
      const again = await initiatePayment(api.baseUrl, customer, paymentBody(KINDS[i % KINDS.length], i + 1), { key: attempt.key });
      expect(again.orderId).to.equal(attempt.orderId);
      expect(again.answer?.headers.get('idempotent-replayed')).to.equal('true');
    }

    await awaitTerminal(
      attempts.map((a) => a.orderId!),
      120_000,
    );
    const audit = await auditPayments(attempts, {
      customerIds: [customer.userId],
      temporalAddress: faultStack.temporal.address,
      taskQueue: deployment.taskQueue,
    });
    const perStage = stages.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
    score({
      scenario: 'worker SIGKILL mid-payment',
      injected: KILLS,
      recovered: audit.completed,
      requests: audit.requests,
      lost: audit.lost.length,
      duplicates: duplicateCount(audit),
      note: `seed ${seed}; lifecycles ${KINDS.map((k) => `${k} ${lifecycle[k]} ms`).join(', ')}; stage at the kill: ${Object.entries(
        perStage,
      )
        .map(([s, n]) => `${s} ${n}`)
        .join(', ')}; submissions re-sent and absorbed by the rail's idempotency key: ${audit.resubmissions}`,
    });

    expect(audit.lost, 'requests lost').to.deep.equal([]);
    expect(audit.completed, 'payments completed').to.equal(KILLS);
    expect(audit.duplicates).to.deep.equal({ orders: 0, ledger: 0, events: 0, transfers: 0, workflowRuns: 0 });
    for (const order of audit.orders) {
      expect(order.ledger, `ledger of ${order.orderId}`).to.deep.equal({ hold: 1, settle: 1 });
      expect(order.unbalancedTransactions).to.equal(0);
      expect(order.events, `events of ${order.orderId}`).to.deep.equal({ screening: 1, processing: 1, completed: 1 });
      expect(order.transfers, `transfers of ${order.orderId}`).to.equal(1);
      expect(order.railReferenceMatches, `rail reference of ${order.orderId}`).to.equal(true);
      expect(order.workflowRuns, `workflow runs of ${order.orderId}`).to.equal(1);
    }
    expect(api.unexpectedExits + worker.unexpectedExits, 'processes that died on their own').to.equal(0);
  });
});
