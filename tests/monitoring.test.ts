import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DEFAULT_RULE_SET, type RuleSetContent } from '../domain/monitoring/rule-set';
import { evaluationsOf, insertRuleSet } from '../repositories/monitoring';
import { evaluateMovement } from '../services/monitoring-service';
import { api, completedPayment, newUser, type TestUser } from './support/api';
import { fundWallets } from './support/funding';
import { rows } from './support/db';
import { expectProblem } from './support/problems';

/**
 * Transaction monitoring (docs/monitoring.md): a movement is evaluated against the customer's history and the
 * current rules, and the evaluation is kept with the rules' version; compliance staff change the rules through
 * the API, each change a new audited version that applies from then on.
 */

interface RulesBody extends RuleSetContent {
  version: number;
  created_by: string | null;
}

const JUST_BELOW = 95_000_000n; // KES 950,000: just below the KES 1,000,000 reporting threshold

const readRules = async (who: TestUser) => {
  const res = await api().get('/api/v1/compliance/monitoring/rules').set(who.auth);
  expect(res.status, res.text).to.equal(200);
  return res.body as RulesBody;
};

/** Put `content` as the current rules, made from the version read just before. */
async function putRules(staff: TestUser, content: RuleSetContent): Promise<RulesBody> {
  const current = await readRules(staff);
  const res = await api()
    .put('/api/v1/compliance/monitoring/rules')
    .set(staff.auth)
    .send({ based_on_version: current.version, ...content });
  expect(res.status, res.text).to.equal(200);
  return res.body as RulesBody;
}

/** The default rules with only the structuring typology, so a test's decision has one cause. */
const structuringOnly = (): RuleSetContent => ({
  parameters: structuredClone(DEFAULT_RULE_SET.parameters),
  typologies: DEFAULT_RULE_SET.typologies.filter((t) => t.id === 'structuring'),
});

/** A customer whose wallet received two deposits of KES 950,000 in the last hours. */
async function structuringCustomer(): Promise<TestUser> {
  const customer = await newUser({ funded: false, kycStatus: 'verified' });
  await fundWallets(customer.id, { KES: JUST_BELOW });
  await fundWallets(customer.id, { KES: JUST_BELOW });
  return customer;
}

const deposit = (customer: TestUser) => ({
  kind: 'deposit' as const,
  id: randomUUID(),
  customerId: customer.id,
  amountMinor: JUST_BELOW,
  at: new Date(Date.now() + 1_000),
  counterparty: null,
});

