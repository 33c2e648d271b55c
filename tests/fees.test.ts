import { expect } from 'chai';
import { api, initiate, kesAvailable, mpesaPayment, newUser, postAppeal, waitForOrder, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { rows } from './support/db';
import { fundWallets } from './support/funding';
import { insufficientFunds } from './support/rails';

/**
 * Fees (docs/wallets.md#fees): per method, a flat part in KES plus a percentage, from the configuration. The hold takes
 * amount + fee, settlement pays the fee to `revenue:fees`, a failure gives both back, and so does a full refund.
 */

interface StatementLine {
  kind: string;
  amount: string;
  balance_after: string;
}

interface FeeOrder {
  order_id: string;
  status: string;
  amount: string;
  fee: string;
  total_debited: string;
  failure_code: string | null;
}

const statement = async (user: TestUser) =>
  ((await api().get('/api/v1/wallets/KES/transactions').set(user.auth)).body as { data: StatementLine[] }).data;

/** What `revenue:fees` earned (or gave back) through one order's postings, in minor units. */
async function feeRevenueOf(orderId: string): Promise<string> {
  const [row] = await rows<{ net: string }>(
    `SELECT coalesce(sum(CASE WHEN e.direction = 'credit' THEN e.amount_minor ELSE -e.amount_minor END), 0)::text AS net
       FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE t.order_id = :orderId AND e.account = 'revenue:fees'`,
    { orderId },
  );
  return row.net;
}

async function payerWith(kes: bigint): Promise<TestUser> {
  const payer = await newUser({ funded: false });
  await fundWallets(payer.id, { KES: kes });
  return payer;
}

async function payOut(payer: TestUser, overrides: Record<string, unknown> = {}): Promise<FeeOrder> {
  const res = await initiate(payer, mpesaPayment(overrides));
  expect(res.status, JSON.stringify(res.body)).to.equal(202);
  await waitForOrder(payer, (res.body as { order_id: string }).order_id);
  return (
    await api()
      .get(`/api/v1/payments/orders/${(res.body as { order_id: string }).order_id}`)
      .set(payer.auth)
  ).body as FeeOrder;
}

describe('fees on payouts', () => {
  describe('when no fee is configured', () => {
    it('then the order shows a zero fee and the wallet gives exactly the amount', async () => {
      const payer = await payerWith(200000n);
      const order = await payOut(payer);
      expect(order).to.include({ status: 'completed', amount: '1500.00', fee: '0.00', total_debited: '1500.00' });
      expect(await kesAvailable(payer)).to.equal('500.00');
      expect(await feeRevenueOf(order.order_id)).to.equal('0');
    });
  });

  describe('when M-Pesa payouts cost KES 30 plus 1 %', () => {
    let restore: () => void;
    beforeEach(() => {
      restore = withEnv({ FEE_MOBILE_MONEY_FLAT_KES: '30', FEE_MOBILE_MONEY_PERCENT: '1' });
    });
    afterEach(() => restore());

    it('then a KES 1,500 payout holds 1,545, pays 1,500 to the rail and 45 to fee revenue', async () => {
      const payer = await payerWith(200000n);
      const order = await payOut(payer);
      expect(order).to.include({ status: 'completed', amount: '1500.00', fee: '45.00', total_debited: '1545.00' });
      expect(await kesAvailable(payer)).to.equal('455.00');
      const [hold] = await statement(payer);
      expect(hold).to.include({ amount: '-1545.00', balance_after: '455.00' });
      expect(await feeRevenueOf(order.order_id)).to.equal('4500');
      const [rail] = await rows<{ paid: string }>(
        `SELECT e.amount_minor::text AS paid FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
          WHERE t.order_id = :id AND t.kind = 'settle' AND e.account = 'rail:mobile_money'`,
        { id: order.order_id },
      );
      expect(rail.paid).to.equal('150000');
    });

    it('then a wallet that covers the amount but not the fee is refused with 422 insufficient_funds, and nothing is held', async () => {
      const payer = await payerWith(152000n); // 1,520: the amount, but not the 45 on top
      const res = await initiate(payer, mpesaPayment());
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect(res.body).to.include({ code: 'insufficient_funds' });
      expect((res.body as { detail: string }).detail).to.include('1545.00');
      expect(await kesAvailable(payer)).to.equal('1520.00');
    });

    it('then a percentage rounds up to the cent: 1 % of KES 1,500.50 is 15.01', async () => {
      const payer = await payerWith(200000n);
      const res = await initiate(payer, mpesaPayment({ amount: '1500.50' }));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const order = (
        await api()
          .get(`/api/v1/payments/orders/${(res.body as { order_id: string }).order_id}`)
          .set(payer.auth)
      ).body as FeeOrder;
      expect(order).to.include({ fee: '45.01', total_debited: '1545.51' });
      await waitForOrder(payer, order.order_id);
    });

    it('then a payout the rail refuses gives back the amount and the fee, and earns nothing', async () => {
      const payer = await payerWith(200000n);
      const order = await payOut(payer, {
        amount: `1500.${insufficientFunds.cents}`,
        destination: { provider: 'mpesa', phone: insufficientFunds.phone },
      });
      expect(order.status).to.equal('failed');
      expect(await kesAvailable(payer)).to.equal('2000.00');
      expect(await feeRevenueOf(order.order_id)).to.equal('0');
    });

    it('then a partial refund gives back only its amount, and the refund that completes the payment gives back the fee', async () => {
      const payer = await payerWith(200000n);
      const order = await payOut(payer);
      const staff = await newUser({ roles: ['compliance'], funded: false });
      const refund = async (body: Record<string, unknown>) => {
        const appeal = await postAppeal(payer, {
          order_id: order.order_id,
          reason: 'wrong_amount',
          description: 'Charged twice.',
          evidence: [],
        });
        expect(appeal.status, JSON.stringify(appeal.body)).to.equal(201);
        const res = await api()
          .put(`/api/v1/appeals/${(appeal.body as { appeal_id: string }).appeal_id}/approve`)
          .set(staff.auth)
          .send({ note: 'checked', action: 'refund', ...body });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return (res.body as { resolution: Record<string, string> }).resolution;
      };

      const part = await refund({ amount: '500.00' });
      expect(part).to.not.have.property('fee_refunded_minor');
      expect(await kesAvailable(payer)).to.equal('955.00');
      expect(await feeRevenueOf(order.order_id)).to.equal('4500');

      const rest = await refund({});
      expect(rest).to.include({ order_status: 'reversed', refunded_minor: '100000', fee_refunded_minor: '4500' });
      expect(await kesAvailable(payer)).to.equal('2000.00');
      expect(await feeRevenueOf(order.order_id)).to.equal('0');
      expect((await statement(payer))[0]).to.include({ kind: 'refund', amount: '1045.00', balance_after: '2000.00' });
    });
  });
});
