import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { config, reloadConfig } from '../platform/config';
import { uuidv7 } from '../platform/ids';
import { closeTemporal, temporalClient } from '../platform/temporal';
import { Order } from '../models';
import { reconcileUnstartedOrders, startPaymentWorkflow } from '../workflows/client';
import { paymentWorkflowId } from '../workflows/shared';
import { initiate, metricsAuth, mpesaPayment, newUser, waitForOrder, type TestUser } from './support/api';
import { ledgerKindsOf, rows } from './support/db';
import { mobileMoneyTransfersOf } from './support/rails';
import { stack } from './support/stack';
import { until } from './support/wait';

const WORKER_ENTRY = path.resolve(__dirname, '..', 'workers', 'temporal-worker.js');

function startWorkerProcess(taskQueue: string): ChildProcess {
  return spawn(process.execPath, [WORKER_ENTRY], {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
}

/** An accepted order, recorded as the api records it, whose workflow has not been started. */
async function acceptedOrder(user: TestUser, destination = { provider: 'mpesa', phone: '+254712345678' }): Promise<string> {
  const id = uuidv7();
  await Order.create({
    id,
    userId: user.id,
    idempotencyKey: randomUUID(),
    amountMinor: '120000',
    kesEquivalentMinor: '120000',
    currency: 'KES',
    method: 'mobile_money',
    destination,
    description: null,
    reference: null,
    workflowId: paymentWorkflowId(id),
    createdAt: new Date(Date.now() - 60_000),
  });
  return id;
}

describe('recovery', () => {
  describe('when the Temporal worker is killed mid-payment and restarted', () => {
    it('then the payment completes once, the rail saw one transfer and the ledger is posted once', async function () {
      this.timeout(90_000);
      const user = await newUser();
      // No callback from this number: the workflow must survive the crash and resolve by polling.
      const orderId = await acceptedOrder(user, { provider: 'mpesa', phone: '+254700000999' });
      const taskQueue = `kill-${randomUUID()}`;
      let worker = startWorkerProcess(taskQueue);
      try {
        await startPaymentWorkflow(orderId, taskQueue);
        await until('the transfer to reach the rail', async () => {
          const [order] = await rows<{ rail_reference: string | null }>('SELECT rail_reference FROM orders WHERE id = :orderId', {
            orderId,
          });
          return order?.rail_reference ?? undefined;
        });
        worker.kill('SIGKILL');
        await new Promise((r) => worker.once('exit', r));
        const [midway] = await rows<{ status: string }>('SELECT status FROM orders WHERE id = :orderId', { orderId });
        expect(midway.status).to.equal('processing');

        worker = startWorkerProcess(taskQueue);
        // The rail activities heartbeat, so the dead worker's call is retried within seconds; the bound is generous.
        const order = await waitForOrder(user, orderId, 60_000);
        expect(order.status).to.equal('completed');
        expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold', 'settle']);
        expect(await mobileMoneyTransfersOf(orderId)).to.have.length(1);
        expect(order.events.map((e) => e.status)).to.deep.equal(['screening', 'processing', 'completed']);
      } finally {
        worker.kill('SIGKILL');
      }
    });
  });

  describe('when an accepted order never had its workflow started', () => {
    it('then the reconciler starts it, once, and it completes', async () => {
      const user = await newUser();
      const orderId = await acceptedOrder(user);
      expect(await reconcileUnstartedOrders(0)).to.be.greaterThanOrEqual(1);
      const order = await waitForOrder(user, orderId);
      expect(order.status).to.equal('completed');
      const [row] = await rows<{ workflow_started_at: Date | null }>('SELECT workflow_started_at FROM orders WHERE id = :orderId', {
        orderId,
      });
      expect(row.workflow_started_at).to.not.equal(null);
      expect(await rows('SELECT 1 FROM orders WHERE id = :orderId AND workflow_started_at IS NULL', { orderId })).to.have.length(0);
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold', 'settle']);
    });

    it('then reconciling an order whose workflow already finished never runs it a second time', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment());
      const orderId = (res.body as { order_id: string }).order_id;
      expect((await waitForOrder(user, orderId)).status).to.equal('completed');
      // As if the start had been lost: the reconciler sees an order with no recorded workflow start.
      await Order.update({ workflowStartedAt: null }, { where: { id: orderId } });
      await reconcileUnstartedOrders(0);
      const runs = [];
      for await (const run of temporalClient().workflow.list({ query: `WorkflowId = '${paymentWorkflowId(orderId)}'` })) runs.push(run);
      expect(runs).to.have.length(1);
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold', 'settle']);
      expect(await rows('SELECT 1 FROM orders WHERE id = :orderId AND workflow_started_at IS NOT NULL', { orderId })).to.have.length(1);
    });
  });

  describe('when Temporal is unreachable while a payment is initiated', () => {
    /** The api's `paygate_payment_starts_deferred_total` for one reason, read from /metrics. */
    async function deferredStarts(reason: string): Promise<number> {
      const text = await (await fetch(`${stack.baseUrl}/metrics`, { headers: metricsAuth() })).text();
      const line = text.split('\n').find((l) => l.startsWith(`paygate_payment_starts_deferred_total{reason="${reason}"}`));
      return line === undefined ? 0 : Number(line.split(' ').pop());
    }

    it('then the api still accepts it, and the reconciler completes it once Temporal is back', async function () {
      this.timeout(60_000);
      const user = await newUser();
      const realAddress = config().temporal.address;
      process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
      reloadConfig();
      await closeTemporal();
      const failedBefore = await deferredStarts('start_failed');
      const backingOffBefore = await deferredStarts('backing_off');
      const orderIds: string[] = [];
      try {
        // The first start fails; the next, moments later, is left to the reconciler without trying.
        for (let i = 0; i < 2; i += 1) {
          const res = await initiate(user, mpesaPayment());
          expect(res.status, JSON.stringify(res.body)).to.equal(202);
          orderIds.push((res.body as { order_id: string }).order_id);
        }
        const started = await rows<{ workflow_started_at: Date | null }>('SELECT workflow_started_at FROM orders WHERE id IN (:orderIds)', {
          orderIds,
        });
        expect(started.map((r) => r.workflow_started_at)).to.deep.equal([null, null]);
        expect(await deferredStarts('start_failed')).to.equal(failedBefore + 1);
        expect(await deferredStarts('backing_off')).to.equal(backingOffBefore + 1);
      } finally {
        process.env.TEMPORAL_ADDRESS = realAddress;
        reloadConfig();
        await closeTemporal();
      }
      await reconcileUnstartedOrders(0);
      for (const orderId of orderIds) {
        const order = await waitForOrder(user, orderId);
        expect(order.status).to.equal('completed');
      }
    });

    it('then a payment after the outage is started by the api itself, not left to the reconciler', async function () {
      this.timeout(30_000);
      const user = await newUser();
      const res = await initiate(user, mpesaPayment());
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const orderId = (res.body as { order_id: string }).order_id;
      // No reconciler runs in the suite's stack: the workflow exists because the api started it.
      await temporalClient().workflow.getHandle(paymentWorkflowId(orderId)).describe();
      expect((await waitForOrder(user, orderId)).status).to.equal('completed');
    });
  });
});
