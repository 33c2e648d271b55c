import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { XMLParser } from 'fast-xml-parser';
import { renderStr } from '../services/goaml-service';
import { reloadConfig } from '../platform/config';
import { conductionOf } from '../domain/goaml';
import { api, completedPayment, newUser, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { rows } from './support/db';
import { expectProblem } from './support/problems';
import { realRails } from './support/rails';
import { until } from './support/wait';
import { ROOT } from './support/local-tools';
import { xsdErrors } from './support/xml-schema';

/**
 * goAML reports to the FRC (docs/compliance.md#goaml-reports): a CTR holds every completed movement of its period
 * at or above the CTR threshold and nothing below it, with exact amounts, and validates against the goAML report
 * schema kept in tests/fixtures/goaml (Paygate's derivation of the element structure, not the FRC's file); an STR
 * rendered from a case's facts validates too. Only compliance staff, with their login, make and read them.
 */

const XSD = path.join(ROOT, 'tests', 'fixtures', 'goaml', 'goaml-report.xsd');

const GOAML_ENV = {
  GOAML_RENTITY_ID: '4242',
  GOAML_RENTITY_BRANCH: 'Head office',
  GOAML_REPORTING_PERSON_NAME: 'Wanjiru Njeri Kamau',
  GOAML_REPORTING_PERSON_EMAIL: 'mlro@example.com',
  GOAML_REPORTING_PERSON_PHONE: '+254700000001',
  GOAML_LOCATION_ADDRESS: 'Waiyaki Way 12',
  CTR_THRESHOLD_KES: '5000',
};

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  isArray: (name) => name === 'transaction' || name === 'indicator',
});

interface ParsedTransaction {
  transactionnumber: string;
  transmode_code: string;
  amount_local: string;
  t_from_my_client?: Record<string, unknown>;
  t_from?: Record<string, unknown>;
  t_to_my_client?: Record<string, unknown>;
  t_to?: Record<string, unknown>;
}

interface ParsedReport {
  report: {
    rentity_id: string;
    report_code: string;
    entity_reference: string;
    currency_code_local: string;
    reason?: string;
    transaction: ParsedTransaction[];
    report_indicators?: { indicator: string[] };
  };
}

const parse = (xml: string): ParsedReport => parser.parse(xml) as ParsedReport;

interface ReportBody {
  report_id: string;
  kind: string;
  counts: { transactions: number; orders: number; deposits: number };
  threshold_kes: string;
  total_kes: string;
  xml_url: string;
}

const ctr = (who: TestUser, body: Record<string, unknown>) => api().post('/api/v1/compliance/goaml/ctr').set(who.auth).send(body);
const xmlOf = (who: TestUser, reportId: string) => api().get(`/api/v1/compliance/goaml/${reportId}.xml`).set(who.auth).buffer(true);

/** A C2B deposit into `user`'s wallet through the sandbox simulator, waited for until it is credited. */
async function completedDeposit(admin: TestUser, user: TestUser, amount: string): Promise<string> {
  const reference = ((await api().get('/api/v1/wallets').set(user.auth)).body as { deposit_reference: string }).deposit_reference;
  const c2b = await api()
    .post('/api/v1/sandbox/c2b')
    .set(admin.auth)
    .send({ deposit_reference: reference, amount, phone: '+254711000222' });
  expect(c2b.status, JSON.stringify(c2b.body)).to.equal(202);
  const providerReference = (c2b.body as { provider_reference: string }).provider_reference;
  return until(`deposit ${providerReference} credited`, async () => {
    const found = await rows<{ id: string; status: string }>(
      'SELECT id, status FROM deposits WHERE provider_reference = :providerReference',
      {
        providerReference,
      },
    );
    return found[0]?.status === 'completed' ? found[0].id : undefined;
  });
}

