import { expect } from 'chai';
import { api, initiate, newUser, p2pTrade, postAd, sellAd, waitForOrder, type TestUser } from './support/api';
import { rows } from './support/db';
import { SELLER_PHONE } from './support/rails';

interface Problem {
  code: string;
  detail: string;
  errors: { field: string; message: string }[];
}

async function adOf(seller: TestUser, paymentMethods: string[]): Promise<string> {
  const res = await postAd(seller, sellAd({ payment_methods: paymentMethods }));
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return (res.body as { ad_id: string }).ad_id;
}

describe('p2p trades paid by mobile money', () => {
  describe('when the seller, who is paid by M-Pesa, has no phone number', () => {
    it('then the trade does not open: a validation problem names the payment method, and no order is recorded', async () => {
      const seller = await newUser({ kycStatus: 'verified' });
      const buyer = await newUser({ kycStatus: 'verified' });
      const adId = await adOf(seller, ['mpesa', 'bank_transfer']);
      const res = await initiate(buyer, p2pTrade(adId, '1300.00', 'mpesa'));
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
      const problem = res.body as Problem;
      expect(problem.code).to.equal('validation_failed');
      expect(problem.errors.map((e) => e.field)).to.deep.equal(['destination.payment_method']);
      expect(problem.errors[0].message).to.match(/seller has no Kenyan phone number/);
      const history = await api().get('/api/v1/payments/history').set(buyer.auth);
      expect((history.body as { data: unknown[] }).data).to.deep.equal([]);
      const trades = await rows<{ n: string }>('SELECT count(*)::text AS n FROM p2p_trades WHERE ad_id = :adId', { adId });
      expect(trades[0].n).to.equal('0');
    });

    it('then the same ad can still be taken by bank transfer', async () => {
      const seller = await newUser({ kycStatus: 'verified' });
      const buyer = await newUser({ kycStatus: 'verified' });
      const adId = await adOf(seller, ['mpesa', 'bank_transfer']);
      const res = await initiate(buyer, p2pTrade(adId, '1300.00', 'bank_transfer'));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
    });
  });

  describe('when the seller has a phone number', () => {
    it('then the trade opens and completes', async () => {
      const seller = await newUser({ kycStatus: 'verified', phone: SELLER_PHONE });
      const buyer = await newUser({ kycStatus: 'verified' });
      const adId = await adOf(seller, ['mpesa']);
      const res = await initiate(buyer, p2pTrade(adId, '1300.00', 'mpesa'));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const order = await waitForOrder(buyer, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
    });
  });
});
