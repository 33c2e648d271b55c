import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { config, reloadConfig } from '../platform/config';
import { database } from '../platform/database';
import { uuidv7 } from '../platform/ids';
import { temporalClient } from '../platform/temporal';
import { Order } from '../models';
import { SANDBOX_SLOW_PHONE } from '../connectors/sandbox';
import { PAYMENT_WORKFLOW, paymentStageQuery, paymentWorkflowId, railOutcomeSignal, type PaymentWorkflowInput } from '../workflows/shared';
import { PAYGATE_ORDER_ID, PAYGATE_OVERDUE, PAYGATE_STATUS, orderSearchAttributes } from '../workflows/search-attributes';
import { api, initiate, metricsAuth, mpesaPayment, newUser, waitForOrder, type OrderBody, type TestUser } from './support/api';
import { ledgerKindsOf, rows } from './support/db';
import { mobileMoneyTransfersOf, realRails } from './support/rails';
import { until } from './support/processes';
import { stack } from './support/stack';

/** Poll until the probe yields a value, within a generous bound: never an assertion on time. */
const eventually = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => until(what, probe, 30_000, 100);

/** Initiate a payment whose workflow gets a short settle deadline and a short poll cap. */
async function initiateWithShortDeadline(user: TestUser, body: Record<string, unknown>): Promise<string> {
  const saved = { settle: process.env.PAYMENT_SETTLE_TIMEOUT_MS, cap: process.env.PAYMENT_POLL_MAX_INTERVAL_MS };
  process.env.PAYMENT_SETTLE_TIMEOUT_MS = '1500';
  process.env.PAYMENT_POLL_MAX_INTERVAL_MS = '500';
  reloadConfig();
  try {
    const res = await initiate(user, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return (res.body as { order_id: string }).order_id;
  } finally {
    for (const [name, value] of [
      ['PAYMENT_SETTLE_TIMEOUT_MS', saved.settle],
      ['PAYMENT_POLL_MAX_INTERVAL_MS', saved.cap],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    reloadConfig();
  }
}

const orderOf = async (user: TestUser, orderId: string): Promise<OrderBody> =>
  (await api().get(`/api/v1/payments/orders/${orderId}`).set(user.auth)).body as OrderBody;

/** The order once its `overdue` event is recorded. */
const overdueOrder = (user: TestUser, orderId: string) =>
  eventually('the order to be flagged overdue', async () => {
    const order = await orderOf(user, orderId);
    return order.events.some((e) => e.status === 'overdue') ? order : undefined;
  });

/** `paygate_payments_overdue` from /metrics (read from Postgres, cached for METRICS_CACHE_MS). */
async function overdueMetric(): Promise<number | undefined> {
  const text = await (await fetch(`${stack.baseUrl}/metrics`, { headers: metricsAuth() })).text();
  const line = text.split('\n').find((l) => l.startsWith('paygate_payments_overdue '));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/** The slow sandbox transfer reaches its end at the provider (as a real RTGS does, hours later). */
async function railFinishes(orderId: string): Promise<void> {
  await database().query('UPDATE sandbox_transfers SET settles_at = now() WHERE idempotency_key = :orderId', { replacements: { orderId } });
}

/**
 * The slow transfer is a sandbox magic value, and the real connectors' fakes have no such provider: these
 * cases are registered on the sandbox rails only (not reported skipped under TEST_RAILS=real).
 */
const onSandboxRails = (title: string, body: () => void): void => {
  if (!realRails) describe(title, body);
};

describe('payments past the settle deadline', () => {
  onSandboxRails('when the rail has no definite answer by the deadline and the transfer succeeds later', () => {
    it('then the order stays processing, overdue, with its hold, and completes and settles once when the rail answers', async function () {
      this.timeout(90_000);
      const user = await newUser();
      const orderId = await initiateWithShortDeadline(
        user,
        mpesaPayment({ destination: { provider: 'mpesa', phone: SANDBOX_SLOW_PHONE } }),
      );

      const overdue = await overdueOrder(user, orderId);
      expect(overdue.status).to.equal('processing');
      expect(overdue.events.find((e) => e.status === 'overdue')?.detail).to.match(/no definite answer from the rail/);
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold']);
      const [flag] = await rows<{ overdue_at: Date | null }>('SELECT overdue_at FROM orders WHERE id = :orderId', { orderId });
      expect(flag.overdue_at).to.not.equal(null);
      await eventually('the overdue gauge to count the order', async () => ((await overdueMetric()) ?? 0) >= 1 || undefined);
      const described = await temporalClient().workflow.getHandle(paymentWorkflowId(orderId)).describe();
      expect(described.typedSearchAttributes.get(PAYGATE_OVERDUE)).to.equal('true');
      expect(described.typedSearchAttributes.get(PAYGATE_STATUS)).to.equal('processing');

      await railFinishes(orderId);
      const order = await waitForOrder(user, orderId, 60_000);
      expect(order.status).to.equal('completed');
      expect(order.events.map((e) => e.status)).to.deep.equal(['screening', 'processing', 'overdue', 'completed']);
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold', 'settle']);
      expect(await mobileMoneyTransfersOf(orderId)).to.have.length(1);
    });
  });

  onSandboxRails('when the rail has no definite answer by the deadline and the transfer fails later', () => {
    it('then the hold is kept while the outcome is unknown and released only when the rail says it failed', async function () {
      this.timeout(90_000);
      const user = await newUser();
      const orderId = await initiateWithShortDeadline(
        user,
        mpesaPayment({ amount: '1500.13', destination: { provider: 'mpesa', phone: SANDBOX_SLOW_PHONE } }),
      );

      expect((await overdueOrder(user, orderId)).status).to.equal('processing');
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold']);

      await railFinishes(orderId);
      const order = await waitForOrder(user, orderId, 60_000);
      expect(order.status).to.equal('failed');
      expect(order.failure_code).to.equal('insufficient_funds');
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold', 'release']);
    });
  });

  onSandboxRails('when a run awaiting the rail outgrows its history and continues as new', () => {
    it('then the new run keeps waiting under the same workflow id and takes the rail callback', async function () {
      this.timeout(90_000);
      const user = await newUser();
      const orderId = uuidv7();
      await Order.create({
        id: orderId,
        userId: user.id,
        idempotencyKey: randomUUID(),
        amountMinor: '120000',
        kesEquivalentMinor: '120000',
        currency: 'KES',
        method: 'mobile_money',
        destination: { provider: 'mpesa', phone: SANDBOX_SLOW_PHONE },
        description: null,
        reference: null,
        workflowId: paymentWorkflowId(orderId),
      });
      const input: PaymentWorkflowInput = { orderId, pollAfterMs: 100, settleTimeoutMs: 600_000, maxPollIntervalMs: 200, historyLimit: 40 };
      const first = await temporalClient().workflow.start(PAYMENT_WORKFLOW, {
        workflowId: paymentWorkflowId(orderId),
        taskQueue: config().temporal.taskQueue,
        args: [input],
        typedSearchAttributes: orderSearchAttributes({ orderId, userId: user.id, method: 'mobile_money', status: 'pending' }),
      });
      const handle = temporalClient().workflow.getHandle(paymentWorkflowId(orderId));
      await eventually('the run to continue as new', async () =>
        (await handle.describe()).runId !== first.firstExecutionRunId ? true : undefined,
      );

      expect(await handle.query(paymentStageQuery)).to.equal('awaiting_outcome');
      expect((await orderOf(user, orderId)).status).to.equal('processing');
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold']);

      const [{ rail_reference: reference }] = await rows<{ rail_reference: string }>(
        'SELECT rail_reference FROM orders WHERE id = :orderId',
        { orderId },
      );
      await handle.signal(railOutcomeSignal, { state: 'succeeded', reference });
      const order = await waitForOrder(user, orderId, 60_000);
      expect(order.status).to.equal('completed');
      expect(order.events.map((e) => e.status)).to.deep.equal(['screening', 'processing', 'completed']);
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold', 'settle']);
      expect(await mobileMoneyTransfersOf(orderId)).to.have.length(1);
      const last = await handle.describe();
      expect(last.runId).to.not.equal(first.firstExecutionRunId);
      expect(last.typedSearchAttributes.get(PAYGATE_ORDER_ID)).to.equal(orderId);
      expect(last.typedSearchAttributes.get(PAYGATE_STATUS)).to.equal('completed');
    });
  });
});
