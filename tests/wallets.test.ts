import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { creditIncoming } from '../services/money-in';
import { api, blocklist, newUser, uniqueKenyanPhone, type TestUser } from './support/api';
import { rows } from './support/db';
import { realRails } from './support/rails';

/** Wallets and money in (docs/wallets.md#money-in): balances, statements, and each way in credited exactly once. */

interface WalletsBody {
  user_id: string;
  deposit_reference: string;
  data: { currency: string; available: string; held: string; pending_in: string; updated_at: string | null }[];
}

interface StatementBody {
  data: { entry_id: string; kind: string; amount: string; balance_after: string; deposit_id: string | null; order_id: string | null }[];
  next_cursor: string | null;
}

interface Arrival {
  provider_reference: string;
  deposit: { deposit_id: string; status: string; channel: string; currency: string; amount: string; provider_reference: string };
}

async function walletsOf(user: TestUser, userId?: string): Promise<WalletsBody> {
  const res = await api()
    .get(`/api/v1/wallets${userId ? `?user_id=${userId}` : ''}`)
    .set(user.auth);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body as WalletsBody;
}

const available = (w: WalletsBody, currency: string) => w.data.find((d) => d.currency === currency)?.available;

async function statementOf(user: TestUser, currency: string, query = ''): Promise<StatementBody> {
  const res = await api().get(`/api/v1/wallets/${currency}/transactions${query}`).set(user.auth);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body as StatementBody;
}

/**
 * A paybill (C2B) payment quoting `deposit_reference`: the admin's sandbox simulator on the sandbox rails;
 * under TEST_RAILS=real, where simulators are not served, the same crediting path a C2B confirmation takes.
 */
async function c2b(admin: TestUser, body: { deposit_reference: string; amount: string; phone: string }): Promise<Arrival> {
  if (realRails) {
    const transId = randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase();
    const [whole, cents] = body.amount.split('.');
    const { deposit } = await creditIncoming({
      channel: 'mpesa_c2b',
      rail: 'daraja',
      providerReference: transId,
      currency: 'KES',
      amountMinor: BigInt(whole) * 100n + BigInt(cents ?? '0'),
      quotedReference: body.deposit_reference,
      payer: { phone: body.phone },
    });
    return { provider_reference: transId, deposit: deposit as Arrival['deposit'] };
  }
  const res = await api().post('/api/v1/sandbox/c2b').set(admin.auth).send(body);
  expect(res.status, JSON.stringify(res.body)).to.equal(202);
  return res.body as Arrival;
}

/** The money-in simulators are served on the sandbox rails only: their cases are registered there only. */
const onSandboxRails = (title: string, body: () => void): void => {
  if (!realRails) describe(title, body);
};