describe('transaction monitoring', function () {
  this.timeout(60_000);
  let officer: TestUser;
  let admin: TestUser;

  before(async () => {
    officer = await newUser({ roles: ['compliance'], funded: false });
    admin = await newUser({ roles: ['admin'], funded: false });
  });

  describe('when a third deposit just below the reporting threshold follows two others within the day', () => {
    it('then it is held for review, and the evaluation kept says why in numbers, with the version it used', async () => {
      const rules = await putRules(officer, structuringOnly());
      const customer = await structuringCustomer();
      const movement = deposit(customer);

      const outcome = await evaluateMovement(movement);

      expect(outcome.decision).to.equal('review');
      expect(outcome.ruleSetVersion).to.equal(rules.version);
      expect(outcome.results.structuring).to.deep.equal({
        band: 2,
        facts: { just_below_count: 3, just_below_sum_minor: '285000000', reporting_threshold_minor: '100000000' },
      });
      expect(outcome.typologies.structuring).to.deep.include({ score: 100, decision: 'review' });
      const [kept] = await evaluationsOf('deposit', movement.id);
      expect(kept).to.deep.include({
        customerId: customer.id,
        ruleSetVersion: rules.version,
        decision: 'review',
        id: outcome.evaluationId,
      });
      expect(kept.ruleResults.structuring).to.deep.equal(outcome.results.structuring);
    });

    it('then the same deposits of another customer change nothing for this one', async () => {
      await putRules(officer, structuringOnly());
      await structuringCustomer();
      const quiet = await newUser({ funded: false, kycStatus: 'verified' });
      const outcome = await evaluateMovement(deposit(quiet));
      expect(outcome.decision).to.equal('pass');
      expect(outcome.results.structuring.facts.just_below_count).to.equal(1);
    });
  });

  describe('when the earlier deposits are older than the window', () => {
    it('then they count in the norm, not in the window, and the third deposit passes', async () => {
      await putRules(officer, structuringOnly());
      const customer = await structuringCustomer();
      await rows("UPDATE deposits SET created_at = now() - interval '25 hours' WHERE user_id = :id RETURNING id", { id: customer.id });
      const outcome = await evaluateMovement(deposit(customer));
      expect(outcome.decision).to.equal('pass');
      expect(outcome.results.structuring.facts.just_below_count).to.equal(1);
      expect(outcome.results.velocity.facts).to.include({ recent_count: 1, norm_count: 2 });
    });
  });

  describe('when earlier deposits lie whole days back, and one of them fails', () => {
    /** The per-day counts the database keeps for the customer, and the same counted again from orders and deposits. */
    const dayCounts = async (customer: TestUser) => ({
      kept: await rows<{ day: string; movements: number }>(
        `SELECT day::text AS day, movements FROM monitoring_customer_days WHERE customer_id = :id AND movements > 0 ORDER BY day`,
        { id: customer.id },
      ),
      recounted: await rows<{ day: string; movements: number }>(
        `SELECT day::text AS day, count(*)::int AS movements FROM (
           SELECT (created_at AT TIME ZONE 'UTC')::date AS day FROM orders WHERE user_id = :id AND status NOT IN ('rejected', 'failed')
           UNION ALL
           SELECT (created_at AT TIME ZONE 'UTC')::date FROM deposits WHERE user_id = :id AND status <> 'failed') m
         GROUP BY day ORDER BY day`,
        { id: customer.id },
      ),
    });

    it('then the norm and dormant windows count them from the days kept, and stop counting the failed one', async () => {
      await putRules(officer, structuringOnly());
      const customer = await structuringCustomer();
      const moved = await rows<{ id: string }>(
        "UPDATE deposits SET created_at = now() - interval '10 days' WHERE user_id = :id RETURNING id",
        {
          id: customer.id,
        },
      );
      expect(moved).to.have.length(2);
      let counts = await dayCounts(customer);
      expect(counts.kept).to.deep.equal(counts.recounted);
      const before = await evaluateMovement(deposit(customer));
      expect(before.results.velocity.facts).to.include({ recent_count: 1, norm_count: 2 });
      expect(before.results.dormant_reactivation.facts.movements_in_dormant_window).to.equal(2);

      await rows("UPDATE deposits SET status = 'failed' WHERE id = :id RETURNING id", { id: moved[0].id });
      counts = await dayCounts(customer);
      expect(counts.kept).to.deep.equal(counts.recounted);
      const after = await evaluateMovement(deposit(customer));
      expect(after.results.velocity.facts).to.include({ recent_count: 1, norm_count: 1 });
      expect(after.results.dormant_reactivation.facts.movements_in_dormant_window).to.equal(1);
    });

    it('then a movement evaluated days after it was stored is not counted in its own dormant window', async () => {
      await putRules(officer, structuringOnly());
      const customer = await newUser({ funded: false, kycStatus: 'verified' });
      await fundWallets(customer.id, { KES: JUST_BELOW });
      const [stored] = await rows<{ id: string }>(
        "UPDATE deposits SET created_at = now() - interval '3 days' WHERE user_id = :id RETURNING id",
        {
          id: customer.id,
        },
      );
      const itself = await evaluateMovement({ ...deposit(customer), id: stored.id });
      expect(itself.results.dormant_reactivation.facts.movements_in_dormant_window).to.equal(0);
      const another = await evaluateMovement(deposit(customer));
      expect(another.results.dormant_reactivation.facts.movements_in_dormant_window).to.equal(1);
    });
  });

  describe('when a customer has paid out to two payees today', () => {
    it('then a payout to one of them counts two distinct payees, and one to a new payee three', async () => {
      await putRules(officer, structuringOnly());
      const customer = await newUser({ kycStatus: 'verified' });
      const first = await completedPayment(customer);
      await completedPayment(customer);
      await completedPayment(customer, { destination: { provider: 'mpesa', phone: '+254712345679' } });
      const [stored] = await rows<{ destination: Record<string, string> }>('SELECT destination FROM orders WHERE id = :id', {
        id: first.order_id,
      });
      const payout = (counterparty: string) => ({ ...deposit(customer), kind: 'payout' as const, amountMinor: 150_000n, counterparty });

      const known = await evaluateMovement(payout(JSON.stringify(stored.destination)));
      expect(known.results.fan_out.facts.distinct_payees).to.equal(2);
      const fresh = await evaluateMovement(payout(JSON.stringify({ provider: 'mpesa', phone: '+254700000001' })));
      expect(fresh.results.fan_out.facts.distinct_payees).to.equal(3);
      expect(fresh.results.velocity.facts.recent_count).to.be.at.least(4);
    });
  });

  describe('when compliance staff raise the structuring count through the API', () => {
    it('then the next evaluation passes, the stored one keeps its version and result, and the change is audited', async () => {
      const before = await putRules(officer, structuringOnly());
      const customer = await structuringCustomer();
      const first = deposit(customer);
      expect((await evaluateMovement(first)).decision).to.equal('review');

      const raised = structuringOnly();
      raised.parameters.structuring.count = { low: 4, high: 6 };
      const after = await putRules(officer, raised);
      expect(after.version).to.equal(before.version + 1);
      expect(after.created_by).to.equal(officer.id);
      expect((await readRules(officer)).parameters.structuring.count).to.deep.equal({ low: 4, high: 6 });

      const second = await evaluateMovement(deposit(customer));
      expect(second.decision).to.equal('pass');
      expect(second.ruleSetVersion).to.equal(after.version);
      expect(second.results.structuring.band).to.equal(0);

      const [kept] = await evaluationsOf('deposit', first.id);
      expect(kept.ruleSetVersion).to.equal(before.version);
      expect(kept.decision).to.equal('review');
      expect((kept.ruleResults.structuring as { band: number }).band).to.equal(2);

      const trail = await api()
        .get('/api/v1/compliance/audit')
        .set(admin.auth)
        .query({ subject_type: 'monitoring_rule', subject_id: String(after.version) });
      expect(trail.status, trail.text).to.equal(200);
      const [entry] = (trail.body as { data: { action: string; actor: { user_id: string }; before: RulesBody; after: RulesBody }[] }).data;
      expect(entry.action).to.equal('monitoring_rule.changed');
      expect(entry.actor.user_id).to.equal(officer.id);
      expect(entry.before.version).to.equal(before.version);
      expect(entry.before.parameters.structuring.count).to.deep.equal(DEFAULT_RULE_SET.parameters.structuring.count);
      expect(entry.after.parameters.structuring.count).to.deep.equal({ low: 4, high: 6 });
    });
  });

  describe('when another process stores new rules after this one has evaluated with the old ones', () => {
    it('then this process’s next evaluation uses the new version, and none is kept under the old one', async () => {
      const before = await putRules(officer, structuringOnly());
      const customer = await structuringCustomer();
      expect((await evaluateMovement(deposit(customer))).decision).to.equal('review');

      // Stored as another api or worker process would: this process is not told.
      const raised = structuringOnly();
      raised.parameters.structuring.count = { low: 4, high: 6 };
      expect(await insertRuleSet(before.version + 1, raised, officer.id)).to.equal(true);

      const next = deposit(customer);
      const outcome = await evaluateMovement(next);
      expect(outcome.ruleSetVersion).to.equal(before.version + 1);
      expect(outcome.decision).to.equal('pass');
      const kept = await evaluationsOf('deposit', next.id);
      expect(kept.map((e) => e.ruleSetVersion)).to.deep.equal([before.version + 1]);
    });
  });

  describe('when a change is refused', () => {
    it('then a change made from an older version is a 409, and nothing is stored', async () => {
      const current = await putRules(officer, structuringOnly());
      const res = await api()
        .put('/api/v1/compliance/monitoring/rules')
        .set(officer.auth)
        .send({ based_on_version: current.version - 1, ...structuringOnly() });
      expectProblem(res, 409, 'conflict');
      expect((await readRules(officer)).version).to.equal(current.version);
    });

    it('then a band whose high is under its low, or a float amount, is a 400 naming the field, and nothing is stored', async () => {
      const current = await putRules(officer, structuringOnly());
      const inverted = structuringOnly();
      inverted.parameters.fan_in.payers = { low: 10, high: 5 };
      const float = structuringOnly();
      float.parameters.structuring.floor_minor = '90000000.5';
      for (const [bad, field] of [
        [inverted, 'parameters.fan_in.payers'],
        [float, 'parameters.structuring.floor_minor'],
      ] as const) {
        const res = await api()
          .put('/api/v1/compliance/monitoring/rules')
          .set(officer.auth)
          .send({ based_on_version: current.version, ...bad });
        expectProblem(res, 400, 'validation_failed');
        expect((res.body as { errors: { field: string }[] }).errors.map((e) => e.field)).to.include(field);
      }
      expect((await readRules(officer)).version).to.equal(current.version);
    });

    it('then a customer can neither read nor change the rules', async () => {
      const customer = await newUser({ funded: false });
      expectProblem(await api().get('/api/v1/compliance/monitoring/rules').set(customer.auth), 403, 'forbidden');
      const res = await api()
        .put('/api/v1/compliance/monitoring/rules')
        .set(customer.auth)
        .send({ based_on_version: 1, ...structuringOnly() });
      expectProblem(res, 403, 'forbidden');
    });
  });
});
