import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { creditIncoming } from '../services/money-in';
import { recordSandboxArrival, submitTransfer } from '../repositories/sandbox-transfers';
import { api, completedPayment, initiate, metricsAuth, newUser, waitForOrder, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { rows } from './support/db';
import { realRails } from './support/rails';
import { currentRailFakes } from './support/stack';

/**
 * Reconciliation line by line (docs/wallets.md#reconciliation-line-by-line): each rail's own record matched
 * with the ledger, every difference a break that staff resolve, and the rail balances explained to zero.
 */

interface BreakBody {
  break_id: string;
  rail: string;
  method: string;
  kind: string;
  direction: 'in' | 'out';
  reference: string;
  currency: string;
  rail_amount: string | null;
  ledger_amount: string | null;
  rail_lines: number;
  ledger_lines: number;
  status: string;
  resolution_note: string | null;
}

interface RunBody {
  from: string;
  to: string;
  rails: { rail: string; method: string; rail_lines: number | null; ledger_lines: number; breaks: number; note?: string }[];
  breaks: BreakBody[];
}

interface FloatBody {
  data: {
    currency: string;
    rails: { method: string; connector: string | null; ledger: string; reported: string | null; difference: string | null }[];
  }[];
}

const minor = (decimal: string | null): bigint => {
  if (decimal === null) return 0n;
  const [whole, fraction = ''] = decimal.split('.');
  const sign = whole.startsWith('-') ? -1n : 1n;
  return sign * BigInt(`${whole.replace('-', '')}${fraction}`);
};

const run = async (staff: TestUser, from: Date, to = new Date(Date.now() + 60_000)): Promise<RunBody> => {
  const res = await api()
    .post('/api/v1/compliance/reconciliation/runs')
    .set(staff.auth)
    .send({ from: from.toISOString(), to: to.toISOString() });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body as RunBody;
};

const depositReferenceOf = async (user: TestUser): Promise<string> =>
  ((await api().get('/api/v1/wallets').set(user.auth)).body as { deposit_reference: string }).deposit_reference;

/** Each sandbox rail's difference (what it reports less what the ledger says it holds), by currency and method. */
async function sandboxDifferences(staff: TestUser): Promise<Map<string, bigint>> {
  const float = (await api().get('/api/v1/compliance/reconciliation').set(staff.auth)).body as FloatBody;
  const differences = new Map<string, bigint>();
  for (const c of float.data) {
    for (const r of c.rails.filter((x) => x.connector === 'sandbox' && x.reported !== null)) {
      differences.set(`${c.currency} ${r.method}`, minor(r.difference));
    }
  }
  return differences;
}

/** Let in-flight callbacks land, so that each side has what the other has. */
const settle = () => new Promise((r) => setTimeout(r, 1500));

describe('reconciliation line by line', () => {
  let officer: TestUser;
  let admin: TestUser;
  before(async () => {
    officer = await newUser({ roles: ['compliance'], funded: false });
    admin = await newUser({ roles: ['admin'], funded: false });
  });

  describe('when nothing was planted (a clean run)', () => {
    it('then the period of its own activity has zero breaks, and what it moved is explained to zero on every sandbox rail', async function () {
      this.timeout(60_000);
      // The suite shares one database with tests that pay over the real connectors' fakes beside the sandbox, so
      // the sandbox's books never hold all of the ledger's rail accounts: what this run moves is measured as the
      // change of each rail's difference across it, which nothing planted and nothing lost leaves at zero. A whole
      // history explained to zero is the deployment of its own in reconciliation-deployment.test.ts.
      const before = await sandboxDifferences(officer);
      const start = new Date(Math.floor(Date.now() / 1000) * 1000);
      const payer = await newUser({ kycStatus: 'verified' });
      await completedPayment(payer);
      const bank = await initiate(payer, {
        amount: '1500.00',
        currency: 'KES',
        method: 'bank_transfer',
        destination: { bank_code: '01', account_number: '1234567810', account_name: 'Jane Doe' },
      });
      expect(bank.status, JSON.stringify(bank.body)).to.equal(202);
      const bankPayout = await waitForOrder(payer, (bank.body as { order_id: string }).order_id);
      expect(bankPayout.status).to.equal('completed');
      if (!realRails) {
        const c2b = await api()
          .post('/api/v1/sandbox/c2b')
          .set(admin.auth)
          .send({ deposit_reference: await depositReferenceOf(payer), amount: '750.00', phone: '+254712345678' });
        expect(c2b.status, JSON.stringify(c2b.body)).to.equal(202);
      }
      await settle();
      const mine = await run(officer, start);
      expect(mine.breaks, JSON.stringify(mine.breaks)).to.deep.equal([]);
      for (const r of mine.rails) expect(r.rail_lines, `${r.rail} ${r.method}: ${r.note ?? ''}`).to.not.equal(null);
      if (realRails) {
        // The bank charged for the transfer on its statement: the run posted the charge once, to
        // expense:rail_fees from rail:bank_transfer, and matched it like any other line; a second run posts nothing.
        await run(officer, start);
        const charge = `CHG${bankPayout.rail_reference ?? ''}`;
        const posted = await rows<{ account: string; direction: string; amount_minor: string }>(
          `SELECT e.account, e.direction, e.amount_minor::text AS amount_minor
             FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
             JOIN rail_charges c ON c.id = t.rail_charge_id
            WHERE c.rail = 'jenga' AND c.provider_reference = :charge ORDER BY e.account`,
          { charge },
        );
        expect(posted).to.deep.equal([
          { account: 'expense:rail_fees', direction: 'debit', amount_minor: '2500' },
          { account: 'rail:bank_transfer', direction: 'credit', amount_minor: '2500' },
        ]);
        return;
      }
      const sandboxLines = mine.rails.filter((r) => r.rail === 'sandbox').reduce((n, r) => n + (r.rail_lines ?? 0), 0);
      expect(sandboxLines, 'the sandbox read its own books').to.be.greaterThan(0);
      const after = await sandboxDifferences(officer);
      for (const [rail, difference] of after) expect(difference - (before.get(rail) ?? 0n), rail).to.equal(0n);
    });
  });

  describe('when a doubled credit, a missing credit, a payout the ledger lacks and an amount mismatch are planted', () => {
    let found: BreakBody[] = [];
    const planted = { doubled: '', missing: '', payout: '', mismatch: '' };

    before(async function () {
      this.timeout(60_000);
      // A bank statement dates its lines to the second: the period starts at the second the planting does.
      const start = new Date(Math.floor(Date.now() / 1000) * 1000);
      const payer = await newUser({ funded: false });
      if (realRails) await plantAtTheRealRails(payer);
      else await plantInTheSandbox(payer);
      found = (await run(officer, start)).breaks;
    });

    /** The sandbox's own books, and the ledger beside them. */
    async function plantInTheSandbox(payer: TestUser): Promise<void> {
      // A doubled credit: the paybill took one payment, and the ledger credited it twice (as C2B and as STK).
      const c2b = await api()
        .post('/api/v1/sandbox/c2b')
        .set(admin.auth)
        .send({ deposit_reference: await depositReferenceOf(payer), amount: '120.00', phone: '+254712345678' });
      expect(c2b.status, JSON.stringify(c2b.body)).to.equal(202);
      planted.doubled = (c2b.body as { provider_reference: string }).provider_reference;
      await creditIncoming({
        channel: 'mpesa_stk',
        rail: 'sandbox',
        providerReference: planted.doubled,
        currency: 'KES',
        amountMinor: 12000n,
        userId: payer.id,
        payer: { phone: '+254712345678' },
      });
      // A missing credit: money arrived at the bank and was never credited.
      planted.missing = `SBXB-MISSING-${randomUUID().slice(0, 8)}`;
      await recordSandboxArrival({
        method: 'bank_transfer',
        channel: 'bank_transfer',
        reference: planted.missing,
        currency: 'KES',
        amount: '300.00',
      });
      // A payout at the rail that the ledger lacks.
      planted.payout = `SBX-MOBILEMONEY-LOST-${randomUUID().slice(0, 8)}`;
      await submitTransfer({
        idempotencyKey: `planted-${planted.payout}`,
        method: 'mobile_money',
        reference: planted.payout,
        request: { amount: '45.00', currency: 'KES', destination: { phone: '+254712345678' } },
        outcome: 'succeeded',
        failureCode: null,
        providerCode: null,
        sendsCallback: false,
        settlesAfterMs: 0,
      });
      // An amount mismatch: the bank's statement says 999.00 for a credit the ledger has as 900.00.
      const credit = await api()
        .post('/api/v1/sandbox/bank-credits')
        .set(admin.auth)
        .send({ deposit_reference: await depositReferenceOf(payer), amount: '900.00' });
      expect(credit.status, JSON.stringify(credit.body)).to.equal(202);
      planted.mismatch = (credit.body as { provider_reference: string }).provider_reference;
      await rows(`UPDATE sandbox_transfers SET request = jsonb_set(request, '{amount}', '"999.00"') WHERE reference = :ref RETURNING id`, {
        ref: planted.mismatch,
      });
    }

    /** The real connectors' fakes (the exchange's deposits, the Jenga statement), and the ledger beside them. */
    async function plantAtTheRealRails(payer: TestUser): Promise<void> {
      const fakes = currentRailFakes();
      if (!fakes) throw new Error('TEST_RAILS=real without the provider fakes');
      // A doubled credit: the exchange took one deposit, and the ledger credited it twice (as two outputs).
      const arrived = fakes.binance.deposit({ coin: 'USDT', amount: '1.2', tag: await depositReferenceOf(payer), network: 'TRX' });
      planted.doubled = arrived.txId;
      for (const output of [`${arrived.address}/`, `${arrived.address}/bogus`]) {
        await creditIncoming({
          channel: 'crypto',
          rail: 'ccxt',
          providerReference: arrived.txId,
          providerOutput: output,
          currency: 'USDT',
          amountMinor: 1_200_000n,
          userId: payer.id,
          payer: { address: arrived.sourceAddress },
        });
      }
      // A missing credit: money arrived at the bank and was never credited.
      planted.missing = `FTMISSING${randomUUID().slice(0, 8).toUpperCase()}`;
      fakes.jenga.credit({ reference: planted.missing, amount: '300.00', description: 'pesalink from someone' });
      // A payout at the rail that the ledger lacks: the bank's statement debits a transfer Paygate never recorded.
      planted.payout = `FTLOST${randomUUID().slice(0, 8).toUpperCase()}`;
      fakes.jenga.debit({ reference: planted.payout, amount: '45.00', description: `PESALINK TRANSFER ${planted.payout}` });
      // An amount mismatch: the bank's statement says 999.00 for a credit the ledger has as 900.00.
      planted.mismatch = `FTMISMATCH${randomUUID().slice(0, 8).toUpperCase()}`;
      fakes.jenga.credit({ reference: planted.mismatch, amount: '999.00', description: 'pesalink from jane' });
      await creditIncoming({
        channel: 'bank_transfer',
        rail: 'jenga',
        providerReference: planted.mismatch,
        currency: 'KES',
        amountMinor: 90000n,
        userId: payer.id,
        payer: { name: null },
      });
    }

    /** Where each planted break is: the rail and the method whose record carries it. */
    const where = realRails
      ? {
          doubled: ['ccxt', 'crypto'],
          missing: ['jenga', 'bank_transfer'],
          payout: ['jenga', 'bank_transfer'],
          mismatch: ['jenga', 'bank_transfer'],
        }
      : {
          doubled: ['sandbox', 'mobile_money'],
          missing: ['sandbox', 'bank_transfer'],
          payout: ['sandbox', 'mobile_money'],
          mismatch: ['sandbox', 'bank_transfer'],
        };

    it('then one run reports a duplicate for the doubled credit', () => {
      const b = found.find((x) => x.reference === planted.doubled);
      expect(b, JSON.stringify(found)).to.include({
        kind: 'duplicate',
        rail: where.doubled[0],
        method: where.doubled[1],
        direction: 'in',
        rail_lines: 1,
        ledger_lines: 2,
      });
      expect(b?.ledger_amount).to.equal(realRails ? '2.400000' : '240.00');
    });

    it('then the same run reports the missing credit as at the rail but not in the ledger', () => {
      const b = found.find((x) => x.reference === planted.missing);
      expect(b, JSON.stringify(found)).to.include({
        kind: 'missing_in_ledger',
        rail: where.missing[0],
        method: where.missing[1],
        direction: 'in',
        rail_amount: '300.00',
        ledger_amount: null,
      });
    });

    it('then the same run reports the payout the ledger lacks', () => {
      const b = found.find((x) => x.reference === planted.payout);
      expect(b, JSON.stringify(found)).to.include({
        kind: 'missing_in_ledger',
        rail: where.payout[0],
        method: where.payout[1],
        direction: 'out',
        rail_amount: '45.00',
      });
    });

    it('then the same run reports the amount mismatch with both figures', () => {
      const b = found.find((x) => x.reference === planted.mismatch);
      expect(b, JSON.stringify(found)).to.include({
        kind: 'amount_mismatch',
        rail: where.mismatch[0],
        method: where.mismatch[1],
        rail_amount: '999.00',
        ledger_amount: '900.00',
      });
    });

    it('then nothing else breaks, and a second run finds the same breaks without recording them again', async () => {
      expect(found.map((b) => b.reference).sort()).to.deep.equal(Object.values(planted).sort());
      const again = await run(officer, new Date(Date.now() - 10 * 60_000));
      const ids = found.map((b) => b.break_id);
      expect(
        again.breaks
          .filter((b) => Object.values(planted).includes(b.reference))
          .map((b) => b.break_id)
          .sort(),
      ).to.deep.equal([...ids].sort());
      const [{ n }] = await rows<{ n: number }>('SELECT count(*)::int AS n FROM reconciliation_breaks WHERE reference IN (:refs)', {
        refs: Object.values(planted),
      });
      expect(n).to.equal(4);
    });

    it('then each break is an event for staff and never for a customer, and a metric', async () => {
      const events = await api().get('/api/v1/events').query({ type: 'reconciliation.*', limit: 100 }).set(officer.auth);
      expect(events.status).to.equal(200);
      const refs = (events.body as { data: { type: string; data: { reference: string } }[] }).data
        .filter((e) => e.type === 'reconciliation.break_found')
        .map((e) => e.data.reference);
      expect(refs).to.include.members(Object.values(planted));
      const customer = await newUser({ funded: false });
      const theirs = await api().get('/api/v1/events').query({ type: 'reconciliation.*' }).set(customer.auth);
      expect((theirs.body as { data: unknown[] }).data).to.deep.equal([]);
      const metrics = await api().get('/metrics').set(metricsAuth());
      expect(metrics.text).to.match(
        new RegExp(`paygate_reconciliation_breaks_total\\{rail="${where.doubled[0]}",kind="duplicate"\\} [1-9]`),
      );
      expect(metrics.text).to.match(new RegExp(`paygate_reconciliation_breaks_open\\{rail="${where.mismatch[0]}"\\} [1-9]`));
    });

    it('then staff list them by rail and status, page by page', async () => {
      const first = await api()
        .get('/api/v1/compliance/reconciliation/breaks')
        .query({ rail: where.mismatch[0], status: 'open', limit: 2 })
        .set(officer.auth);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const page = first.body as { data: BreakBody[]; next_cursor: string | null };
      expect(page.data).to.have.length(2);
      expect(page.data.every((b) => b.rail === where.mismatch[0] && b.status === 'open')).to.equal(true);
      expect(page.next_cursor).to.be.a('string');
      const second = await api()
        .get('/api/v1/compliance/reconciliation/breaks')
        .query({ rail: where.mismatch[0], status: 'open', limit: 2, cursor: page.next_cursor })
        .set(officer.auth);
      const ids = new Set([...page.data, ...(second.body as { data: BreakBody[] }).data].map((b) => b.break_id));
      expect(ids.size).to.equal(page.data.length + (second.body as { data: BreakBody[] }).data.length);
      const none = await api().get('/api/v1/compliance/reconciliation/breaks').query({ rail: 'jenga-nope' }).set(officer.auth);
      expect(none.status).to.equal(400);
    });

    it('then a break below the four-eyes threshold is resolved with a note, once', async () => {
      const b = found.find((x) => x.reference === planted.payout)!;
      const noNote = await api()
        .post(`/api/v1/compliance/reconciliation/breaks/${b.break_id}/resolve`)
        .set(officer.auth)
        .send({ note: ' ' });
      expect(noNote.status).to.equal(400);
      const res = await api()
        .post(`/api/v1/compliance/reconciliation/breaks/${b.break_id}/resolve`)
        .set(officer.auth)
        .send({ note: 'planted transfer; the provider confirmed it was a test' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ status: 'resolved', resolution_note: 'planted transfer; the provider confirmed it was a test' });
      const again = await api()
        .post(`/api/v1/compliance/reconciliation/breaks/${b.break_id}/resolve`)
        .set(officer.auth)
        .send({ note: 'again' });
      expect(again.status).to.equal(409);
    });

    it('then above the threshold resolving takes a second staff member', async () => {
      const restore = withEnv({ FOUR_EYES_ABOVE_KES: '100' });
      try {
        const b = found.find((x) => x.reference === planted.mismatch)!;
        const asked = await api()
          .post(`/api/v1/compliance/reconciliation/breaks/${b.break_id}/resolve`)
          .set(officer.auth)
          .send({ note: 'the bank corrected its statement' });
        expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
        const requestId = (asked.body as { request_id: string; kind: string }).request_id;
        expect(asked.body).to.include({ kind: 'resolve_reconciliation_break', subject_id: b.break_id });
        const self = await api().post(`/api/v1/compliance/approvals/${requestId}/approve`).set(officer.auth).send({ note: 'me' });
        expect(self.status).to.equal(403);
        const [still] = await rows<{ status: string }>('SELECT status FROM reconciliation_breaks WHERE id = :id', { id: b.break_id });
        expect(still.status).to.equal('open');
        const approved = await api().post(`/api/v1/compliance/approvals/${requestId}/approve`).set(admin.auth).send({ note: 'checked' });
        expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
        const [after] = await rows<{ status: string; resolved_by: string }>(
          'SELECT status, resolved_by FROM reconciliation_breaks WHERE id = :id',
          {
            id: b.break_id,
          },
        );
        expect(after).to.deep.equal({ status: 'resolved', resolved_by: officer.id });
      } finally {
        restore();
      }
    });
  });

  describe('when money the rail never saw is in the ledger', () => {
    it('then the run reports it as in the ledger but not at the rail, on whichever bank rail is configured', async function () {
      this.timeout(30_000);
      const start = new Date();
      const payer = await newUser({ funded: false });
      const rail = realRails ? 'jenga' : 'sandbox';
      const reference = `PLANTED-${randomUUID().slice(0, 12)}`;
      await creditIncoming({
        channel: 'bank_transfer',
        rail,
        providerReference: reference,
        currency: 'KES',
        amountMinor: 5000n,
        userId: payer.id,
        payer: {},
      });
      const { breaks, rails } = await run(officer, start);
      const bank = rails.find((r) => r.method === 'bank_transfer');
      expect(bank?.rail).to.equal(rail);
      expect(
        breaks.find((b) => b.reference === reference),
        JSON.stringify(breaks),
      ).to.include({
        kind: 'missing_at_rail',
        rail,
        direction: 'in',
        rail_amount: null,
        ledger_amount: '50.00',
      });
    });
  });

  describe('when someone other than staff asks', () => {
    it('then a customer is refused with 403 and an anonymous caller with 401', async () => {
      const customer = await newUser({ funded: false });
      for (const [method, path] of [
        ['get', '/api/v1/compliance/reconciliation/breaks'],
        ['post', '/api/v1/compliance/reconciliation/runs'],
        ['post', `/api/v1/compliance/reconciliation/breaks/${randomUUID()}/resolve`],
      ] as const) {
        expect((await api()[method](path).set(customer.auth).send({ note: 'x' })).status, path).to.equal(403);
        expect((await api()[method](path).send({ note: 'x' })).status, path).to.equal(401);
      }
    });
  });
});
