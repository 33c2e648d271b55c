import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DEFAULT_RULE_SET, type RuleSetContent } from '../domain/monitoring/rule-set';
import { caseOrders } from '../repositories/cases';
import { evaluationsOf } from '../repositories/monitoring';
import { evaluateMovement } from '../services/monitoring-service';
import { api, kesAvailable, mpesaPayment, newUser, uniqueKenyanPhone, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { rows } from './support/db';
import { fundWallets } from './support/funding';
import { until } from './support/wait';

/**
 * Transaction monitoring of bulk payouts (docs/monitoring.md#bulk-payouts): a batch is judged once, as one
 * movement, when it is accepted — a review waits for a staff member's approval, a refusal cancels it and returns
 * its hold — and each item is judged again when it is paid, without its own batch's other items in its window;
 * a later movement counts the batch as one. The owner never learns that monitoring was the reason.
 */

interface BatchBody {
  batch_id: string;
  status: string;
  counts: Record<string, number>;
  sent_amount: string;
  returned_amount: string;
  approval_request_id: string | null;
}

interface Facts {
  facts: Record<string, string | number | boolean>;
}

const TIPPING_OFF = /monitor|structur|typolog|evaluation|rule|takeover|velocity|fan_out/i;

const item = (reference: string) => ({
  ...mpesaPayment({ amount: '100.00', destination: { provider: 'mpesa', phone: uniqueKenyanPhone() } }),
  reference,
});
const items = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => item(`${prefix}-${i + 1}`));

/** A customer opened today, with KES 10,000 in their wallet (funded while the default rules apply). */
async function newAccountPayer(): Promise<TestUser> {
  const payer = await newUser({ funded: false });
  await fundWallets(payer.id, { KES: 1_000_000n });
  return payer;
}

const postBatch = (user: TestUser, body: Record<string, unknown>, key: string = randomUUID()) =>
  api().post('/api/v1/payouts/batches').set(user.auth).set('Idempotency-Key', key).send(body);

const getBatch = async (user: TestUser, id: string) => (await api().get(`/api/v1/payouts/batches/${id}`).set(user.auth)).body as BatchBody;

const ended = (user: TestUser, id: string, timeoutMs = 80_000) =>
  until(
    `batch ${id} to end`,
    async () => {
      const batch = await getBatch(user, id);
      return batch.status === 'running' || batch.status === 'awaiting_approval' ? undefined : batch;
    },
    timeoutMs,
    250,
  );

async function putRules(staff: TestUser, content: RuleSetContent): Promise<void> {
  const current = await api().get('/api/v1/compliance/monitoring/rules').set(staff.auth);
  expect(current.status, current.text).to.equal(200);
  const res = await api()
    .put('/api/v1/compliance/monitoring/rules')
    .set(staff.auth)
    .send({ based_on_version: (current.body as { version: number }).version, ...content });
  expect(res.status, res.text).to.equal(200);
}

/**
 * The default rules with only the account-takeover typology, a new account's "high value" lowered to KES 300 so
 * that a batch of three KES 100 items reaches it while each item stays far below; `blockThreshold` 70 refuses.
 */
const takeoverAt300 = (blockThreshold = 140): RuleSetContent => {
  const parameters = structuredClone(DEFAULT_RULE_SET.parameters);
  parameters.new_account_high_value = { max_age_days: 7, amount_minor: { low: '20000', high: '30000' } };
  return {
    parameters,
    typologies: [{ id: 'account_takeover', weights: { new_account_high_value: 35 }, alert_threshold: 70, block_threshold: blockThreshold }],
  };
};

/** What the owner can read about their batch: the batch, its items and their events. */
async function ownerSees(owner: TestUser, batchId: string): Promise<string> {
  const batch = await api().get(`/api/v1/payouts/batches/${batchId}`).set(owner.auth);
  const list = await api().get('/api/v1/payouts/batches').set(owner.auth);
  const batchItems = await api().get(`/api/v1/payouts/batches/${batchId}/items`).set(owner.auth);
  const events = await api().get('/api/v1/events').set(owner.auth).query({ limit: 100 });
  for (const res of [batch, list, batchItems, events]) expect(res.status, res.text).to.equal(200);
  return JSON.stringify([batch.body, list.body, batchItems.body, events.body]);
}

