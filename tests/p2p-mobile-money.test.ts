import { expect } from 'chai';
import { initiate, newUser, p2pTrade, postAd, sellAd, waitForOrder, type TestUser } from './support/api';
import { ledgerKindsOf } from './support/db';
import { mobileMoneyTransfersOf, SELLER_PHONE } from './support/rails';

async function adOf(seller: TestUser, paymentMethods: string[]): Promise<string> {
  const res = await postAd(seller, sellAd({ payment_methods: paymentMethods }));
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return (res.body as { ad_id: string }).ad_id;
}

describe('p2p trades paid by mobile money', () => {
  describe('when the seller, who accepts M-Pesa, has no phone number', () => {
    it('then the trade still settles between wallets: no mobile-money transfer is made and none is needed', async () => {
      const seller = await newUser({ kycStatus: 'verified' });
      const buyer = await newUser({ kycStatus: 'verified' });
      const adId = await adOf(seller, ['mpesa', 'bank_transfer']);
      const res = await initiate(buyer, p2pTrade(adId, '1300.00', 'mpesa'));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const order = await waitForOrder(buyer, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
      expect(await ledgerKindsOf(order.order_id)).to.have.members(['trade_fiat', 'trade_asset']);
      expect(await mobileMoneyTransfersOf(order.order_id)).to.deep.equal([]);
    });
  });

  describe('when the buyer chooses a payment method the ad does not accept', () => {
    it('then the trade does not open (400 naming the payment method)', async () => {
      const seller = await newUser({ kycStatus: 'verified', phone: SELLER_PHONE });
      const buyer = await newUser({ kycStatus: 'verified' });
      const adId = await adOf(seller, ['mpesa']);
      const res = await initiate(buyer, p2pTrade(adId, '1300.00', 'airtel_money'));
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect((res.body as { errors: { field: string }[] }).errors.map((e) => e.field)).to.deep.equal(['destination.payment_method']);
    });
  });
});
