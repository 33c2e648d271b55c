import { expect } from 'chai';
import { DEFAULT_RULE_SET, type RuleSetContent } from '../domain/monitoring/rule-set';
import { temporalClient } from '../platform/temporal';
import { evaluationsOf } from '../repositories/monitoring';
import { paymentStageQuery } from '../workflows/shared';
import { api, initiate, kesAvailable, mpesaPayment, newUser, postAppeal, waitForOrder, type OrderBody, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { ledgerKindsOf, rows } from './support/db';
import { fundWallets } from './support/funding';
import { expectProblem } from './support/problems';

/**
 * Transaction monitoring in the money's path (docs/monitoring.md#holds): a payout, trade or deposit is
 * evaluated before its money moves; `review` holds it in the screening review queue, with the same staff
 * decision and SLA, `refuse` rejects it as a screening block does, and the customer never learns which check
 * it was (no tipping off).
 */

interface Review {
  review_id: string;
  context: string;
  user_id: string | null;
  order_id: string | null;
  deposit_id: string | null;
  review_reason: string;
  status: string;
  score: string | null;
  entry: unknown;
  monitoring: {
    evaluation_id: string;
    rule_set_version: number;
    decision: string;
    typologies: { typology: string; score: number; alert_threshold: number; block_threshold: number; decision: string }[];
    rules: { rule: string; band: number; facts: { name: string; value: string }[] }[];
  } | null;
}

/** KES 3,500 and a reporting threshold of KES 4,000: two such payouts in a day are structuring. */
const JUST_BELOW = '3500.00';
const THRESHOLD_MINOR = '400000';

/** The default rules with only the structuring typology, its threshold lowered to KES 4,000. */
const structuring = (blockThreshold = 130): RuleSetContent => {
  const parameters = structuredClone(DEFAULT_RULE_SET.parameters);
  parameters.structuring = { reporting_threshold_minor: THRESHOLD_MINOR, floor_minor: '300000', count: { low: 2, high: 3 } };
  return {
    parameters,
    typologies: [{ id: 'structuring', weights: { structuring: 50 }, alert_threshold: 50, block_threshold: blockThreshold }],
  };
};

async function putRules(staff: TestUser, content: RuleSetContent): Promise<void> {
  const current = await api().get('/api/v1/compliance/monitoring/rules').set(staff.auth);
  expect(current.status, current.text).to.equal(200);
  const res = await api()
    .put('/api/v1/compliance/monitoring/rules')
    .set(staff.auth)
    .send({ based_on_version: (current.body as { version: number }).version, ...content });
  expect(res.status, res.text).to.equal(200);
}

async function pay(payer: TestUser): Promise<string> {
  const res = await initiate(payer, mpesaPayment({ amount: JUST_BELOW }));
  expect(res.status, JSON.stringify(res.body)).to.equal(202);
  return (res.body as { order_id: string }).order_id;
}

const reviewsOf = async (staff: TestUser): Promise<Review[]> => {
  const res = await api().get('/api/v1/compliance/reviews').set(staff.auth).query({ limit: 100 });
  expect(res.status, res.text).to.equal(200);
  return (res.body as { data: Review[] }).data;
};

async function reviewWhere(staff: TestUser, match: (r: Review) => boolean): Promise<Review> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = (await reviewsOf(staff)).find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error('no review recorded');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const decide = (staff: TestUser, reviewId: string, decision: 'confirm' | 'clear') =>
  api().post(`/api/v1/compliance/reviews/${reviewId}/decision`).set(staff.auth).send({ decision });

/** What the customer can read about their money: the order, and their events (the webhook bodies). */
async function customerSees(customer: TestUser, orderId: string): Promise<string> {
  const order = await api().get(`/api/v1/payments/orders/${orderId}`).set(customer.auth);
  const events = await api().get('/api/v1/events').set(customer.auth).query({ limit: 100 });
  expect(order.status, order.text).to.equal(200);
  expect(events.status, events.text).to.equal(200);
  return JSON.stringify([order.body, events.body]);
}

const TIPPING_OFF = /monitor|structur|typolog|evaluation|rule/i;

/** A first payout just below the threshold, completed: the second is the pattern. */
async function customerWithOnePayout(): Promise<TestUser> {
  return (await firstPayout()).customer;
}

async function firstPayout(): Promise<{ customer: TestUser; orderId: string }> {
  const customer = await newUser();
  const orderId = await pay(customer);
  expect((await waitForOrder(customer, orderId)).status).to.equal('completed');
  return { customer, orderId };
}

describe('transaction monitoring in the money path', function () {
  this.timeout(60_000);
  let officer: TestUser;
  let otherOfficer: TestUser;
  let restore: () => void;

  before(async () => {
    officer = await newUser({ roles: ['compliance'], funded: false });
    otherOfficer = await newUser({ roles: ['compliance'], funded: false });
    restore = withEnv({ MONITORING_ENABLED: 'true' });
  });

  after(async () => {
    await putRules(officer, DEFAULT_RULE_SET);
    restore();
  });

  describe('when a customer makes a second payout just below the reporting threshold within the day', () => {
    let customer: TestUser;
    let orderId: string;
    let review: Review;

    before(async () => {
      await putRules(officer, structuring());
      customer = await customerWithOnePayout();
      orderId = await pay(customer);
      review = await reviewWhere(officer, (r) => r.order_id === orderId);
    });

    it('then it is held before any money moves, and the customer sees only a compliance check in progress', async () => {
      const order = (await api().get(`/api/v1/payments/orders/${orderId}`).set(customer.auth)).body as OrderBody;
      expect(order.status).to.equal('screening');
      expect(await temporalClient().workflow.getHandle(`payment-${orderId}`).query(paymentStageQuery)).to.equal('awaiting_review');
      expect(await ledgerKindsOf(orderId)).to.deep.equal([]);
      expect(await customerSees(customer, orderId)).to.not.match(TIPPING_OFF);
    });

    it('then staff see the review in the screening queue, with the typology, its score and the rule’s numbers', async () => {
      expect(review).to.deep.include({ context: 'payment', user_id: customer.id, review_reason: 'monitoring', status: 'needs_review' });
      expect(review.entry).to.equal(null);
      expect(review.score).to.equal(null);
      expect(review.monitoring?.decision).to.equal('review');
      expect(review.monitoring?.typologies).to.deep.equal([
        { typology: 'structuring', score: 50, alert_threshold: 50, block_threshold: 130, decision: 'review' },
      ]);
      expect(review.monitoring?.rules.find((r) => r.rule === 'structuring')).to.deep.equal({
        rule: 'structuring',
        band: 1,
        facts: [
          { name: 'just_below_count', value: '2' },
          { name: 'just_below_sum_minor', value: '700000' },
          { name: 'reporting_threshold_minor', value: THRESHOLD_MINOR },
        ],
      });
      const [kept] = await evaluationsOf('payout', orderId);
      expect(kept.id).to.equal(review.monitoring?.evaluation_id);
    });

    it('then clearing the review lets the payout complete', async () => {
      const cleared = await decide(otherOfficer, review.review_id, 'clear');
      expect(cleared.status, cleared.text).to.equal(200);
      const order = await waitForOrder(customer, orderId);
      expect(order.status).to.equal('completed');
      expect(await ledgerKindsOf(orderId)).to.include('hold');
      expect(await customerSees(customer, orderId)).to.not.match(TIPPING_OFF);
      expectProblem(await decide(otherOfficer, review.review_id, 'confirm'), 409, 'conflict');
    });
  });

  describe('when staff confirm a payout held by monitoring', () => {
    it('then it is rejected with the same code and reason as any compliance block, and nothing moved', async () => {
      await putRules(officer, structuring());
      const customer = await customerWithOnePayout();
      const orderId = await pay(customer);
      const review = await reviewWhere(officer, (r) => r.order_id === orderId);

      expect((await decide(officer, review.review_id, 'confirm')).status).to.equal(200);
      const order = await waitForOrder(customer, orderId);
      expect(order).to.deep.include({
        status: 'rejected',
        failure_code: 'blocked_by_compliance',
        failure_reason: 'the payment was stopped by compliance screening',
      });
      expect(await ledgerKindsOf(orderId)).to.deep.equal([]);
      expect(await customerSees(customer, orderId)).to.not.match(TIPPING_OFF);
    });
  });

  describe('when the pattern reaches the block threshold', () => {
    it('then the payout is refused at once, neutrally, with no review and nothing moved', async () => {
      await putRules(officer, structuring(50));
      const customer = await customerWithOnePayout();
      const orderId = await pay(customer);
      const order = await waitForOrder(customer, orderId);
      expect(order).to.deep.include({
        status: 'rejected',
        failure_code: 'blocked_by_compliance',
        failure_reason: 'the payment was stopped by compliance screening',
      });
      expect(await ledgerKindsOf(orderId)).to.deep.equal([]);
      expect((await reviewsOf(officer)).filter((r) => r.order_id === orderId)).to.deep.equal([]);
      const [kept] = await evaluationsOf('payout', orderId);
      expect(kept.decision).to.equal('refuse');
      expect(await customerSees(customer, orderId)).to.not.match(TIPPING_OFF);
    });
  });

  describe('when a deposit just below the threshold follows another within the day', () => {
    it('then it waits in compliance suspense for a review, and clearing the review credits the wallet', async () => {
      await putRules(officer, structuring());
      const customer = await newUser({ funded: false });
      await fundWallets(customer.id, { KES: 350_000n });
      await fundWallets(customer.id, { KES: 350_000n });
      expect(await kesAvailable(customer)).to.equal('3500.00');

      const [held] = await rows<{ id: string; status: string; failure_code: string | null }>(
        `SELECT id, status, failure_code FROM deposits WHERE user_id = :user AND status = 'held'`,
        { user: customer.id },
      );
      expect(held).to.deep.include({ status: 'held', failure_code: null });
      const lines = await rows<{ account: string; kind: string }>(
        `SELECT e.account, t.kind FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
          WHERE t.deposit_id = :deposit AND e.direction = 'credit'`,
        { deposit: held.id },
      );
      expect(lines).to.deep.equal([{ account: 'suspense:compliance', kind: 'deposit_held' }]);
      const seen = await api().get(`/api/v1/wallets/deposits/${held.id}`).set(customer.auth);
      expect(seen.status, seen.text).to.equal(200);
      expect(seen.body).to.deep.include({ status: 'held', failure_code: null });
      expect(seen.text).to.not.match(TIPPING_OFF);

      const review = await reviewWhere(officer, (r) => r.deposit_id === held.id);
      expect(review).to.deep.include({ context: 'deposit', review_reason: 'monitoring', status: 'needs_review' });
      expect(review.monitoring?.rules.find((r) => r.rule === 'structuring')?.band).to.equal(1);

      expect((await decide(officer, review.review_id, 'clear')).status).to.equal(200);
      expect(await kesAvailable(customer)).to.equal('7000.00');
    });
  });

  describe('when a refund would complete the pattern', () => {
    it('then staff’s approval is refused with 409 naming the evaluation, nothing is paid and the customer sees an open appeal', async () => {
      await putRules(officer, structuring());
      const { customer, orderId } = await firstPayout();
      const appeal = await postAppeal(customer, {
        order_id: orderId,
        reason: 'wrong_amount',
        description: 'I was charged too much.',
        evidence: [],
      });
      expect(appeal.status, appeal.text).to.equal(201);
      const appealId = (appeal.body as { appeal_id: string }).appeal_id;

      const approved = await api().put(`/api/v1/appeals/${appealId}/approve`).set(officer.auth).send({ note: 'checked', action: 'refund' });
      expectProblem(approved, 409, 'conflict');
      const [kept] = await evaluationsOf('refund', appealId);
      expect(kept.decision).to.equal('review');
      expect((approved.body as { detail: string }).detail).to.include(kept.id);
      expect(await ledgerKindsOf(orderId)).to.not.include('refund');

      const seen = await api().get(`/api/v1/appeals/${appealId}`).set(customer.auth);
      expect(seen.status, seen.text).to.equal(200);
      expect((seen.body as { status: string }).status).to.equal('open');
      expect(seen.text).to.not.match(TIPPING_OFF);
    });
  });

  describe('when monitoring is switched off (MONITORING_ENABLED=false)', () => {
    it('then the same pattern goes through and no evaluation is stored', async () => {
      await putRules(officer, structuring());
      const off = withEnv({ MONITORING_ENABLED: 'false' });
      try {
        const customer = await customerWithOnePayout();
        const orderId = await pay(customer);
        expect((await waitForOrder(customer, orderId)).status).to.equal('completed');
        expect(await evaluationsOf('payout', orderId)).to.deep.equal([]);
      } finally {
        off();
      }
    });
  });
});