const decide = (who: TestUser, requestId: string, decision: 'approve' | 'reject') =>
  api().post(`/api/v1/compliance/approvals/${requestId}/${decision}`).set(who.auth).send({ note: 'payroll confirmed with the customer' });

describe('transaction monitoring of bulk payouts', function () {
  this.timeout(120_000);
  let officer: TestUser;
  let restore: () => void;

  before(async () => {
    officer = await newUser({ roles: ['compliance'], funded: false });
    restore = withEnv({ MONITORING_ENABLED: 'true' });
    await putRules(officer, DEFAULT_RULE_SET);
  });

  after(async () => {
    await putRules(officer, DEFAULT_RULE_SET);
    restore();
  });

  describe('when a new account pays a batch of 60 items with the default rules', () => {
    let payer: TestUser;
    let batchId: string;
    let done: BatchBody;
    const key = randomUUID();
    const body = { items: items(60, 'SAL') };

    before(async () => {
      payer = await newAccountPayer();
      const res = await postBatch(payer, body, key);
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      batchId = (res.body as BatchBody).batch_id;
      done = await ended(payer, batchId);
    });

    it('then every item completes and none is held', async () => {
      expect(done.status).to.equal('completed');
      expect(done.counts).to.include({ completed: 60, rejected: 0, failed: 0 });
      expect(done.sent_amount).to.equal('6000.00');
      expect(await kesAvailable(payer)).to.equal('4000.00');
    });

    it('then the batch was judged once, as one movement of its KES total, and a retry judges it no more', async () => {
      const again = await postBatch(payer, body, key);
      expect(again.status, JSON.stringify(again.body)).to.equal(202);
      expect((again.body as BatchBody).batch_id).to.equal(batchId);
      const evaluations = await evaluationsOf('payout_batch', batchId);
      expect(evaluations).to.have.length(1);
      expect(evaluations[0]).to.deep.include({ customerId: payer.id, decision: 'pass' });
      expect((evaluations[0].ruleResults.new_account_high_value as Facts).facts.amount_minor).to.equal('600000');
    });

    it('then each item was judged on its own, its siblings left out of its window', async () => {
      const orders = await rows<{ id: string }>('SELECT id FROM orders WHERE payout_batch_id = :batchId', { batchId });
      expect(orders).to.have.length(60);
      for (const { id } of orders) {
        const [evaluation] = await evaluationsOf('payout', id);
        expect(evaluation?.decision, `order ${id}`).to.equal('pass');
        // The funding deposit and the item itself; its own payee only.
        expect((evaluation.ruleResults.velocity as Facts).facts.recent_count, `order ${id}`).to.equal(2);
        expect((evaluation.ruleResults.fan_out as Facts).facts.distinct_payees, `order ${id}`).to.equal(1);
      }
    });

    it('then a single payout afterwards counts the batch as one movement and one payee, and all its money', async () => {
      const next = await evaluateMovement({
        kind: 'payout',
        id: randomUUID(),
        customerId: payer.id,
        amountMinor: 10_000n,
        at: new Date(Date.now() + 1_000),
        counterparty: JSON.stringify({ provider: 'mpesa', phone: uniqueKenyanPhone() }),
      });
      // The funding deposit, the batch, and the payout itself.
      expect(next.results.velocity.facts.recent_count).to.equal(3);
      expect(next.results.fan_out.facts.distinct_payees).to.equal(2);
      expect(next.results.pass_through.facts.out_sum_minor).to.equal('610000');
    });
  });

  describe('when a batch is held for review at acceptance', () => {
    afterEach(() => putRules(officer, DEFAULT_RULE_SET));

    it('then it waits for approval under the four-eyes threshold, its owner cannot approve it, compliance staff can, and the owner never reads why', async () => {
      const payer = await newAccountPayer();
      await putRules(officer, takeoverAt300());
      const res = await postBatch(payer, { items: items(3, 'REV') });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const accepted = res.body as BatchBody;
      expect(accepted.status).to.equal('awaiting_approval');
      const requestId = accepted.approval_request_id ?? '';
      expect(requestId).to.match(/^[0-9a-f-]{36}$/);
      expect(await kesAvailable(payer)).to.equal('9700.00');

      expect((await decide(payer, requestId, 'approve')).status).to.equal(403);
      const request = await api().get(`/api/v1/compliance/approvals/${requestId}`).set(officer.auth);
      expect(request.status, request.text).to.equal(200);
      const [evaluation] = await evaluationsOf('payout_batch', accepted.batch_id);
      expect(evaluation.decision).to.equal('review');
      expect(request.body).to.deep.include({ kind: 'approve_payout_batch', subject_id: accepted.batch_id, status: 'pending' });
      const payload = (request.body as { payload: { reason: string; monitoring_evaluation_id: string } }).payload;
      expect(payload.reason).to.contain('transaction monitoring').and.to.contain('account_takeover');
      expect(payload.monitoring_evaluation_id).to.equal(evaluation.id);
      expect(await ownerSees(payer, accepted.batch_id)).not.to.match(TIPPING_OFF);

      const approved = await decide(officer, requestId, 'approve');
      expect(approved.status, approved.text).to.equal(200);
      const done = await ended(payer, accepted.batch_id);
      expect(done).to.include({ status: 'completed', sent_amount: '300.00' });
      expect(await ownerSees(payer, accepted.batch_id)).not.to.match(TIPPING_OFF);
      // The alert is in the owner's case, and the case's STR would list the orders the batch was paid by.
      const [alert] = await rows<{ case_id: string }>('SELECT case_id FROM monitoring_case_alerts WHERE evaluation_id = :id', {
        id: evaluation.id,
      });
      const paid = await rows<{ id: string }>('SELECT id FROM orders WHERE payout_batch_id = :id', { id: accepted.batch_id });
      expect((await caseOrders(alert.case_id)).map((o) => o.id)).to.have.members(paid.map((o) => o.id));
    });
  });

  describe('when a batch is refused at acceptance', () => {
    afterEach(() => putRules(officer, DEFAULT_RULE_SET));

    it('then nothing is sent, it reads cancelled with its whole hold returned, and the owner never reads why', async () => {
      const payer = await newAccountPayer();
      await putRules(officer, takeoverAt300(70));
      const res = await postBatch(payer, { items: items(3, 'REF') });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const refused = res.body as BatchBody;
      expect(refused).to.include({ status: 'cancelled', returned_amount: '300.00', sent_amount: '0.00', approval_request_id: null });
      expect(refused.counts.cancelled).to.equal(3);
      expect(await kesAvailable(payer)).to.equal('10000.00');
      const [hold] = await rows<{ balance: string }>(
        `SELECT coalesce((SELECT balance_minor::text FROM accounts WHERE account = :account AND currency = 'KES'), '0') AS balance`,
        { account: `hold:batch:${refused.batch_id}` },
      );
      expect(hold.balance).to.equal('0');
      const orders = await rows<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE payout_batch_id = :id', {
        id: refused.batch_id,
      });
      expect(orders[0].n).to.equal(0);
      expect((await evaluationsOf('payout_batch', refused.batch_id)).map((e) => e.decision)).to.deep.equal(['refuse']);
      expect(await ownerSees(payer, refused.batch_id)).not.to.match(TIPPING_OFF);
    });
  });

  describe('when monitoring is switched off (MONITORING_ENABLED=false)', () => {
    it('then a batch is not judged at acceptance and runs', async () => {
      const payer = await newAccountPayer();
      const off = withEnv({ MONITORING_ENABLED: 'false' });
      try {
        await putRules(officer, takeoverAt300(70));
        const res = await postBatch(payer, { items: items(3, 'OFF') });
        expect(res.status, JSON.stringify(res.body)).to.equal(202);
        const accepted = res.body as BatchBody;
        expect(accepted.status).to.equal('running');
        expect(await evaluationsOf('payout_batch', accepted.batch_id)).to.deep.equal([]);
        expect((await ended(payer, accepted.batch_id)).status).to.equal('completed');
      } finally {
        off();
        await putRules(officer, DEFAULT_RULE_SET);
      }
    });
  });
});
