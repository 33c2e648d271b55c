import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DEFAULT_RULE_SET, type RuleSetContent } from '../domain/monitoring/rule-set';
import { evaluateMovement } from '../services/monitoring-service';
import { reloadConfig } from '../platform/config';
import { api, newUser, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { rows } from './support/db';
import { fundWallets } from './support/funding';
import { openCaseAbout } from './support/cases';
import { ROOT } from './support/local-tools';
import { expectProblem } from './support/problems';
import { xsdErrors } from './support/xml-schema';

/**
 * Monitoring cases (docs/compliance.md#cases): a customer's alerts group into one open case, which compliance
 * staff assign, note and close; closing takes two different staff members, and closing as `reported` files a
 * goAML STR that validates. The customer never sees a case.
 */

const XSD = path.join(ROOT, 'tests', 'fixtures', 'goaml', 'goaml-report.xsd');

const GOAML_ENV = {
  GOAML_RENTITY_ID: '4242',
  GOAML_REPORTING_PERSON_NAME: 'Wanjiru Njeri Kamau',
  GOAML_LOCATION_ADDRESS: 'Waiyaki Way 12',
};

const JUST_BELOW = 95_000_000n; // KES 950,000: just below the KES 1,000,000 reporting threshold

interface CaseBody {
  case_id: string;
  customer_id: string;
  status: string;
  assignee_id: string | null;
  alert_count: number;
  closure: { requested_by: string; outcome: string; note: string } | null;
  closed_by: string | null;
  report_id: string | null;
  alerts?: {
    evaluation_id: string;
    rule_set_version: number;
    decision: string;
    rules: Record<string, { band: number; facts: Record<string, unknown> }>;
  }[];
  notes?: { author_id: string; text: string }[];
}

/** Put the default rules with only the structuring typology, so an alert has one cause. */
async function structuringOnly(staff: TestUser): Promise<number> {
  const current = (await api().get('/api/v1/compliance/monitoring/rules').set(staff.auth)).body as { version: number };
  const content: RuleSetContent = {
    parameters: structuredClone(DEFAULT_RULE_SET.parameters),
    typologies: DEFAULT_RULE_SET.typologies.filter((t) => t.id === 'structuring'),
  };
  const res = await api()
    .put('/api/v1/compliance/monitoring/rules')
    .set(staff.auth)
    .send({ based_on_version: current.version, ...content });
  expect(res.status, res.text).to.equal(200);
  return (res.body as { version: number }).version;
}

/** A customer with three deposits of KES 950,000 today: each, evaluated, is a structuring alert. */
async function structuringCustomer(): Promise<{ customer: TestUser; deposits: string[] }> {
  const customer = await newUser({ funded: false, kycStatus: 'verified' });
  for (let i = 0; i < 3; i++) await fundWallets(customer.id, { KES: JUST_BELOW });
  const found = await rows<{ id: string }>('SELECT id FROM deposits WHERE user_id = :id ORDER BY created_at', { id: customer.id });
  return { customer, deposits: found.map((d) => d.id) };
}

/** Evaluate one of the customer's deposits as monitoring does before crediting it. */
const evaluateDeposit = (customerId: string, depositId: string) =>
  evaluateMovement({
    kind: 'deposit',
    id: depositId,
    customerId,
    amountMinor: JUST_BELOW,
    at: new Date(Date.now() + 1_000),
    counterparty: null,
  });

const casesOf = async (customerId: string) =>
  rows<{ id: string; status: string }>('SELECT id, status FROM monitoring_cases WHERE customer_id = :customerId', { customerId });

const getCase = (who: TestUser, caseId: string) => api().get(`/api/v1/compliance/cases/${caseId}`).set(who.auth);
const close = (who: TestUser, caseId: string, outcome: string, note = 'checked the payers and the payouts') =>
  api().post(`/api/v1/compliance/cases/${caseId}/close`).set(who.auth).send({ outcome, note });

/** A customer with an open case of two structuring alerts: the case's id. */
async function openCase(): Promise<{ customer: TestUser; caseId: string; deposits: string[] }> {
  const { customer, deposits } = await structuringCustomer();
  const first = await evaluateDeposit(customer.id, deposits[2]);
  const second = await evaluateDeposit(customer.id, deposits[1]);
  expect([first.decision, second.decision]).to.deep.equal(['review', 'review']);
  const [found] = await casesOf(customer.id);
  return { customer, caseId: found.id, deposits };
}

describe('monitoring cases', function () {
  this.timeout(90_000);
  let officer: TestUser;
  let second: TestUser;
  let rulesVersion: number;

  before(async () => {
    officer = await newUser({ roles: ['compliance'], funded: false });
    second = await newUser({ roles: ['compliance'], funded: false });
    rulesVersion = await structuringOnly(officer);
  });

  describe("when a customer's movements raise two alerts", () => {
    it("then both join one open case, which shows each rule's numbers and the rules' version", async () => {
      const { customer, caseId } = await openCase();
      const cases = await casesOf(customer.id);
      expect(cases).to.have.length(1);
      const res = await getCase(officer, caseId);
      expect(res.status, res.text).to.equal(200);
      const body = res.body as CaseBody;
      expect(body).to.include({ customer_id: customer.id, status: 'open', alert_count: 2 });
      expect(body.alerts).to.have.length(2);
      expect(body.alerts?.[0]).to.include({ decision: 'review', rule_set_version: rulesVersion });
      expect(body.alerts?.[0].rules.structuring.band).to.equal(2);
      expect(body.alerts?.[0].rules.structuring.facts).to.include({ just_below_count: 3, reporting_threshold_minor: '100000000' });
    });

    it('then a movement that passes files nothing', async () => {
      const quiet = await newUser({ funded: false, kycStatus: 'verified' });
      const outcome = await evaluateDeposit(quiet.id, randomUUID());
      expect(outcome.decision).to.equal('pass');
      expect(await casesOf(quiet.id)).to.deep.equal([]);
    });

    it('then alerts filed at once still open only one case', async () => {
      const { customer, deposits } = await structuringCustomer();
      const outcomes = await Promise.all([
        evaluateDeposit(customer.id, deposits[0]),
        evaluateDeposit(customer.id, deposits[1]),
        evaluateDeposit(customer.id, deposits[2]),
        evaluateDeposit(customer.id, deposits[2]),
      ]);
      expect(outcomes.map((o) => o.decision)).to.deep.equal(['review', 'review', 'review', 'review']);
      const cases = await casesOf(customer.id);
      expect(cases).to.have.length(1);
      const [{ count }] = await rows<{ count: number }>('SELECT count(*)::int AS count FROM monitoring_case_alerts WHERE case_id = :id', {
        id: cases[0].id,
      });
      expect(count).to.equal(4);
    });
  });

  describe('when staff list, assign and note a case', () => {
    it('then the list filters by customer, status and assignee, and each step is audited', async () => {
      const { customer, caseId } = await openCase();
      const assigned = await api().post(`/api/v1/compliance/cases/${caseId}/assign`).set(officer.auth).send({ assignee_id: second.id });
      expect(assigned.status, assigned.text).to.equal(200);
      expect((assigned.body as CaseBody).assignee_id).to.equal(second.id);
      const noted = await api()
        .post(`/api/v1/compliance/cases/${caseId}/notes`)
        .set(second.auth)
        .send({ text: 'asked for source of funds' });
      expect(noted.status, noted.text).to.equal(201);

      const byCustomer = await api().get('/api/v1/compliance/cases').query({ customer: customer.id, status: 'open' }).set(officer.auth);
      expect(byCustomer.status, byCustomer.text).to.equal(200);
      expect((byCustomer.body as { data: CaseBody[] }).data.map((c) => c.case_id)).to.deep.equal([caseId]);
      const byAssignee = await api().get('/api/v1/compliance/cases').query({ assignee: second.id }).set(officer.auth);
      expect((byAssignee.body as { data: CaseBody[] }).data.map((c) => c.case_id)).to.include(caseId);
      const closedOnly = await api().get('/api/v1/compliance/cases').query({ customer: customer.id, status: 'closed' }).set(officer.auth);
      expect((closedOnly.body as { data: CaseBody[] }).data).to.deep.equal([]);

      const detail = (await getCase(officer, caseId)).body as CaseBody;
      expect(detail.notes).to.deep.equal([{ ...detail.notes?.[0], author_id: second.id, text: 'asked for source of funds' }]);
      const audit = await rows<{ action: string; actor_id: string }>(
        "SELECT action, actor_id FROM audit_entries WHERE subject_type = 'monitoring_case' AND subject_id = :caseId ORDER BY occurred_at",
        { caseId },
      );
      expect(audit).to.deep.equal([
        { action: 'case.assigned', actor_id: officer.id },
        { action: 'case.noted', actor_id: second.id },
      ]);
    });

    it('then a bad assignee, an empty note, a bad filter or a forged cursor is a 400, and an unknown case a 404', async () => {
      const { customer, caseId } = await openCase();
      expectProblem(
        await api().post(`/api/v1/compliance/cases/${caseId}/assign`).set(officer.auth).send({ assignee_id: customer.id }),
        400,
      );
      expectProblem(await api().post(`/api/v1/compliance/cases/${caseId}/notes`).set(officer.auth).send({ text: '   ' }), 400);
      expectProblem(await api().get('/api/v1/compliance/cases').query({ status: 'pending' }).set(officer.auth), 400);
      expectProblem(await api().get('/api/v1/compliance/cases').query({ cursor: 'not-a-cursor' }).set(officer.auth), 400);
      expectProblem(await getCase(officer, randomUUID()), 404);
      expectProblem(await getCase(officer, 'not-a-uuid'), 400);
    });
  });

  describe('when a case is closed', () => {
    it('then the first closure waits (202), the same person cannot confirm it (403), and a second person closes it (200)', async () => {
      const { caseId } = await openCase();
      const first = await close(officer, caseId, 'false_positive', 'household payers');
      expect(first.status, first.text).to.equal(202);
      expect((first.body as CaseBody).status).to.equal('open');
      expect((first.body as CaseBody).closure).to.include({ requested_by: officer.id, outcome: 'false_positive' });

      expectProblem(await close(officer, caseId, 'false_positive'), 403);
      expectProblem(await close(second, caseId, 'reported'), 409);

      const confirmed = await close(second, caseId, 'false_positive', 'agreed');
      expect(confirmed.status, confirmed.text).to.equal(200);
      expect(confirmed.body as CaseBody).to.include({ status: 'closed', closed_by: second.id, report_id: null });
      expectProblem(await close(officer, caseId, 'false_positive'), 409);
      const audit = await rows<{ action: string }>(
        "SELECT action FROM audit_entries WHERE subject_type = 'monitoring_case' AND subject_id = :caseId ORDER BY occurred_at",
        { caseId },
      );
      expect(audit.map((a) => a.action)).to.deep.equal(['case.closure_requested', 'case.closed']);
    });

    it("then the customer's next alert opens a new case", async () => {
      const { customer, caseId, deposits } = await openCase();
      expect((await close(officer, caseId, 'false_positive')).status).to.equal(202);
      expect((await close(second, caseId, 'false_positive')).status).to.equal(200);
      await evaluateDeposit(customer.id, deposits[0]);
      const cases = await casesOf(customer.id);
      expect(cases.map((c) => c.status).sort()).to.deep.equal(['closed', 'open']);
    });

    it('then a new alert withdraws a waiting closure, so the closure is decided on every alert', async () => {
      const { customer, caseId, deposits } = await openCase();
      expect((await close(officer, caseId, 'false_positive')).status).to.equal(202);
      await evaluateDeposit(customer.id, deposits[0]);
      const after = (await getCase(officer, caseId)).body as CaseBody;
      expect(after).to.include({ status: 'open', closure: null, alert_count: 3 });
    });

    it('then reporting without the goAML settings is a 503 and leaves the case open with its closure waiting', async () => {
      const kept = process.env.GOAML_RENTITY_ID;
      delete process.env.GOAML_RENTITY_ID;
      reloadConfig();
      try {
        const { caseId } = await openCase();
        expect((await close(officer, caseId, 'reported')).status).to.equal(202);
        expectProblem(await close(second, caseId, 'reported'), 503);
        const after = (await getCase(officer, caseId)).body as CaseBody;
        expect(after).to.include({ status: 'open', closed_by: null, report_id: null });
        expect(after.closure).to.include({ requested_by: officer.id, outcome: 'reported' });
      } finally {
        if (kept !== undefined) process.env.GOAML_RENTITY_ID = kept;
        reloadConfig();
      }
    });

    describe('as reported', () => {
      let restore: () => void;
      before(() => {
        restore = withEnv(GOAML_ENV);
      });
      after(() => restore());

      it('then an STR of its movements is filed, validates against the goAML schema and is served as XML', async () => {
        const { caseId, deposits } = await openCase();
        expect((await close(officer, caseId, 'reported', 'three deposits just below the threshold in a day')).status).to.equal(202);
        const closed = await close(second, caseId, 'reported', 'agreed: structuring');
        expect(closed.status, closed.text).to.equal(200);
        const reportId = (closed.body as CaseBody).report_id;
        expect(reportId).to.be.a('string');

        const xml = await api().get(`/api/v1/compliance/goaml/${reportId}.xml`).set(officer.auth).buffer(true);
        expect(xml.status).to.equal(200);
        expect(xsdErrors(xml.text, XSD)).to.deep.equal([]);
        expect(xml.text).to.contain('<report_code>STR</report_code>');
        expect(xml.text).to.contain(`<entity_reference>${caseId}</entity_reference>`);
        expect(xml.text).to.contain(deposits[2]);
        expect(xml.text).to.contain(deposits[1]);
        expect(xml.text, "only the alerts' movements").to.not.contain(deposits[0]);
        expect(xml.text).to.contain('<amount_local>950000.00</amount_local>');
        const [stored] = await rows<{ kind: string; created_by: string }>(
          'SELECT kind, created_by FROM goaml_reports WHERE id = :reportId',
          {
            reportId,
          },
        );
        expect(stored).to.deep.equal({ kind: 'STR', created_by: second.id });
      });

      it('then a case whose alerts name no payout or deposit cannot be reported (409), and stays open', async () => {
        const customer = await newUser({ funded: false });
        const caseId = await openCaseAbout(customer.id);
        expect((await close(officer, caseId, 'reported')).status).to.equal(202);
        expectProblem(await close(second, caseId, 'reported'), 409);
        expect(((await getCase(officer, caseId)).body as CaseBody).status).to.equal('open');
      });
    });
  });

  describe('when someone other than compliance staff, in person, asks', () => {
    it('then the customer the case is about gets 403 on every route and sees nothing of it in their own answers', async () => {
      const { customer, caseId, deposits } = await openCase();
      expectProblem(await api().get('/api/v1/compliance/cases').set(customer.auth), 403);
      expectProblem(await getCase(customer, caseId), 403);
      expectProblem(
        await api().post(`/api/v1/compliance/cases/${caseId}/assign`).set(customer.auth).send({ assignee_id: customer.id }),
        403,
      );
      expectProblem(await api().post(`/api/v1/compliance/cases/${caseId}/notes`).set(customer.auth).send({ text: 'x' }), 403);
      expectProblem(await close(customer, caseId, 'false_positive'), 403);
      expectProblem(await api().get('/api/v1/compliance/cases').send(), 401);
      const own = ['/api/v1/wallets', '/api/v1/events', '/api/v1/payments/history', `/api/v1/wallets/deposits/${deposits[2]}`];
      for (const route of own) {
        const res = await api().get(route).set(customer.auth);
        expect(res.status, route).to.equal(200);
        expect(res.text, route).to.not.contain(caseId);
        expect(res.text.toLowerCase(), route).to.not.match(/monitoring|structuring|case_id/);
      }
    });

    it('then a staff member cannot work a case about themselves', async () => {
      const insider = await newUser({ roles: ['compliance'], funded: false, kycStatus: 'verified' });
      for (let i = 0; i < 3; i++) await fundWallets(insider.id, { KES: JUST_BELOW });
      const [deposit] = await rows<{ id: string }>('SELECT id FROM deposits WHERE user_id = :id ORDER BY created_at DESC LIMIT 1', {
        id: insider.id,
      });
      expect((await evaluateDeposit(insider.id, deposit.id)).decision).to.equal('review');
      const [own] = await casesOf(insider.id);
      expectProblem(await api().post(`/api/v1/compliance/cases/${own.id}/notes`).set(insider.auth).send({ text: 'nothing here' }), 403);
      expectProblem(await close(insider, own.id, 'false_positive'), 403);
      expect((await close(officer, own.id, 'false_positive')).status).to.equal(202);
      expectProblem(await close(insider, own.id, 'false_positive'), 403);
    });
  });
});
