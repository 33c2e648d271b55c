import { expect } from 'chai';
import { api, initiate, mpesaPayment, newUser, waitForOrder, type OrderBody } from './support/api';
import { insufficientFunds, mobileMoneyReference, mobileMoneyTransfersOf } from './support/rails';

describe('payments', () => {
  describe('when a user initiates a mobile-money payment', () => {
    it('then it is accepted as pending and settles to completed through the workflow', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment());
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const accepted = res.body as { order_id: string; status: string; links: { self: string } };
      expect(accepted.status).to.equal('pending');
      expect(accepted.links.self).to.equal(`/api/v1/payments/orders/${accepted.order_id}`);
      expect(res.headers.location).to.equal(accepted.links.self);

      const order = await waitForOrder(user, accepted.order_id);
      expect(order.status).to.equal('completed');
      expect(order.workflow_id).to.equal(`payment-${accepted.order_id}`);
      expect(order.rail_reference).to.match(mobileMoneyReference);
      expect(await mobileMoneyTransfersOf(accepted.order_id)).to.deep.equal([order.rail_reference]);
      expect(order.amount).to.equal('1500.00');
      expect(order.events.map((e) => e.status)).to.deep.equal(['screening', 'processing', 'completed']);
    });
  });

  describe('when the sandbox magic values are used', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [
        'a bank account ending 0000',
        { method: 'bank_transfer', destination: { bank_code: '01', account_number: '1234560000', account_name: 'Jane Doe' } },
        'account_not_found',
      ],
      [
        insufficientFunds.what,
        { amount: `250.${insufficientFunds.cents}`, destination: { provider: 'mpesa', phone: insufficientFunds.phone } },
        'insufficient_funds',
      ],
      ['a phone answering M-Pesa 1032', { destination: { provider: 'mpesa', phone: '+254700001032' } }, 'cancelled_by_user'],
      ['a phone answering M-Pesa 2001', { destination: { provider: 'mpesa', phone: '+254700002001' } }, 'invalid_pin'],
      [
        'an exchange in maintenance',
        {
          method: 'crypto',
          currency: 'USDT',
          amount: '10.000000',
          destination: { exchange_id: 'sandbox_maintenance', account_ref: 'acc-1' },
        },
        'exchange_unavailable',
      ],
    ];
    for (const [what, overrides, failureCode] of cases) {
      it(`then ${what} ends failed with ${failureCode}`, async () => {
        const user = await newUser();
        const res = await initiate(user, mpesaPayment(overrides));
        expect(res.status, JSON.stringify(res.body)).to.equal(202);
        const order = await waitForOrder(user, (res.body as { order_id: string }).order_id);
        expect(order.status).to.equal('failed');
        expect(order.failure_code).to.equal(failureCode);
        expect(order.failure_reason).to.be.a('string').and.not.empty;
      });
    }

    it('then a phone that never calls back is settled by polling', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment({ destination: { provider: 'mpesa', phone: '+254700000999' } }));
      const order = await waitForOrder(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
    });
  });

  describe('when the request is invalid', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['a negative amount', { amount: '-5.00' }, 'amount'],
      ['too many decimals', { amount: '10.001' }, 'amount'],
      ['a numeric amount', { amount: 10 }, 'amount'],
      ['an unknown currency', { currency: 'XYZ' }, 'currency'],
      ['an unknown method', { method: 'carrier_pigeon' }, 'method'],
      ['a bad phone', { destination: { provider: 'mpesa', phone: '12345' } }, 'destination.phone'],
      ['a missing destination field', { method: 'bank_transfer', destination: { bank_code: '01' } }, 'destination.account_number'],
    ];
    for (const [what, overrides, field] of cases) {
      it(`then ${what} is a 400 problem naming ${field}`, async () => {
        const user = await newUser();
        const res = await initiate(user, mpesaPayment(overrides));
        expect(res.status).to.equal(400);
        expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
        const problem = res.body as { code: string; errors: { field: string }[] };
        expect(problem.code).to.equal('validation_failed');
        expect(problem.errors.map((e) => e.field)).to.include(field);
      });
    }
  });

  describe('when an unverified user goes over the tier limit', () => {
    it('then the payment is refused with 422 kyc_required', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment({ amount: '10000.01' }));
      expect(res.status).to.equal(422);
      expect((res.body as { code: string }).code).to.equal('kyc_required');
    });

    it('then a verified user may pay the same amount', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      const res = await initiate(user, mpesaPayment({ amount: '10000.01' }));
      expect(res.status).to.equal(202);
    });
  });

  describe('when another user reads an order', () => {
    it('then it is 404, while compliance staff can read it', async () => {
      const owner = await newUser();
      const other = await newUser();
      const staff = await newUser({ roles: ['user', 'compliance'] });
      const res = await initiate(owner, mpesaPayment());
      const id = (res.body as { order_id: string }).order_id;
      const forOther = await api().get(`/api/v1/payments/orders/${id}`).set(other.auth);
      expect(forOther.status).to.equal(404);
      expect((forOther.body as { code: string }).code).to.equal('not_found');
      const forStaff = await api().get(`/api/v1/payments/orders/${id}`).set(staff.auth);
      expect(forStaff.status).to.equal(200);
      expect((forStaff.body as OrderBody).order_id).to.equal(id);
    });

    it('then a malformed id is 400 and an unknown one 404', async () => {
      const user = await newUser();
      expect((await api().get('/api/v1/payments/orders/not-a-uuid').set(user.auth)).status).to.equal(400);
      expect((await api().get('/api/v1/payments/orders/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b').set(user.auth)).status).to.equal(404);
    });
  });
});
