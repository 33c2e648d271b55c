import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, initiate, mpesaPayment, newUser, waitForOrder, type TestUser } from './support/api';
import { fundWallets } from './support/funding';
import { rows } from './support/db';

/**
 * Every shilling that goes out first came in (docs/payments.md#funding-from-the-wallet): a payment is held from the payer's wallet, the
 * API refuses one the wallet visibly cannot cover, and the database refuses a hold the wallet cannot cover
 * however many payments race for it.
 */

async function kesWallet(user: TestUser): Promise<{ available: string; held: string }> {
  const res = await api().get('/api/v1/wallets').set(user.auth);
  return (res.body as { data: { currency: string; available: string; held: string }[] }).data.find((d) => d.currency === 'KES')!;
}

describe('payouts from wallets', () => {
  describe('when a user with an empty wallet tries to pay out', () => {
    it('then the API answers 422 insufficient_funds and no order is made', async () => {
      const user = await newUser({ funded: false });
      const res = await initiate(user, mpesaPayment({ amount: '1.00' }));
      expect(res.status, res.text).to.equal(422);
      expect((res.body as { code: string }).code).to.equal('insufficient_funds');
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(0);
    });
  });

  describe('when a funded user pays out', () => {
    it('then the amount is held from the wallet, settled to the rail, and the statement shows it', async () => {
      const user = await newUser({ funded: false });
      await fundWallets(user.id, { KES: 200000n });
      const res = await initiate(user, mpesaPayment({ amount: '1500.00' }));
      expect(res.status, res.text).to.equal(202);
      const order = await waitForOrder(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
      expect(await kesWallet(user)).to.include({ available: '500.00', held: '0.00' });
      const statement = await api().get('/api/v1/wallets/KES/transactions').set(user.auth);
      const lines = (statement.body as { data: { kind: string; amount: string; balance_after: string; order_id: string | null }[] }).data;
      expect(lines.map((l) => [l.kind, l.amount, l.balance_after])).to.deep.equal([
        ['hold', '-1500.00', '500.00'],
        ['deposit', '2000.00', '2000.00'],
      ]);
      expect(lines[0].order_id).to.equal(order.order_id);
    });

    it('then a payout the rail fails gives the hold back to the wallet', async () => {
      const user = await newUser({ funded: false });
      await fundWallets(user.id, { KES: 100000n });
      const res = await initiate(user, mpesaPayment({ amount: '700.13' }));
      const order = await waitForOrder(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('failed');
      expect(await kesWallet(user)).to.include({ available: '1000.00', held: '0.00' });
    });
  });

  describe('when 50 payouts race against a wallet that can afford exactly 10', () => {
    it('then 10 complete, 40 fail insufficient_funds (at the API or at the hold), and the wallet ends at 0', async function () {
      this.timeout(90_000);
      const user = await newUser({ funded: false, kycStatus: 'verified' });
      await fundWallets(user.id, { KES: 10n * 10000n });
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          api()
            .post('/api/v1/payments/initiate')
            .set(user.auth)
            .set('Idempotency-Key', randomUUID())
            .send(mpesaPayment({ amount: '100.00' })),
        ),
      );
      const refusedAtApi = answers.filter((a) => a.status === 422 && (a.body as { code: string }).code === 'insufficient_funds').length;
      const accepted = answers.filter((a) => a.status === 202).map((a) => (a.body as { order_id: string }).order_id);
      expect(refusedAtApi + accepted.length, 'every request was answered 202 or 422 insufficient_funds').to.equal(50);
      const orders = await Promise.all(accepted.map((id) => waitForOrder(user, id, 60_000)));
      const completed = orders.filter((o) => o.status === 'completed').length;
      const failedForFunds = orders.filter((o) => o.status === 'failed' && o.failure_code === 'insufficient_funds').length;
      expect(completed).to.equal(10);
      expect(failedForFunds + refusedAtApi).to.equal(40);
      expect(await kesWallet(user)).to.deep.include({ available: '0.00', held: '0.00' });
    });
  });
});
