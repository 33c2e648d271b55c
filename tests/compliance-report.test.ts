import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { QueryTypes } from 'sequelize';
import { database } from '../platform/database';
import { uuidv7 } from '../platform/ids';
import { temporalClient } from '../platform/temporal';
import { api, blocklist, newUser, type TestUser } from './support/api';
import { expectProblem } from './support/problems';

/**
 * The compliance report over seeded data in a period long past (no other test writes there). Every
 * expected number is computed here, from the seeds, by straightforward loops: independently of the SQL.
 */

const HOUR = 3_600_000;
const USD_RATE_CENTS = 129n; // FX_RATES_TO_KES USD=129.00
const THRESHOLD_KES_MINOR = 15_000n * 129n * 100n; // CTR_THRESHOLD_USD 15000 at 129.00
const SCALE: Record<string, number> = { KES: 2, USD: 2, USDT: 6, USDC: 6, BTC: 8, ETH: 18 };
const STATUSES = ['pending', 'screening', 'processing', 'completed', 'rejected', 'failed', 'reversed'];
const METHODS = ['bank_transfer', 'mobile_money', 'crypto', 'p2p'];

/** USD cents = KES cents / 129, half up; as a decimal string. */
function usd(kesMinor: bigint): string {
  const cents = (2n * kesMinor + USD_RATE_CENTS) / (2n * USD_RATE_CENTS);
  return `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;
}

function amount(minor: bigint, currency: string): string {
  const scale = SCALE[currency];
  const digits = minor.toString().padStart(scale + 1, '0');
  return `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
}

interface Seed {
  id: string;
  user: string;
  at: number;
  status: string;
  method: string;
  currency: string;
  amountMinor: bigint;
  kesMinor: bigint;
}

interface ReportBody {
  workflow_id: string;
  run_id: string;
  period: { from: string; to: string };
  generated_at: string;
  parameters: { ctr_threshold_usd: string; usd_rate_kes: string; max_rows: number };
  totals: unknown;
  large_transactions: unknown;
  structuring_alerts: unknown;
  blocklist_hits: unknown;
  kyc: unknown;
  appeals: unknown;
}

const getReport = (who: TestUser | undefined, query: Record<string, string | boolean>) => {
  const req = api().get('/api/v1/compliance/report').query(query);
  return who ? req.set(who.auth) : req;
};

/** The report flattened to CSV rows as documented: section, item path, field, value. */
function leaves(report: Record<string, unknown>): string[][] {
  const out: string[][] = [];
  const visit = (section: string, path: string[], field: string, value: unknown) => {
    if (value !== null && typeof value === 'object') {
      const here = field === '' ? path : [...path, field];
      const entries = Array.isArray(value) ? value.map((v: unknown, i) => [String(i + 1), v] as const) : Object.entries(value);
      for (const [k, v] of entries) visit(section, here, k, v);
    } else {
      out.push([section, path.join('.'), field, value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value)]);
    }
  };
  for (const [key, value] of Object.entries(report)) {
    if (value !== null && typeof value === 'object') visit(key, [], '', value);
    else visit('report', [], key, value);
  }
  return out;
}

/** A period starting on a random hour of 2001, so runs against a shared Temporal server never meet. */
function periodIn(year: number, days: number): { from: Date; to: Date } {
  const from = new Date(Date.UTC(year, 0, 1) + randomInt(0, 300 * 24) * HOUR);
  return { from, to: new Date(from.getTime() + days * 24 * HOUR) };
}

async function insertOrder(seed: Seed, from: Date): Promise<void> {
  const createdAt = new Date(from.getTime() + seed.at);
  await database().query(
    `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                         status, failure_code, workflow_id, workflow_started_at, limits_checked_at, created_at, updated_at)
     VALUES (:id, :user, :key, :amountMinor, :kesMinor, :currency, :method, '{}'::jsonb, :status, :failureCode,
             :workflowId, :createdAt, :createdAt, :createdAt, :createdAt)`,
    {
      replacements: {
        id: seed.id,
        user: seed.user,
        key: `seed-${seed.id}`,
        amountMinor: seed.amountMinor.toString(),
        kesMinor: seed.kesMinor.toString(),
        currency: seed.currency,
        method: seed.method,
        status: seed.status,
        failureCode: seed.status === 'failed' ? 'rail_error' : null,
        workflowId: `payment-${seed.id}`,
        createdAt,
      },
    },
  );
}

