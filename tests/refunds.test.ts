import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { recordRefund } from '../repositories/orders';
import { inTransaction } from '../repositories/transaction';
import { api, completedPayment, kesAvailable, newUser, postAppeal, waitForOrder, type TestUser } from './support/api';
import { rows } from './support/db';

/** Refunds move money (docs/appeals.md#refunds): an approved appeal credits the payer's wallet, in full or in part, never more than was paid. */

interface StatementLine {
  kind: string;
  amount: string;
  balance_after: string;
  order_id: string | null;
}

const statement = async (user: TestUser) =>
  ((await api().get('/api/v1/wallets/KES/transactions').set(user.auth)).body as { data: StatementLine[] }).data;

async function appealOn(owner: TestUser, orderId: string): Promise<string> {
  const res = await postAppeal(owner, { order_id: orderId, reason: 'wrong_amount', description: 'I was charged too much.', evidence: [] });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return (res.body as { appeal_id: string }).appeal_id;
}

const approve = (staff: TestUser, appealId: string, body: Record<string, unknown>) =>
  api()
    .put(`/api/v1/appeals/${appealId}/approve`)
    .set(staff.auth)
    .send({ note: 'checked', ...body });

describe('refunds after approved appeals', () => {
  let staff: TestUser;

  before(async () => {
    staff = await newUser({ roles: ['compliance'], funded: false });
  });

  /** A payer with exactly KES 2,000 who paid out KES 1,500: 500 left in the wallet. */
  async function paidOut(): Promise<{ payer: TestUser; orderId: string }> {
    const payer = await newUser({ funded: false });
    const admin = await newUser({ roles: ['admin'], funded: false });
    const reference = ((await api().get('/api/v1/wallets').set(payer.auth)).body as { deposit_reference: string }).deposit_reference;
    const credited = await api()
      .post('/api/v1/sandbox/bank-credits')
      .set(admin.auth)
      .send({ deposit_reference: reference, amount: '2000.00' });
    if (credited.status === 404) {
      // Under the real rails the simulators are not served: the same crediting path, called directly.
      const { fundWallets } = await import('./support/funding');
      await fundWallets(payer.id, { KES: 200000n });
    } else {
      expect(credited.status, JSON.stringify(credited.body)).to.equal(202);
    }
    const order = await completedPayment(payer, { amount: '1500.00' });
    return { payer, orderId: order.order_id };
  }

  describe('when an appeal is approved with a refund of the whole payment', () => {
    it("then the payer's statement shows the refund, the balance is whole again, and the order is reversed", async () => {
      const { payer, orderId } = await paidOut();
      const res = await approve(staff, await appealOn(payer, orderId), { action: 'refund' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await kesAvailable(payer)).to.equal('2000.00');
      const [refund] = await statement(payer);
      expect(refund).to.include({ kind: 'refund', amount: '1500.00', balance_after: '2000.00', order_id: orderId });
      expect((await waitForOrder(payer, orderId)).status).to.equal('reversed');
    });
  });

  describe('when a payment is refunded in part, and then a second refund asks for more than the rest', () => {
    it('then the first is credited, the second is refused with 409 and moves nothing, and the rest can still be refunded', async () => {
      const { payer, orderId } = await paidOut();
      const first = await approve(staff, await appealOn(payer, orderId), { action: 'refund', amount: '400.00' });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect((first.body as { resolution: Record<string, string> }).resolution).to.include({
        order_status: 'completed',
        refunded_minor: '40000',
        total_refunded_minor: '40000',
      });
      expect(await kesAvailable(payer)).to.equal('900.00');
      expect((await waitForOrder(payer, orderId)).status).to.equal('completed');

      const second = await appealOn(payer, orderId);
      const refused = await approve(staff, second, { action: 'refund', amount: '1100.01' });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(409);
      expect((refused.body as { detail: string }).detail).to.match(/KES 1100\.00 .*left to refund/);
      expect(await kesAvailable(payer)).to.equal('900.00');

      // The appeal stays open; the rest is refunded without an amount, and the order is then reversed.
      const rest = await approve(staff, second, { action: 'refund' });
      expect(rest.status, JSON.stringify(rest.body)).to.equal(200);
      expect(await kesAvailable(payer)).to.equal('2000.00');
      expect((await statement(payer)).slice(0, 2).map((l) => [l.kind, l.amount, l.balance_after])).to.deep.equal([
        ['refund', '1100.00', '2000.00'],
        ['refund', '400.00', '900.00'],
      ]);
      expect((await waitForOrder(payer, orderId)).status).to.equal('reversed');
    });
  });

  describe('when refunds of one payment race', () => {
    it('then the database lets them add up to the amount paid and no more', async () => {
      const { payer, orderId } = await paidOut();
      // One open appeal per order: each racing refund belongs to an appeal decided before.
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const id = await appealOn(payer, orderId);
        const rejected = await api().put(`/api/v1/appeals/${id}/reject`).set(staff.auth).send({ note: 'for the race' });
        expect(rejected.status).to.equal(200);
        ids.push(id);
      }
      const results = await Promise.all(
        ids.map((appealId) =>
          inTransaction((tx) => recordRefund({ id: randomUUID(), orderId, appealId, amountMinor: '40000' }, tx)).catch(() => null),
        ),
      );
      expect(results.filter((r) => r !== null)).to.have.length(3); // 3 × 400 fits in 1,500; a fourth would not
      const [order] = await rows<{ refunded: string }>('SELECT refunded_minor::text AS refunded FROM orders WHERE id = :id', {
        id: orderId,
      });
      expect(order.refunded).to.equal('120000');
    });
  });

  describe('when the amount is malformed or given with another action', () => {
    it('then it is a 400 naming the field', async () => {
      const { payer, orderId } = await paidOut();
      const appealId = await appealOn(payer, orderId);
      for (const body of [
        { action: 'refund', amount: '-5' },
        { action: 'refund', amount: 'ten' },
        { action: 'release', amount: '10.00' },
      ]) {
        const res = await approve(staff, appealId, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(JSON.stringify(res.body)).to.include('amount');
      }
    });
  });

  describe('when a payment is refunded, in part and then in full', () => {
    type RailBalance = { account: string; currency: string; balance: string };
    /** Each rail account's balance, and the last ledger entry so far, read at one instant. */
    const railSnapshot = async () =>
      (
        await rows<{ since: string; balances: RailBalance[] }>(
          `SELECT (SELECT coalesce(max(id), 0) FROM ledger_entries)::text AS since,
                  coalesce(json_agg(json_build_object('account', account, 'currency', currency, 'balance', balance_minor::text)), '[]') AS balances
             FROM accounts WHERE account LIKE 'rail:%'`,
        )
      )[0];

    it('then the operator pays it from expense:refunds and every rail:* balance is left as it was', async () => {
      const { payer, orderId } = await paidOut();
      const { since, balances: before } = await railSnapshot();
      const part = await approve(staff, await appealOn(payer, orderId), { action: 'refund', amount: '500.00' });
      expect(part.status, JSON.stringify(part.body)).to.equal(200);
      const whole = await approve(staff, await appealOn(payer, orderId), { action: 'refund' });
      expect(whole.status, JSON.stringify(whole.body)).to.equal(200);
      expect(await kesAvailable(payer)).to.equal('2000.00');

      const refundLines = await rows<{ account: string; direction: string; amount: string }>(
        `SELECT e.account, e.direction, e.amount_minor::text AS amount FROM ledger_entries e
           JOIN ledger_transactions t ON t.id = e.transaction_id
          WHERE t.order_id = :orderId AND t.kind = 'refund' ORDER BY e.id`,
        { orderId },
      );
      expect(refundLines).to.deep.equal([
        { account: 'expense:refunds', direction: 'debit', amount: '50000' },
        { account: `wallet:${payer.id}:KES`, direction: 'credit', amount: '50000' },
        { account: 'expense:refunds', direction: 'debit', amount: '100000' },
        { account: `wallet:${payer.id}:KES`, direction: 'credit', amount: '100000' },
      ]);
      // Payments of other tests may still settle meanwhile: what they moved on a rail account is set aside.
      const after = await railSnapshot();
      const others = await rows<{ account: string; currency: string; net: string }>(
        `SELECT e.account, e.currency, sum(CASE e.direction WHEN 'credit' THEN e.amount_minor ELSE -e.amount_minor END)::text AS net
           FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
          WHERE e.id > :since AND e.id <= :until AND e.account LIKE 'rail:%' AND NOT (t.order_id = :orderId AND t.kind = 'refund')
          GROUP BY e.account, e.currency`,
        { since, until: after.since, orderId },
      );
      const key = (r: { account: string; currency: string }) => `${r.account} ${r.currency}`;
      const movedByOthers = new Map(others.map((o) => [key(o), BigInt(o.net)]));
      const was = new Map(before.map((b) => [key(b), b.balance]));
      for (const a of after.balances) {
        expect((BigInt(a.balance) - (movedByOthers.get(key(a)) ?? 0n)).toString(), key(a)).to.equal(was.get(key(a)) ?? '0');
      }
    });
  });
});
