import { expect } from 'chai';
import { database } from '../platform/database';
import { api, initiate, mpesaPayment, newUser, waitForOrder } from './support/api';

const bankTransfer = (bankCode: string, amount = '1500.00', currency = 'KES') =>
  mpesaPayment({
    method: 'bank_transfer',
    amount,
    currency,
    destination: { bank_code: bankCode, account_number: '1234567890', account_name: 'Jane Doe' },
  });

const cryptoPayment = (exchangeId: string) =>
  mpesaPayment({ method: 'crypto', currency: 'USDT', amount: '10.000000', destination: { exchange_id: exchangeId, account_ref: 'acc-1' } });

function expectFieldProblem(res: { status: number; headers: Record<string, string>; body: unknown }, field: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(400);
  expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
  const problem = res.body as { code: string; errors: { field: string; message: string }[] };
  expect(problem.code).to.equal('validation_failed');
  expect(problem.errors.map((e) => e.field)).to.deep.equal([field]);
}

describe('payments use the platform catalogue', () => {
  describe('when a bank transfer names a bank code the catalogue does not have', () => {
    it('then it is a 400 naming destination.bank_code, and no order is recorded', async () => {
      const user = await newUser();
      const res = await initiate(user, bankTransfer('99'));
      expectFieldProblem(res, 'destination.bank_code');
      const history = await api().get('/api/v1/payments/history').set(user.auth);
      expect((history.body as { data: unknown[] }).data).to.deep.equal([]);
    });
  });

  describe('when a crypto payment names an exchange', () => {
    before(async () => {
      await database().query(
        `INSERT INTO exchanges (id, name, source, active, deactivated_at) VALUES ('gone_exchange', 'Gone', 'ccxt', false, now())
         ON CONFLICT (id) DO UPDATE SET active = false`,
      );
    });
    after(async () => {
      await database().query("DELETE FROM exchanges WHERE id = 'gone_exchange'");
    });

    it('then an unknown exchange_id is a 400 naming destination.exchange_id', async () => {
      const user = await newUser();
      expectFieldProblem(await initiate(user, cryptoPayment('no_such_exchange')), 'destination.exchange_id');
    });

    it('then an inactive exchange is a 400 too', async () => {
      const user = await newUser();
      expectFieldProblem(await initiate(user, cryptoPayment('gone_exchange')), 'destination.exchange_id');
    });

    it('then a discovered exchange is accepted and the payment completes', async () => {
      const user = await newUser();
      const res = await initiate(user, cryptoPayment('binance'));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const order = await waitForOrder(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
      expect((order as unknown as { route: string | null }).route).to.equal(null);
    });

    it('then a payment to a wallet address needs no exchange', async () => {
      const user = await newUser();
      const res = await initiate(
        user,
        mpesaPayment({
          method: 'crypto',
          currency: 'USDT',
          amount: '10.000000',
          destination: { address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', network: 'TRC20' },
        }),
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
    });
  });

  describe('when a bank transfer is accepted', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['to the primary bank (68)', bankTransfer('68'), 'internal'],
      ['to a PesaLink bank (01) within KES 999,999.00', bankTransfer('01', '999999.00'), 'pesalink'],
      ['to a PesaLink bank above KES 999,999.00', bankTransfer('01', '999999.01'), 'rtgs'],
      ['to a bank outside PesaLink (05)', bankTransfer('05'), 'rtgs'],
      ['in USD to a PesaLink bank (PesaLink carries only shillings)', bankTransfer('01', '100.00', 'USD'), 'rtgs'],
      ['in USD to the primary bank', bankTransfer('68', '100.00', 'USD'), 'internal'],
    ];
    for (const [what, body, route] of cases) {
      it(`then ${what} is routed by ${route}, and the order shows it`, async () => {
        const user = await newUser({ kycStatus: 'verified' });
        const res = await initiate(user, body);
        expect(res.status, JSON.stringify(res.body)).to.equal(202);
        const orderId = (res.body as { order_id: string }).order_id;
        const order = await api().get(`/api/v1/payments/orders/${orderId}`).set(user.auth);
        expect(order.status).to.equal(200);
        expect((order.body as { route: string }).route).to.equal(route);
        const history = await api().get('/api/v1/payments/history').set(user.auth);
        expect((history.body as { data: { order_id: string; route: string }[] }).data.map((o) => [o.order_id, o.route])).to.deep.equal([
          [orderId, route],
        ]);
      });
    }

    it('then a mobile-money payment has no route', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment());
      const order = await api()
        .get(`/api/v1/payments/orders/${(res.body as { order_id: string }).order_id}`)
        .set(user.auth);
      expect((order.body as { route: string | null }).route).to.equal(null);
    });
  });
});
