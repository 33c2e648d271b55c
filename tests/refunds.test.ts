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
});
