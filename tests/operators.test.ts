import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Queue } from 'bullmq';
import { expect } from 'chai';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { config } from '../platform/config';
import { redis } from '../platform/redis';
import { temporalClient } from '../platform/temporal';
import { uuidv7 } from '../platform/ids';
import { Order } from '../models';
import { METRIC_QUEUES, QUEUE_STATES } from '../api/metrics';
import { PAYGATE_METHOD, PAYGATE_ORDER_ID, PAYGATE_STATUS, PAYGATE_USER_ID } from '../workflows/search-attributes';
import { PAYMENT_WORKFLOW, paymentWorkflowId, type PaymentWorkflowInput } from '../workflows/shared';
import {
  api,
  blocklist,
  completedPayment,
  initiate,
  metricsAuth,
  mpesaPayment,
  newUser,
  postAppeal,
  uniqueKenyanPhone,
  waitForOrder,
} from './support/api';
import { rows } from './support/db';
import { freePort, until } from './support/processes';

/** One sample of a series in Prometheus text, by its exact label set; undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (match && match[1] === name && match[2] === wanted) return Number(match[3]);
  }
  return undefined;
}

async function scrape(): Promise<string> {
  const res = await api().get('/metrics').set(metricsAuth());
  expect(res.status).to.equal(200);
  return res.text;
}

/** Scrape until `probe` finds what it waits for: the figures are read at most every METRICS_CACHE_MS. */
const scrapeUntil = (what: string, probe: (text: string) => boolean): Promise<string> =>
  until(
    what,
    async () => {
      const text = await scrape();
      return probe(text) ? text : undefined;
    },
    config().metrics.cacheMs + 10_000,
    250,
  );

/** Visibility is eventually consistent: list until the query finds something, within a bounded wait. */
async function listUntilFound(query: string): Promise<WorkflowExecutionInfo[]> {
  return until(
    `workflows matching ${query}`,
    async () => {
      const found: WorkflowExecutionInfo[] = [];
      for await (const execution of temporalClient().workflow.list({ query })) found.push(execution);
      return found.length > 0 ? found : undefined;
    },
    15_000,
    200,
  );
}