describe('compliance report', () => {
  let compliance: TestUser;
  let admin: TestUser;

  before(async () => {
    compliance = await newUser({ roles: ['user', 'compliance'] });
    admin = await newUser({ roles: ['user', 'admin'] });
  });

  describe('when the report covers seeded payments, hits and KYC changes', () => {
    const { from, to } = periodIn(2001, 7);
    const seeds: Seed[] = [];
    const users: Record<'a' | 'b' | 'c' | 'd' | 'e', TestUser> = {} as Record<'a' | 'b' | 'c' | 'd' | 'e', TestUser>;
    const hits: { id: string; at: number; context: string; user: string | null; order: string | null; entry: string; value: string }[] = [];
    let report: ReportBody;
    let entries: { email: { entry_id: string; value: string }; name: { entry_id: string; value: string } };

    const kes = (major: number) => BigInt(major) * 100n;
    const seed = (
      user: TestUser,
      hours: number,
      status: string,
      method: string,
      currency: string,
      amountMinor: bigint,
      kesMinor: bigint,
    ) => {
      const s: Seed = {
        id: uuidv7(from.getTime() + hours * HOUR),
        user: user.id,
        at: hours * HOUR,
        status,
        method,
        currency,
        amountMinor,
        kesMinor,
      };
      seeds.push(s);
      return s;
    };

    before(async function () {
      this.timeout(60_000);
      for (const key of ['a', 'b', 'c', 'd', 'e'] as const) users[key] = await newUser();
      const { a, b, c, d, e } = users;
      // a: three small payments within 24 h adding up past the threshold, then two more chained within 24 h.
      const first = seed(a, 1, 'completed', 'mobile_money', 'KES', kes(700_000), kes(700_000));
      seed(a, 5, 'completed', 'mobile_money', 'KES', kes(700_000), kes(700_000));
      seed(a, 20, 'failed', 'mobile_money', 'KES', kes(700_000), kes(700_000));
      seed(a, 30, 'completed', 'bank_transfer', 'KES', kes(1_000_000), kes(1_000_000));
      seed(a, 40, 'completed', 'bank_transfer', 'KES', kes(1_000_000), kes(1_000_000));
      // b: one payment above the threshold, one exactly at it (USD 15,000), one small.
      seed(b, 10, 'completed', 'bank_transfer', 'KES', kes(2_000_000), kes(2_000_000));
      seed(b, 12, 'completed', 'bank_transfer', 'USD', 1_500_000n, kes(1_935_000));
      seed(b, 13, 'pending', 'mobile_money', 'KES', kes(500), kes(500));
      // c: two payments more than 24 h apart: no alert.
      seed(c, 0.5, 'completed', 'bank_transfer', 'KES', kes(1_000_000), kes(1_000_000));
      seed(c, 50, 'rejected', 'bank_transfer', 'KES', kes(1_000_000), kes(1_000_000));
      // d: crypto.
      seed(d, 60, 'completed', 'crypto', 'USDT', 100_000_000n, kes(12_900));
      seed(d, 61, 'failed', 'crypto', 'BTC', 1_000_000n, kes(110_000));
      // e: two payments adding up to exactly the threshold.
      seed(e, 100, 'completed', 'mobile_money', 'KES', kes(967_500), kes(967_500));
      seed(e, 110, 'processing', 'mobile_money', 'KES', kes(967_500), kes(967_500));
      // Just before the period, and at its (exclusive) end: not in the report.
      const outside = [
        seed(a, -1 / 3600, 'completed', 'mobile_money', 'KES', kes(1_000_000), kes(1_000_000)),
        seed(a, 7 * 24, 'completed', 'bank_transfer', 'KES', kes(2_000_000), kes(2_000_000)),
      ];
      for (const s of seeds) await insertOrder(s, from);
      seeds.splice(seeds.length - outside.length, outside.length);

      // Users registered inside the period, in every KYC status (changed directly: audited "now", outside it).
      const sql = database();
      const registered = new Date(from.getTime() + HOUR);
      const statuses: Record<string, string> = { a: 'verified', b: 'pending', c: 'rejected', d: 'unverified', e: 'verified' };
      for (const [key, status] of Object.entries(statuses)) {
        await sql.query('UPDATE users SET created_at = :registered, kyc_status = :status WHERE id = :id', {
          replacements: { registered, status, id: users[key as keyof typeof users].id },
        });
      }
      const audit: [TestUser, string, string, number][] = [
        [a, 'unverified', 'pending', 2],
        [a, 'pending', 'verified', 3],
        [c, 'pending', 'rejected', 5],
      ];
      for (const [user, fromStatus, toStatus, hours] of audit) {
        await sql.query(
          'INSERT INTO kyc_audit (user_id, actor_id, from_status, to_status, reason, at) VALUES (:user, :actor, :fromStatus, :toStatus, NULL, :at)',
          { replacements: { user: user.id, actor: compliance.id, fromStatus, toStatus, at: new Date(from.getTime() + hours * HOUR) } },
        );
      }

      // Screening hits: three inside the period, one before it.
      const email = await blocklist(compliance, { type: 'email', value: `report-${randomInt(1e9)}@example.com` });
      const name = await blocklist(compliance, {
        type: 'name',
        value: `Reportcase Wambui ${randomInt(1e9).toString(36).replace(/\d/g, 'z')}`,
      });
      entries = { email, name };
      const hitSeeds = [
        { at: -HOUR, context: 'registration', user: null, order: null, entry: email },
        { at: 2 * HOUR, context: 'registration', user: null, order: null, entry: email },
        { at: 3 * HOUR, context: 'payment', user: a.id, order: first.id, entry: name },
        { at: 4 * HOUR, context: 'kyc', user: b.id, order: null, entry: name },
      ];
      for (const h of hitSeeds) {
        const id = uuidv7(from.getTime() + h.at);
        await sql.query(
          `INSERT INTO screening_hits (id, context, user_id, order_id, field, screened_value, entry_id, score, created_at)
           VALUES (:id, :context, :user, :order, 'test', :value, :entry, 1, :at)`,
          {
            replacements: {
              id,
              context: h.context,
              user: h.user,
              order: h.order,
              value: h.entry.value,
              entry: h.entry.entry_id,
              at: new Date(from.getTime() + h.at),
            },
          },
        );
        if (h.at >= 0)
          hits.push({ id, at: h.at, context: h.context, user: h.user, order: h.order, entry: h.entry.entry_id, value: h.entry.value });
      }

      const res = await getReport(compliance, { from: from.toISOString(), to: to.toISOString() });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      report = res.body as ReportBody;
    });

    it('then it names its period, workflow run and parameters', () => {
      expect(report.period).to.deep.equal({ from: from.toISOString(), to: to.toISOString() });
      expect(report.workflow_id).to.equal(`compliance-report-${from.toISOString()}_${to.toISOString()}`);
      expect(report.run_id).to.be.a('string').and.not.empty;
      expect(new Date(report.generated_at).getTime()).to.be.closeTo(Date.now(), 60_000);
      expect(report.parameters).to.deep.equal({ ctr_threshold_usd: '15000', usd_rate_kes: '129.00', max_rows: 10000 });
    });

    it('then the totals by status, method and currency equal the seeds', () => {
      const sum = (list: Seed[]) => list.reduce((s, x) => s + x.kesMinor, 0n);
      const group = (keys: string[], pick: (s: Seed) => string) =>
        Object.fromEntries(
          keys.map((k) => {
            const list = seeds.filter((s) => pick(s) === k);
            return [k, { count: list.length, usd_equivalent: usd(sum(list)) }];
          }),
        );
      const byCurrency = Object.fromEntries(
        Object.keys(SCALE).map((currency) => {
          const list = seeds.filter((s) => s.currency === currency);
          const total = list.reduce((acc, s) => acc + s.amountMinor, 0n);
          return [currency, { count: list.length, amount: amount(total, currency), usd_equivalent: usd(sum(list)) }];
        }),
      );
      expect(report.totals).to.deep.equal({
        count: seeds.length,
        usd_equivalent: usd(sum(seeds)),
        by_status: group(STATUSES, (s) => s.status),
        by_method: group(METHODS, (s) => s.method),
        by_currency: byCurrency,
      });
      expect((report.totals as { count: number }).count).to.equal(14);
    });

    it('then the large transactions are those at or above USD 15,000, in time order', () => {
      const large = seeds.filter((s) => s.kesMinor >= THRESHOLD_KES_MINOR).sort((x, y) => x.at - y.at);
      expect(large).to.have.length(2);
      expect(report.large_transactions).to.deep.equal({
        count: large.length,
        usd_equivalent: usd(large.reduce((s, x) => s + x.kesMinor, 0n)),
        truncated: false,
        items: large.map((s) => ({
          order_id: s.id,
          user_id: s.user,
          created_at: new Date(from.getTime() + s.at).toISOString(),
          status: s.status,
          method: s.method,
          currency: s.currency,
          amount: amount(s.amountMinor, s.currency),
          usd_equivalent: usd(s.kesMinor),
        })),
      });
    });

    it('then the structuring alerts are the bursts of small payments adding up past the threshold', () => {
      // The definition, by brute force: a window starts at each small payment and spans 24 hours; it
      // qualifies with two or more payments adding up to the threshold; a qualifying window starting
      // less than 24 hours after the previous qualifying one of the same user is part of the same alert.
      const expected: unknown[] = [];
      for (const user of new Set(seeds.map((s) => s.user))) {
        const small = seeds.filter((s) => s.user === user && s.kesMinor < THRESHOLD_KES_MINOR).sort((x, y) => x.at - y.at);
        let previous: number | undefined;
        for (const start of small) {
          const window = small.filter((s) => s.at >= start.at && s.at <= start.at + 24 * HOUR);
          const total = window.reduce((acc, s) => acc + s.kesMinor, 0n);
          if (window.length < 2 || total < THRESHOLD_KES_MINOR) continue;
          if (previous === undefined || start.at - previous >= 24 * HOUR) {
            expected.push({
              at: start.at,
              alert: {
                user_id: user,
                first_order_id: start.id,
                window_start: new Date(from.getTime() + start.at).toISOString(),
                window_end: new Date(from.getTime() + Math.max(...window.map((s) => s.at))).toISOString(),
                payments: window.length,
                usd_equivalent: usd(total),
              },
            });
          }
          previous = start.at;
        }
      }
      const items = (expected as { at: number; alert: unknown }[]).sort((x, y) => x.at - y.at).map((x) => x.alert);
      expect(items).to.have.length(2);
      expect(report.structuring_alerts).to.deep.equal({ count: items.length, truncated: false, items });
      expect((items[0] as { user_id: string; payments: number }).user_id).to.equal(users.a.id);
      expect((items[0] as { payments: number }).payments).to.equal(3);
    });

    it('then the blocklist hits are the period’s, with their entries', () => {
      expect(report.blocklist_hits).to.deep.equal({
        count: 3,
        by_context: { registration: 1, kyc: 1, payment: 1, ad: 0 },
        truncated: false,
        items: hits.map((h) => ({
          hit_id: h.id,
          at: new Date(from.getTime() + h.at).toISOString(),
          context: h.context,
          user_id: h.user,
          order_id: h.order,
          field: 'test',
          screened_value: h.value,
          entry_id: h.entry,
          entry_type: h.entry === entries.email.entry_id ? 'email' : 'name',
          entry_value: h.value,
          entry_source: 'manual',
          score: '1.0000',
        })),
      });
    });

    it('then the KYC counts are the users registered before the end of the period and the changes during it', () => {
      expect(report.kyc).to.deep.equal({
        users_by_status: { unverified: 1, pending: 1, verified: 2, rejected: 1 },
        changes_in_period: { unverified: 0, pending: 1, verified: 1, rejected: 1 },
      });
    });

    it('then appeals by status are zeros until appeals exist', () => {
      expect(report.appeals).to.deep.equal({ by_status: { open: 0, approved: 0, rejected: 0, expired: 0 } });
    });

    it('then the CSV of the same period has the same content, from the same run', async () => {
      const res = await getReport(admin, { from: from.toISOString(), to: to.toISOString(), format: 'csv' });
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.match(/^text\/csv/);
      expect(res.headers['content-disposition']).to.match(/^attachment; filename="compliance-report-/);
      expect(res.headers['x-workflow-run-id']).to.equal(report.run_id);
      const csvRows: string[][] = parse(res.text);
      expect(csvRows[0]).to.deep.equal(['section', 'item', 'field', 'value']);
      expect(csvRows.slice(1)).to.deep.equal(leaves(report as unknown as Record<string, unknown>));
      const value = (section: string, item: string, field: string) =>
        csvRows.find((r) => r[0] === section && r[1] === item && r[2] === field)?.[3];
      expect(value('totals', '', 'count')).to.equal('14');
      expect(value('large_transactions', 'items.2', 'amount')).to.equal('15000.00');
      expect(value('structuring_alerts', 'items.1', 'user_id')).to.equal(users.a.id);
      expect(value('kyc', 'users_by_status', 'verified')).to.equal('2');
      expect(value('appeals', 'by_status', 'open')).to.equal('0');
      expect(value('report', '', 'run_id')).to.equal(report.run_id);
    });
  });

  describe('when the same period is asked for twice, then with refresh=true', () => {
    it('then the second call reuses the run, and refresh starts a new run under the same workflow id', async () => {
      const { from, to } = periodIn(1995, 30);
      const query = { from: from.toISOString(), to: to.toISOString() };
      const first = await getReport(compliance, query);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const one = first.body as ReportBody;
      expect(first.headers['x-workflow-id']).to.equal(one.workflow_id);
      expect(first.headers['x-workflow-run-id']).to.equal(one.run_id);

      const second = (await getReport(admin, query)).body as ReportBody;
      expect(second.run_id).to.equal(one.run_id);
      expect(second.generated_at).to.equal(one.generated_at);

      const handle = temporalClient().workflow.getHandle(one.workflow_id);
      const described = await handle.describe();
      expect(described.runId).to.equal(one.run_id);
      expect(described.type).to.equal('compliance-report');
      expect(described.status.name).to.equal('COMPLETED');

      const refreshed = (await getReport(compliance, { ...query, refresh: true })).body as ReportBody;
      expect(refreshed.workflow_id).to.equal(one.workflow_id);
      expect(refreshed.run_id).to.not.equal(one.run_id);
      expect(new Date(refreshed.generated_at).getTime()).to.be.greaterThan(new Date(one.generated_at).getTime());
      expect((await handle.describe()).runId).to.equal(refreshed.run_id);

      const after = (await getReport(compliance, query)).body as ReportBody;
      expect(after.run_id).to.equal(refreshed.run_id);
    });

    it('then date-only bounds mean midnight UTC and name the same run as the full timestamps', async () => {
      const day = new Date(Date.UTC(1994, 0, 1) + randomInt(0, 300) * 24 * HOUR).toISOString().slice(0, 10);
      const next = new Date(new Date(`${day}T00:00:00Z`).getTime() + 24 * HOUR).toISOString();
      const byDate = (await getReport(compliance, { from: day, to: next.slice(0, 10) })).body as ReportBody;
      const byInstant = (await getReport(compliance, { from: `${day}T00:00:00Z`, to: next })).body as ReportBody;
      expect(byDate.period).to.deep.equal({ from: `${day}T00:00:00.000Z`, to: next });
      expect(byInstant.run_id).to.equal(byDate.run_id);
    });
  });

  describe('when an appeals table exists', () => {
    it('then the appeals section counts its rows of the period by status', async () => {
      // A temporary table shadows any real one for this connection only.
      const counts = await database().transaction(async (transaction) => {
        await database().query('CREATE TEMPORARY TABLE appeals (status text, created_at timestamptz) ON COMMIT DROP', { transaction });
        await database().query(
          `INSERT INTO appeals VALUES ('open', '1991-01-02'), ('open', '1991-01-03'), ('approved', '1991-01-04'), ('open', '1992-01-01')`,
          { transaction },
        );
        return database().query<{ status: string; count: string }>(
          `SELECT status, count FROM compliance_appeal_counts('1991-01-01', '1991-02-01') ORDER BY status`,
          { transaction, type: QueryTypes.SELECT },
        );
      });
      expect(counts).to.deep.equal([
        { status: 'approved', count: '1' },
        { status: 'open', count: '2' },
      ]);
    });
  });

  describe('when a screened value in the period is a spreadsheet formula', () => {
    it('then the CSV carries it as quoted text a spreadsheet will not run, and the JSON unchanged', async () => {
      const { from, to } = periodIn(1989, 2);
      const entry = await blocklist(compliance, { type: 'email', value: `formula-${randomInt(1e9)}@example.com` });
      const formulas = ['=HYPERLINK("http://x","y")', '@SUM(1+1)'];
      for (const [i, value] of formulas.entries()) {
        await database().query(
          `INSERT INTO screening_hits (id, context, user_id, order_id, field, screened_value, entry_id, score, created_at)
           VALUES (:id, 'registration', NULL, NULL, 'full_name', :value, :entry, 1, :at)`,
          {
            replacements: {
              id: uuidv7(from.getTime() + (i + 1) * HOUR),
              value,
              entry: entry.entry_id,
              at: new Date(from.getTime() + (i + 1) * HOUR),
            },
          },
        );
      }
      const query = { from: from.toISOString(), to: to.toISOString() };
      const json = await getReport(compliance, query);
      expect(json.status, JSON.stringify(json.body)).to.equal(200);
      expect(JSON.stringify(json.body)).to.include('=HYPERLINK(\\"http://x\\",\\"y\\")').and.include('@SUM(1+1)');

      const res = await getReport(compliance, { ...query, format: 'csv' });
      expect(res.status).to.equal(200);
      const csvRows: string[][] = parse(res.text);
      const cells = csvRows.flat();
      expect(cells).to.include('\'=HYPERLINK("http://x","y")').and.include("'@SUM(1+1)");
      for (const cell of cells) expect(/^[=+@\t\r]/.test(cell), cell).to.equal(false);
      expect(res.text).to.include(`"'=HYPERLINK(""http://x"",""y"")"`);
    });
  });

  describe('when each role asks for the report (access matrix)', () => {
    it('then anonymous is 401, a user 403, compliance and admin 200', async () => {
      const { from, to } = periodIn(1993, 1);
      const query = { from: from.toISOString(), to: to.toISOString() };
      expectProblem(await getReport(undefined, query), 401, 'unauthenticated');
      expectProblem(await getReport(await newUser(), query), 403, 'forbidden');
      expect((await getReport(compliance, query)).status).to.equal(200);
      expect((await getReport(admin, query)).status).to.equal(200);
    });
  });

  describe('when the query is invalid', () => {
    const cases: [string, Record<string, string>, string][] = [
      ['no from', { to: '1992-02-01' }, 'from'],
      ['no to', { from: '1992-01-01' }, 'to'],
      ['a from that is no time', { from: 'last week', to: '1992-02-01' }, 'from'],
      ['a to before from', { from: '1992-02-01', to: '1992-01-01' }, 'to'],
      ['an unknown format', { from: '1992-01-01', to: '1992-02-01', format: 'xlsx' }, 'format'],
    ];
    for (const [what, query, field] of cases) {
      it(`then ${what} is a 400 naming ${field}`, async () => {
        const problem = expectProblem(await getReport(compliance, query), 400, 'validation_failed');
        expect(problem.errors?.map((e) => e.field)).to.include(field);
      });
    }
  });
});