describe('wallets and money in', () => {
  let admin: TestUser;

  before(async () => {
    admin = await newUser({ roles: ['admin'], funded: false });
  });

  describe('when a new user reads their wallets', () => {
    it('then every currency is at zero, and they have their own deposit reference', async () => {
      const [a, b] = [await newUser({ funded: false }), await newUser({ funded: false })];
      const wa = await walletsOf(a);
      expect(wa.user_id).to.equal(a.id);
      expect(wa.data.map((d) => d.currency)).to.deep.equal(['KES', 'USD', 'USDT', 'USDC', 'BTC', 'ETH']);
      expect(wa.data.find((d) => d.currency === 'KES')).to.deep.equal({
        currency: 'KES',
        available: '0.00',
        held: '0.00',
        pending_in: '0.00',
        updated_at: null,
      });
      expect(wa.deposit_reference).to.match(/^PG[0-9A-HJKMNP-TV-Z]{10}$/);
      expect((await walletsOf(b)).deposit_reference).to.not.equal(wa.deposit_reference);
    });
  });

  describe('when money arrives by paybill (C2B) quoting the user deposit reference', () => {
    it('then the wallet is credited, the statement shows it with its balance, and the deposit is an event', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletsOf(user);
      const first = await c2b(admin, { deposit_reference: reference, amount: '2000.00', phone: uniqueKenyanPhone() });
      expect(first.provider_reference).to.match(/^[A-Z0-9]{10}$/);
      expect(first.deposit).to.include({ status: 'completed', channel: 'mpesa_c2b', currency: 'KES', amount: '2000.00' });
      // Typed as people type it: lower case, with spaces.
      await c2b(admin, {
        deposit_reference: ` ${reference.toLowerCase().slice(0, 6)} ${reference.toLowerCase().slice(6)} `,
        amount: '500.50',
        phone: uniqueKenyanPhone(),
      });

      expect(available(await walletsOf(user), 'KES')).to.equal('2500.50');
      const statement = await statementOf(user, 'KES');
      expect(statement.data.map((l) => [l.kind, l.amount, l.balance_after])).to.deep.equal([
        ['deposit', '500.50', '2500.50'],
        ['deposit', '2000.00', '2000.00'],
      ]);
      expect(statement.data[1].deposit_id).to.equal(first.deposit.deposit_id);

      const read = await api().get(`/api/v1/wallets/deposits/${first.deposit.deposit_id}`).set(user.auth);
      expect(read.status).to.equal(200);
      expect(read.body).to.include({ status: 'completed', provider_reference: first.provider_reference });
      const events = await rows<{ type: string; status: string }>(
        `SELECT type, payload->>'status' AS status FROM webhook_events WHERE deposit_id = :id`,
        { id: first.deposit.deposit_id },
      );
      // The deposit's status change, and the credit to the wallet it made.
      expect(events).to.have.deep.members([
        { type: 'deposit.status_changed', status: 'completed' },
        { type: 'wallet.credited', status: null },
      ]);
    });
  });

  describe('when the same provider transaction is reported again', () => {
    it('then a confirmation replayed three times, or twenty at once, credits once', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletsOf(user);
      const transId = `R${randomUUID().replace(/-/g, '').slice(0, 9).toUpperCase()}`;
      const confirmation = {
        channel: 'mpesa_c2b' as const,
        rail: 'sandbox',
        providerReference: transId,
        currency: 'KES' as const,
        amountMinor: 100_000n,
        quotedReference: reference,
        payer: { phone: uniqueKenyanPhone() },
      };
      const sequential = [];
      for (let i = 0; i < 3; i++) sequential.push(await creditIncoming(confirmation));
      expect(sequential.map((r) => r.created)).to.deep.equal([true, false, false]);
      expect(new Set(sequential.map((r) => r.deposit.deposit_id)).size).to.equal(1);

      const racing = { ...confirmation, providerReference: `${transId}X` };
      const raced = await Promise.all(Array.from({ length: 20 }, () => creditIncoming(racing)));
      expect(raced.filter((r) => r.created)).to.have.length(1);

      expect(available(await walletsOf(user), 'KES')).to.equal('2000.00');
      expect((await statementOf(user, 'KES')).data).to.have.length(2);
    });
  });

  describe('when money arrives with a reference nobody has', () => {
    it('then it waits unmatched until staff assign it, once, to a user wallet', async () => {
      const user = await newUser({ funded: false });
      const compliance = await newUser({ roles: ['compliance'], funded: false });
      const reference = `PGNOBODY${Date.now() % 10_000}`;
      const arrival = await c2b(admin, { deposit_reference: reference, amount: '750.00', phone: uniqueKenyanPhone() });
      expect(arrival.deposit.status).to.equal('unmatched');

      const listed = await api().get('/api/v1/wallets/unmatched-deposits?limit=100').set(compliance.auth);
      expect(listed.status).to.equal(200);
      const mine = (listed.body as { data: { deposit_id: string; quoted_reference: string }[] }).data.find(
        (d) => d.deposit_id === arrival.deposit.deposit_id,
      );
      expect(mine?.quoted_reference).to.equal(reference);
      expect((await api().get('/api/v1/wallets/unmatched-deposits').set(user.auth)).status).to.equal(403);

      const assign = () =>
        api()
          .post(`/api/v1/wallets/unmatched-deposits/${arrival.deposit.deposit_id}/assign`)
          .set(compliance.auth)
          .send({ user_id: user.id });
      const [one, two] = await Promise.all([assign(), assign()]);
      expect([one.status, two.status].sort()).to.deep.equal([200, 409]);
      expect(available(await walletsOf(user), 'KES')).to.equal('750.00');
      const [line] = (await statementOf(user, 'KES')).data;
      expect(line).to.include({
        kind: 'deposit_released',
        amount: '750.00',
        balance_after: '750.00',
        deposit_id: arrival.deposit.deposit_id,
      });
      expect((await assign()).status).to.equal(409);
    });
  });

  describe('when the payer is on the blocklist', () => {
    it('then the money waits in compliance suspense with a screening hit, and the wallet is not credited', async () => {
      const user = await newUser({ funded: false });
      const phone = uniqueKenyanPhone();
      await blocklist(admin, { type: 'phone', value: phone, reason: 'deposit screening test' });
      const arrival = await c2b(admin, { deposit_reference: (await walletsOf(user)).deposit_reference, amount: '300.00', phone });
      expect(arrival.deposit.status).to.equal('held');
      expect(available(await walletsOf(user), 'KES')).to.equal('0.00');
      const hits = await rows<{ context: string; field: string }>(`SELECT context, field FROM screening_hits WHERE deposit_id = :id`, {
        id: arrival.deposit.deposit_id,
      });
      expect(hits).to.deep.equal([{ context: 'deposit', field: 'payer.phone' }]);
      const [suspense] = await rows<{ n: number }>(
        `SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
          WHERE t.deposit_id = :id AND e.account = 'suspense:compliance' AND e.direction = 'credit'`,
        { id: arrival.deposit.deposit_id },
      );
      expect(suspense.n).to.equal(1);
    });
  });

  describe('when the payer comes near a listed name (a screening review)', () => {
    let compliance: TestUser;

    before(async () => {
      compliance = await newUser({ roles: ['compliance'], funded: false });
    });

    /** A bank credit to `user` from a payer named `payerName`, through the crediting path every rail takes. */
    async function arrival(user: TestUser, payerName: string, amount: bigint): Promise<{ deposit_id: string; status: string }> {
      const { deposit } = await creditIncoming({
        channel: 'bank_transfer',
        rail: realRails ? 'jenga' : 'sandbox',
        providerReference: `RVW${randomUUID().replace(/-/g, '').slice(0, 16)}`,
        currency: 'KES',
        amountMinor: amount * 100n,
        quotedReference: (await walletsOf(user)).deposit_reference,
        payer: { name: payerName },
      });
      return deposit;
    }

    /** A listed "Baraka Otieno <family>", and a deposit from "Baraka <family>": a dropped name, for review. */
    async function heldForReview(amount: bigint): Promise<{ user: TestUser; depositId: string; reviewId: string }> {
      const family = `Dp${randomUUID()
        .replace(/[^a-f]/g, '')
        .slice(0, 6)}`;
      await blocklist(admin, { type: 'name', value: `Baraka Otieno ${family}`, reason: 'deposit review test' });
      const user = await newUser({ funded: false });
      const deposit = await arrival(user, `Baraka ${family}`, amount);
      expect(deposit.status).to.equal('held');
      const [review] = await rows<{ id: string; review_reason: string }>(
        `SELECT id, review_reason FROM screening_hits WHERE deposit_id = :id AND status = 'needs_review'`,
        { id: deposit.deposit_id },
      );
      expect(review?.review_reason).to.equal('dropped_name');
      return { user, depositId: deposit.deposit_id, reviewId: review.id };
    }

    const decide = (reviewId: string, decision: 'confirm' | 'clear') =>
      api().post(`/api/v1/compliance/reviews/${reviewId}/decision`).set(compliance.auth).send({ decision, note: 'deposit review test' });

    const statusOf = async (depositId: string) =>
      (
        await rows<{ status: string; failure_code: string | null }>(`SELECT status, failure_code FROM deposits WHERE id = :id`, {
          id: depositId,
        })
      )[0];

    it('then the money waits until staff clear it, and the clear credits the wallet once', async () => {
      const { user, depositId, reviewId } = await heldForReview(700n);
      expect(available(await walletsOf(user), 'KES')).to.equal('0.00');

      const cleared = await decide(reviewId, 'clear');
      expect(cleared.status, JSON.stringify(cleared.body)).to.equal(200);
      expect(await statusOf(depositId)).to.deep.equal({ status: 'completed', failure_code: null });
      expect(available(await walletsOf(user), 'KES')).to.equal('700.00');
      const [line] = (await statementOf(user, 'KES')).data;
      expect(line).to.include({ kind: 'deposit_released', amount: '700.00', balance_after: '700.00', deposit_id: depositId });

      expect((await decide(reviewId, 'clear')).status).to.equal(409);
      expect(available(await walletsOf(user), 'KES')).to.equal('700.00');
    });

    it('then a confirmed review leaves the money in compliance suspense', async () => {
      const { user, depositId, reviewId } = await heldForReview(400n);
      const confirmed = await decide(reviewId, 'confirm');
      expect(confirmed.status, JSON.stringify(confirmed.body)).to.equal(200);
      expect(await statusOf(depositId)).to.deep.equal({ status: 'held', failure_code: null });
      expect(available(await walletsOf(user), 'KES')).to.equal('0.00');
    });

    it('then a cleared deposit the wallet cannot take under its cap stays held, with the cap as the reason', async () => {
      // Past the unverified tier's cap as the tests configure it (KES 100,000,000,000).
      const { user, depositId, reviewId } = await heldForReview(100_000_000_001n);
      const cleared = await decide(reviewId, 'clear');
      expect(cleared.status, JSON.stringify(cleared.body)).to.equal(200);
      expect((cleared.body as { status: string }).status).to.equal('cleared');
      expect(await statusOf(depositId)).to.deep.equal({ status: 'held', failure_code: 'kyc_required' });
      expect(available(await walletsOf(user), 'KES')).to.equal('0.00');
    });
  });

  onSandboxRails('when crypto and bank money arrive through the other simulators', () => {
    it('then each credits its own currency wallet, with the provider id it made up', async () => {
      const user = await newUser({ funded: false });
      const crypto = await api()
        .post('/api/v1/sandbox/crypto-deposits')
        .set(admin.auth)
        .send({ user_id: user.id, currency: 'USDT', amount: '25.500000' });
      expect(crypto.status, JSON.stringify(crypto.body)).to.equal(202);
      expect((crypto.body as Arrival).provider_reference).to.match(/^0x[0-9a-f]{64}$/);
      const bank = await api()
        .post('/api/v1/sandbox/bank-credits')
        .set(admin.auth)
        .send({ deposit_reference: (await walletsOf(user)).deposit_reference, amount: '10000.00', payer_name: 'Wanjiku Kamau' });
      expect(bank.status, JSON.stringify(bank.body)).to.equal(202);
      expect((bank.body as Arrival).deposit).to.include({ channel: 'bank_transfer', status: 'completed' });
      const wallets = await walletsOf(user);
      expect(available(wallets, 'USDT')).to.equal('25.500000');
      expect(available(wallets, 'KES')).to.equal('10000.00');
    });

    it('then a user who is not an admin cannot make money arrive', async () => {
      const user = await newUser({ funded: false });
      const compliance = await newUser({ roles: ['compliance'], funded: false });
      for (const caller of [user, compliance]) {
        const res = await api()
          .post('/api/v1/sandbox/c2b')
          .set(caller.auth)
          .send({ deposit_reference: 'PG0000000000', amount: '1.00', phone: '+254712345678' });
        expect(res.status).to.equal(403);
      }
      expect((await api().post('/api/v1/sandbox/c2b').send({})).status).to.equal(401);
    });
  });

  if (realRails) {
    describe('when every method is on a real rail', () => {
      it('then no money-in simulator is served, even to an admin', async () => {
        for (const path of ['/sandbox/c2b', '/sandbox/bank-credits', '/sandbox/crypto-deposits']) {
          const res = await api().post(`/api/v1${path}`).set(admin.auth).send({});
          expect(res.status, path).to.equal(404);
        }
      });
    });
  }

  describe('when someone reads wallets that are not theirs', () => {
    it('then another user gets 404, and staff read them with user_id', async () => {
      const [owner, other] = [await newUser({ funded: false }), await newUser({ funded: false })];
      const staff = await newUser({ roles: ['compliance'], funded: false });
      await c2b(admin, { deposit_reference: (await walletsOf(owner)).deposit_reference, amount: '42.00', phone: uniqueKenyanPhone() });
      expect((await api().get(`/api/v1/wallets?user_id=${owner.id}`).set(other.auth)).status).to.equal(404);
      expect((await api().get(`/api/v1/wallets/KES/transactions?user_id=${owner.id}`).set(other.auth)).status).to.equal(404);
      expect(available(await walletsOf(staff, owner.id), 'KES')).to.equal('42.00');
      const deposit = (await statementOf(owner, 'KES')).data[0].deposit_id!;
      expect((await api().get(`/api/v1/wallets/deposits/${deposit}`).set(other.auth)).status).to.equal(404);
      expect((await api().get(`/api/v1/wallets/deposits/${deposit}`).set(staff.auth)).status).to.equal(200);
    });
  });

  describe('when a statement is longer than a page', () => {
    it('then it pages newest first by cursor, and a forged cursor is a 400', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletsOf(user);
      for (const amount of ['1.00', '2.00', '3.00']) await c2b(admin, { deposit_reference: reference, amount, phone: uniqueKenyanPhone() });
      const first = await statementOf(user, 'KES', '?limit=2');
      expect(first.data.map((l) => l.balance_after)).to.deep.equal(['6.00', '3.00']);
      const second = await statementOf(user, 'KES', `?limit=2&cursor=${first.next_cursor}`);
      expect(second.data.map((l) => [l.amount, l.balance_after])).to.deep.equal([['1.00', '1.00']]);
      expect(second.next_cursor).to.equal(null);
      const forged = Buffer.from('v1:0 OR 1=1').toString('base64url');
      expect((await api().get(`/api/v1/wallets/KES/transactions?cursor=${forged}`).set(user.auth)).status).to.equal(400);
      expect((await api().get(`/api/v1/wallets/XYZ/transactions`).set(user.auth)).status).to.equal(400);
    });
  });
});