describe('goAML reports to the FRC', () => {
  let officer: TestUser;
  let admin: TestUser;
  let restore: () => void;

  before(async () => {
    restore = withEnv(GOAML_ENV);
    officer = await newUser({ roles: ['user', 'compliance'], funded: false });
    admin = await newUser({ roles: ['user', 'admin'], funded: false });
  });
  after(() => restore());

  describe('when movements at, above and below the CTR threshold complete and compliance makes a CTR for the period', () => {
    const mine: Record<string, string> = {};
    let report: ReportBody;
    let xml: string;

    before(async function () {
      this.timeout(120_000);
      const from = new Date(Date.now() - 1000).toISOString();
      // A name with XML's special characters: escaped in the report, never breaking it.
      const payer = await newUser({ kycStatus: 'verified', fullName: `Amani "Tom" O'Neil & <Sons> ${randomUUID().slice(0, 4)}` });
      // M-Pesa pays out whole shillings; cents are exercised by the deposit and the STR below.
      mine.at = (await completedPayment(payer, { amount: '5000.00' })).order_id;
      mine.above = (await completedPayment(payer, { amount: '5001.00' })).order_id;
      mine.below = (await completedPayment(payer, { amount: '4999.00' })).order_id;
      if (!realRails) {
        const depositor = await newUser({ kycStatus: 'verified', funded: false });
        mine.depositAbove = await completedDeposit(admin, depositor, '7250.05');
        mine.depositBelow = await completedDeposit(admin, depositor, '120.00');
      }
      const res = await ctr(officer, { from, to: new Date().toISOString() });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      report = res.body as ReportBody;
      const fetched = await xmlOf(officer, report.report_id);
      expect(fetched.status).to.equal(200);
      expect(fetched.headers['content-type']).to.match(/^application\/xml/);
      xml = fetched.text;
    });

    it('then the XML validates against the goAML report schema', () => {
      expect(xsdErrors(xml, XSD)).to.deep.equal([]);
    });

    it('then it holds the movements at and above the threshold, with exact KES amounts and their conduction type', () => {
      const parsed = parse(xml).report;
      expect(parsed.report_code).to.equal('CTR');
      expect(parsed.rentity_id).to.equal('4242');
      expect(parsed.entity_reference).to.equal(report.report_id);
      expect(parsed.currency_code_local).to.equal('KES');
      const byNumber = new Map(parsed.transaction.map((t) => [t.transactionnumber, t]));
      expect(byNumber.get(mine.at)?.amount_local).to.equal('5000.00');
      expect(byNumber.get(mine.above)?.amount_local).to.equal('5001.00');
      expect(byNumber.get(mine.at)?.transmode_code).to.equal('MM01');
      expect(byNumber.get(mine.at)?.t_from_my_client, 'a payout is from our client').to.not.equal(undefined);
      if (!realRails) {
        expect(byNumber.get(mine.depositAbove)?.amount_local).to.equal('7250.05');
        expect(byNumber.get(mine.depositAbove)?.t_to_my_client, 'a deposit is to our client').to.not.equal(undefined);
      }
      expect(report.counts.transactions).to.equal(parsed.transaction.length);
      expect(report.threshold_kes).to.equal('5000.00');
    });

    it('then the movements below the threshold are absent', () => {
      expect(xml).to.not.contain(mine.below);
      if (!realRails) expect(xml).to.not.contain(mine.depositBelow);
    });

    it("then the customer's name is escaped, and reads back exactly", () => {
      expect(xml).to.contain('&lt;Sons&gt;');
      expect(xml).to.not.contain('<Sons>');
      const at = parse(xml).report.transaction.find((t) => t.transactionnumber === mine.at);
      const person = (at?.t_from_my_client as { from_person: { first_name: string; last_name: string } }).from_person;
      expect(`${person.first_name} ${person.last_name}`).to.match(/^Amani "Tom" O'Neil & <Sons> [0-9a-f]{4}$/);
    });

    it('then the creation is in the audit trail and the stored report cannot be changed or removed', async () => {
      const entries = await rows<{ actor_id: string; after: { kind: string; transactions: number } }>(
        "SELECT actor_id, after FROM audit_entries WHERE action = 'goaml_report.created' AND subject_id = :id",
        { id: report.report_id },
      );
      expect(entries).to.have.length(1);
      expect(entries[0].actor_id).to.equal(officer.id);
      expect(entries[0].after.kind).to.equal('CTR');
      let refused = '';
      try {
        await rows("UPDATE goaml_reports SET xml = 'x' WHERE id = :id RETURNING id", { id: report.report_id });
      } catch (err) {
        refused = String(err);
      }
      expect(refused).to.match(/append-only/);
      const again = await xmlOf(officer, report.report_id);
      expect(again.text).to.equal(xml);
    });
  });

  describe('when the period is wrong or holds nothing to report', () => {
    it('then a reversed period, one longer than 31 days, or one in the future is a 400', async () => {
      expectProblem(await ctr(officer, { from: '2026-11-02', to: '2026-11-01' }), 400, 'validation_failed');
      expectProblem(await ctr(officer, { from: '2026-01-01', to: '2026-03-01' }), 400, 'validation_failed');
      expectProblem(
        await ctr(officer, { from: '2026-01-01', to: new Date(Date.now() + 86_400_000).toISOString() }),
        400,
        'validation_failed',
      );
      expectProblem(await ctr(officer, { from: 'yesterday', to: '2026-11-01' }), 400, 'validation_failed');
    });

    it('then a period without a movement at or above the threshold is a 409, and no report is kept', async () => {
      const before = await rows<{ n: string }>('SELECT count(*) AS n FROM goaml_reports');
      expectProblem(await ctr(officer, { from: '2020-01-01', to: '2020-01-02' }), 409, 'conflict');
      const after = await rows<{ n: string }>('SELECT count(*) AS n FROM goaml_reports');
      expect(after[0].n).to.equal(before[0].n);
    });
  });

  describe('when someone other than compliance staff asks', () => {
    it('then a customer is refused both making and reading a report, and nobody unauthenticated gets in', async () => {
      const customer = await newUser({ funded: false });
      expectProblem(await ctr(customer, { from: '2020-01-01', to: '2020-01-02' }), 403, 'forbidden');
      expectProblem(await xmlOf(customer, randomUUID()), 403, 'forbidden');
      const anonymous = await api().post('/api/v1/compliance/goaml/ctr').send({ from: '2020-01-01', to: '2020-01-02' });
      expect(anonymous.status).to.equal(401);
    });

    it('then an unknown report id is a 404, and a malformed one a 400', async () => {
      expectProblem(await xmlOf(officer, randomUUID()), 404, 'not_found');
      expectProblem(await xmlOf(officer, 'not-a-report'), 400, 'validation_failed');
    });
  });

  describe('when goAML reporting is not configured', () => {
    it('then making a CTR is a 503 naming the missing setting', async () => {
      const kept = process.env.GOAML_RENTITY_ID;
      delete process.env.GOAML_RENTITY_ID;
      reloadConfig();
      try {
        const res = await ctr(officer, { from: '2020-01-01', to: '2020-01-02' });
        expectProblem(res, 503, 'dependency_unavailable');
        expect(JSON.stringify(res.body)).to.contain('GOAML_RENTITY_ID');
      } finally {
        process.env.GOAML_RENTITY_ID = kept;
        reloadConfig();
      }
    });
  });

  describe('when an STR is rendered from a case with a crypto payout and a bank deposit', () => {
    const caseId = randomUUID();
    const xml = () =>
      renderStr(
        {
          caseId,
          // A control character XML 1.0 cannot carry: dropped, never a file the FRC refuses.
          reason:
            'Deposits split below the CTR threshold, paid out to a third-party address within the hour (structuring, pass-through)\u0007',
          action: 'Payout held; account frozen pending review',
          indicators: ['STRUCT', 'PASSTHRU'],
          transactions: [
            {
              number: 'order-1',
              at: new Date('2026-11-20T10:15:30.250Z'),
              conduction: conductionOf('crypto'),
              amountLocalMinor: 15_926_237n,
              foreign: { currency: 'USDT', amountMinor: 1_234_592_000n, rateToKes: '129.00' },
              from: { myClient: true, country: 'KE', person: { firstName: 'Achieng', lastName: 'Otieno', email: 'a@example.com' } },
              to: {
                myClient: false,
                country: 'KE',
                account: {
                  institutionName: 'TRC20 address',
                  nonBankInstitution: true,
                  account: 'TXYZ1234567890abcdefghijk',
                  currency: 'USDT',
                },
              },
            },
            {
              number: 'deposit-1',
              at: new Date('2026-11-20T09:00:00Z'),
              conduction: conductionOf('bank_transfer', 'rtgs'),
              amountLocalMinor: 1_999_999_99n,
              from: { myClient: false, country: 'KE', entity: { name: 'Acme Traders Ltd' } },
              to: { myClient: true, country: 'KE', person: { firstName: 'Achieng', lastName: 'Otieno' } },
            },
          ],
        },
        new Date('2026-11-21T08:00:00Z'),
      );

    it('then it validates against the goAML report schema', () => {
      const restoreEnv = withEnv(GOAML_ENV);
      try {
        expect(xsdErrors(xml(), XSD)).to.deep.equal([]);
      } finally {
        restoreEnv();
      }
    });

    it('then the amounts are exact decimals, the dates have no zone, and the case is the reference', () => {
      const restoreEnv = withEnv(GOAML_ENV);
      try {
        const rendered = xml();
        const parsed = parse(rendered).report;
        expect(parsed.report_code).to.equal('STR');
        expect(parsed.entity_reference).to.equal(caseId);
        expect(parsed.transaction.map((t) => t.amount_local)).to.deep.equal(['159262.37', '1999999.99']);
        expect(parsed.transaction.map((t) => t.transmode_code)).to.deep.equal(['-', 'RTGS']);
        expect(rendered).to.contain('<foreign_amount>1234.592000</foreign_amount>');
        expect(rendered).to.contain('<date_transaction>2026-11-20T10:15:30</date_transaction>');
        expect(parsed.report_indicators?.indicator).to.deep.equal(['STRUCT', 'PASSTHRU']);
        expect(parsed.reason).to.match(/\(structuring, pass-through\)$/);
        expect(rendered).to.not.contain('\u0007');
      } finally {
        restoreEnv();
      }
    });

    it('then a report the schema refuses is caught by the validator (the check can fail)', () => {
      const restoreEnv = withEnv(GOAML_ENV);
      try {
        const broken = xml().replace('<transmode_code>RTGS</transmode_code>', '<transmode_code>CASH</transmode_code>');
        expect(xsdErrors(broken, XSD).join('\n')).to.contain('transmode_code');
      } finally {
        restoreEnv();
      }
    });

    it('then an STR without a reason is refused before anything is rendered', () => {
      const restoreEnv = withEnv(GOAML_ENV);
      try {
        expect(() => renderStr({ caseId, reason: '  ', transactions: [] })).to.throw(/reason/);
      } finally {
        restoreEnv();
      }
    });
  });
});