describe('operators', () => {
  describe('when payments end, completed and failed', () => {
    it('then /metrics counts the orders by status and method, and the counts go up', async function () {
      this.timeout(60_000);
      const before = await scrape();
      const completedBefore = sample(before, 'paygate_payments', { status: 'completed', method: 'mobile_money' });
      const failedBefore = sample(before, 'paygate_payments', { status: 'failed', method: 'bank_transfer' });
      expect(completedBefore, 'the completed mobile-money series').to.be.a('number');
      expect(failedBefore, 'the failed bank-transfer series').to.be.a('number');

      const user = await newUser();
      await completedPayment(user);
      const refused = await initiate(
        user,
        mpesaPayment({
          method: 'bank_transfer',
          destination: { bank_code: '01', account_number: '1234560000', account_name: 'Jane Doe' },
        }),
      );
      expect(refused.status, JSON.stringify(refused.body)).to.equal(202);
      expect((await waitForOrder(user, (refused.body as { order_id: string }).order_id)).status).to.equal('failed');

      const after = await scrapeUntil(
        'the outcomes to be counted',
        (text) =>
          sample(text, 'paygate_payments', { status: 'completed', method: 'mobile_money' })! >= completedBefore! + 1 &&
          sample(text, 'paygate_payments', { status: 'failed', method: 'bank_transfer' })! >= failedBefore! + 1,
      );
      expect(after).to.include('# TYPE paygate_payments gauge');
      // The figures are the database's: the same totals, whichever process answers the scrape.
      const [db] = await rows<{ n: number }>(
        "SELECT count(*)::int AS n FROM orders WHERE status = 'completed' AND method = 'mobile_money'",
      );
      expect(sample(after, 'paygate_payments', { status: 'completed', method: 'mobile_money' })).to.be.at.most(db.n);
      expect(sample(after, 'paygate_payments', { status: 'reversed', method: 'crypto' }), 'a pair without orders is zero').to.be.a(
        'number',
      );
      expect(sample(after, 'paygate_appeals', { status: 'open' })).to.be.a('number');
    });
  });

  describe('when the queues are scraped', () => {
    it('then every queue has a depth for each state, and a delayed job is counted', async function () {
      this.timeout(30_000);
      const queue = new Queue(METRIC_QUEUES[0], { connection: redis(), prefix: config().queuePrefix });
      const job = await queue.add(`operators-probe-${randomUUID()}`, {}, { delay: 3_600_000 });
      try {
        const expected = (await queue.getJobCounts('delayed')).delayed;
        const text = await scrapeUntil(
          'the delayed job to be counted',
          (t) => sample(t, 'paygate_queue_jobs', { queue: METRIC_QUEUES[0], state: 'delayed' }) === expected,
        );
        for (const name of METRIC_QUEUES) {
          for (const state of QUEUE_STATES) {
            const value = sample(text, 'paygate_queue_jobs', { queue: name, state });
            expect(value, `${name} ${state}`).to.be.a('number');
            expect(Number.isInteger(value) && value! >= 0, `${name} ${state} = ${value}`).to.equal(true);
          }
        }
        expect(sample(text, 'paygate_metrics_source_up', { source: 'redis' })).to.equal(1);
      } finally {
        await job.remove();
        await queue.close();
      }
    });
  });

  describe('when the catalogues have been refreshed', () => {
    it('then the age of each refresh is the time since it, in seconds', async () => {
      const refreshes = await rows<{ catalogue: string; refreshed_at: Date }>('SELECT catalogue, refreshed_at FROM catalogue_refreshes');
      expect(refreshes.map((r) => r.catalogue)).to.include.members(['exchanges', 'banks']);
      const text = await scrape();
      const scrapedAt = Date.now();
      for (const { catalogue, refreshed_at } of refreshes) {
        const age = sample(text, 'paygate_catalogue_refresh_age_seconds', { catalogue });
        const expected = (scrapedAt - new Date(refreshed_at).getTime()) / 1000;
        expect(age, catalogue).to.be.a('number');
        // Read a moment before (the cache may hold the refresh time, never the age).
        expect(age!, catalogue).to.be.within(expected - 5, expected + 0.5);
        expect(age!, catalogue).to.be.at.least(0);
      }
    });
  });

  describe('when a route has just been called', () => {
    it('then the latency histogram has it under its route pattern and status', async () => {
      const user = await newUser();
      const order = await completedPayment(user);
      expect((await api().get(`/api/v1/payments/orders/${order.order_id}`).set(user.auth)).status).to.equal(200);
      const text = await scrape();
      const count = sample(text, 'paygate_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/v1/payments/orders/:order_id',
        status: '200',
      });
      expect(count).to.be.at.least(1);
      expect(text).not.to.include(order.order_id);
    });
  });

  describe('when Redis cannot be reached by the api', () => {
    it('then /metrics still answers 200, without the queue depths, and says the source is down', async function () {
      this.timeout(30_000);
      const port = await freePort();
      const deadRedis = await freePort();
      const child = spawn(process.execPath, [path.resolve(__dirname, '..', 'api', 'server.js')], {
        env: { ...process.env, PORT: String(port), REDIS_URL: `redis://127.0.0.1:${deadRedis}`, LOG_LEVEL: 'silent' },
        stdio: 'ignore',
      });
      try {
        const text = await until(
          'the second api to answer',
          async () => {
            try {
              const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: metricsAuth() });
              return res.status === 200 ? res.text() : undefined;
            } catch {
              return undefined;
            }
          },
          20_000,
          200,
        );
        expect(sample(text, 'paygate_metrics_source_up', { source: 'redis' })).to.equal(0);
        expect(text).not.to.match(/^paygate_queue_jobs\{/m);
        // What Postgres answers is still there.
        expect(sample(text, 'paygate_metrics_source_up', { source: 'postgres' })).to.equal(1);
        expect(sample(text, 'paygate_payments', { status: 'completed', method: 'mobile_money' })).to.be.a('number');
      } finally {
        child.kill('SIGTERM');
        await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
      }
    });
  });

  describe('when an operator filters payment workflows by search attribute', () => {
    it('then a completed payment is found by PaygateStatus and PaygateOrderId, with its user, method and summary', async function () {
      this.timeout(60_000);
      const user = await newUser();
      const order = await completedPayment(user);
      const [found, ...others] = await listUntilFound(`PaygateStatus = 'completed' AND PaygateOrderId = '${order.order_id}'`);
      expect(others).to.have.length(0);
      expect(found.workflowId).to.equal(paymentWorkflowId(order.order_id));
      expect(found.type).to.equal(PAYMENT_WORKFLOW);
      expect(found.typedSearchAttributes.get(PAYGATE_USER_ID)).to.equal(user.id);
      expect(found.typedSearchAttributes.get(PAYGATE_METHOD)).to.equal('mobile_money');
      expect(found.typedSearchAttributes.get(PAYGATE_STATUS)).to.equal('completed');

      const handle = temporalClient().workflow.getHandle(paymentWorkflowId(order.order_id));
      const described = await handle.describe();
      expect(await described.staticSummary()).to.equal('KES 1500.00 mobile_money to +2547…5678');
      expect(described.memo).to.deep.include({ orderId: order.order_id, userId: user.id, method: 'mobile_money' });

      // Filtered by another status, it is not there; by its user, it is.
      const failed: string[] = [];
      for await (const w of temporalClient().workflow.list({
        query: `PaygateStatus = 'failed' AND PaygateOrderId = '${order.order_id}'`,
      })) {
        failed.push(w.workflowId);
      }
      expect(failed).to.deep.equal([]);
      const byUser = await listUntilFound(`PaygateUserId = '${user.id}' AND WorkflowType = '${PAYMENT_WORKFLOW}'`);
      expect(byUser.map((w) => w.workflowId)).to.include(paymentWorkflowId(order.order_id));
    });

    it('then a failed payment is found under PaygateStatus failed', async function () {
      this.timeout(60_000);
      const user = await newUser();
      const res = await initiate(user, mpesaPayment({ destination: { provider: 'mpesa', phone: '+254700001032' } }));
      const orderId = (res.body as { order_id: string }).order_id;
      expect((await waitForOrder(user, orderId)).status).to.equal('failed');
      const [found] = await listUntilFound(`PaygateStatus = 'failed' AND PaygateOrderId = '${orderId}'`);
      expect(found.workflowId).to.equal(paymentWorkflowId(orderId));
    });

    it('then an appeal is found with its order, as open', async function () {
      this.timeout(60_000);
      const user = await newUser();
      const order = await completedPayment(user);
      const appeal = await postAppeal(user, {
        order_id: order.order_id,
        reason: 'payment_not_received',
        description: 'the money never arrived',
        evidence: [],
      });
      expect(appeal.status, JSON.stringify(appeal.body)).to.equal(201);
      const [found] = await listUntilFound(`WorkflowType = 'appeal' AND PaygateOrderId = '${order.order_id}' AND PaygateStatus = 'open'`);
      expect(found.workflowId).to.equal(`appeal-${(appeal.body as { appeal_id: string }).appeal_id}`);
      expect(found.typedSearchAttributes.get(PAYGATE_USER_ID)).to.equal(user.id);
      const summary = await (await temporalClient().workflow.getHandle(found.workflowId).describe()).staticSummary();
      expect(summary).to.equal(`appeal of order ${order.order_id}: payment_not_received`);

      // Once decided, its status follows.
      const staff = await newUser({ roles: ['user', 'compliance'] });
      const approved = await api()
        .put(`/api/v1/appeals/${(appeal.body as { appeal_id: string }).appeal_id}/approve`)
        .set(staff.auth)
        .send({ note: 'refund it' });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      const [decided] = await listUntilFound(
        `WorkflowType = 'appeal' AND PaygateOrderId = '${order.order_id}' AND PaygateStatus = 'approved'`,
      );
      expect(decided.workflowId).to.equal(found.workflowId);
    });
  });

  describe('when a compliance-rejected payment is resubmitted on appeal', () => {
    it('then the rejected one is found as rejected, and the new one with its owner and method, as completed', async function () {
      this.timeout(60_000);
      const staff = await newUser({ roles: ['user', 'compliance'] });
      const phone = uniqueKenyanPhone();
      await blocklist(staff, { type: 'phone', value: phone });
      const owner = await newUser();
      const res = await initiate(owner, mpesaPayment({ destination: { provider: 'mpesa', phone } }));
      const rejectedId = (res.body as { order_id: string }).order_id;
      expect((await waitForOrder(owner, rejectedId)).status).to.equal('rejected');
      await listUntilFound(`PaygateStatus = 'rejected' AND PaygateOrderId = '${rejectedId}'`);

      const appeal = await postAppeal(owner, {
        order_id: rejectedId,
        reason: 'compliance_rejection',
        description: 'that is my own number',
        evidence: [],
      });
      expect(appeal.status, JSON.stringify(appeal.body)).to.equal(201);
      const approved = await api()
        .put(`/api/v1/appeals/${(appeal.body as { appeal_id: string }).appeal_id}/approve`)
        .set(staff.auth)
        .send({ note: 'verified', action: 'resubmit' });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      const newId = (approved.body as { resolution: { resubmitted_order_id: string } }).resolution.resubmitted_order_id;
      expect((await waitForOrder(owner, newId)).status).to.equal('completed');

      const [found] = await listUntilFound(`PaygateStatus = 'completed' AND PaygateOrderId = '${newId}'`);
      expect(found.workflowId).to.equal(paymentWorkflowId(newId));
      expect(found.typedSearchAttributes.get(PAYGATE_USER_ID)).to.equal(owner.id);
      expect(found.typedSearchAttributes.get(PAYGATE_METHOD)).to.equal('mobile_money');
      const summary = await (await temporalClient().workflow.getHandle(found.workflowId).describe()).staticSummary();
      expect(summary).to.equal(
        `resubmission of order ${rejectedId}, approved on appeal ${(appeal.body as { appeal_id: string }).appeal_id}`,
      );
    });
  });

  describe('when a payment workflow was started without search attributes (a namespace that lacks them)', () => {
    it('then it completes without upserting any, and its history and a tracked one replay deterministically', async function () {
      this.timeout(90_000);
      const user = await newUser();
      const id = uuidv7();
      await Order.create({
        id,
        userId: user.id,
        idempotencyKey: randomUUID(),
        amountMinor: '120000',
        kesEquivalentMinor: '120000',
        currency: 'KES',
        method: 'mobile_money',
        destination: { provider: 'mpesa', phone: '+254712345678' },
        description: null,
        reference: null,
        workflowId: paymentWorkflowId(id),
      });
      const cfg = config();
      const input: PaymentWorkflowInput = {
        orderId: id,
        pollAfterMs: cfg.payments.pollAfterMs,
        settleTimeoutMs: cfg.payments.settleTimeoutMs,
      };
      const bare = await temporalClient().workflow.start(PAYMENT_WORKFLOW, {
        workflowId: paymentWorkflowId(id),
        taskQueue: cfg.temporal.taskQueue,
        args: [input],
      });
      expect(await bare.result()).to.deep.equal({ orderId: id, status: 'completed' });
      const bareHistory = await bare.fetchHistory();
      const upserts = (bareHistory.events ?? []).filter((e) => e.upsertWorkflowSearchAttributesEventAttributes);
      const upserted = upserts.flatMap((e) =>
        Object.keys(e.upsertWorkflowSearchAttributesEventAttributes!.searchAttributes?.indexedFields ?? {}),
      );
      expect(upserted.filter((name) => name.startsWith('Paygate'))).to.deep.equal([]);
      expect((await bare.describe()).typedSearchAttributes.get(PAYGATE_ORDER_ID)).to.equal(undefined);

      const tracked = await completedPayment(user);
      // The order shows completed once the settlement commits, before the workflow task that records it: the whole run.
      const trackedHandle = temporalClient().workflow.getHandle(paymentWorkflowId(tracked.order_id));
      await trackedHandle.result();
      const trackedHistory = await trackedHandle.fetchHistory();
      const trackedUpserts = (trackedHistory.events ?? [])
        .filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)
        .flatMap((e) => Object.keys(e.upsertWorkflowSearchAttributesEventAttributes!.searchAttributes?.indexedFields ?? {}));
      expect(trackedUpserts).to.include('PaygateStatus');

      const workflowsPath = require.resolve('../workflows');
      await Worker.runReplayHistory({ workflowsPath }, bareHistory, paymentWorkflowId(id));
      await Worker.runReplayHistory({ workflowsPath }, trackedHistory, paymentWorkflowId(tracked.order_id));
    });
  });
});
