import { expect } from 'chai';
import { Worker } from '@temporalio/worker';
import { temporalClient } from '../platform/temporal';
import { tradeWorkflowId } from '../workflows/shared';
import { api, initiate, newUser, p2pTrade, postAd, postAppeal, sellAd, waitForOrder, type OrderBody, type TestUser } from './support/api';
import { ledgerKindsOf, rows } from './support/db';
import { fundWallets } from './support/funding';

/** P2P on wallets (docs/p2p.md#trades): ads funded into escrow when posted, trades settled between wallets, no rail. */

interface Ad {
  ad_id: string;
  side: string;
  price: string;
  min_order: string;
  max_order: string;
  terms: string | null;
  total_amount: string;
  available_amount: string;
  status: string;
}

interface StatementLine {
  kind: string;
  amount: string;
  order_id: string | null;
}

interface Problem {
  code: string;
  errors?: { field: string }[];
}

/** A verified user whose wallets hold exactly `amounts` (minor units). */
async function userWith(amounts: Partial<Record<'KES' | 'USDT', bigint>>): Promise<TestUser> {
  const user = await newUser({ kycStatus: 'verified', funded: false });
  if (Object.keys(amounts).length > 0) await fundWallets(user.id, amounts);
  return user;
}

async function available(user: TestUser, currency: string): Promise<string | undefined> {
  const res = await api().get('/api/v1/wallets').set(user.auth);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.body as { data: { currency: string; available: string }[] }).data.find((w) => w.currency === currency)?.available;
}

async function statement(user: TestUser, currency: string): Promise<StatementLine[]> {
  const res = await api().get(`/api/v1/wallets/${currency}/transactions`).set(user.auth);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.body as { data: StatementLine[] }).data;
}

async function adOf(owner: TestUser, overrides: Record<string, unknown> = {}): Promise<Ad> {
  const res = await postAd(owner, sellAd(overrides));
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body as Ad;
}

const getAd = async (adId: string): Promise<Ad> => (await api().get(`/api/v1/p2p/ads/${adId}`)).body as Ad;

const patchAd = (user: TestUser | undefined, adId: string, body: Record<string, unknown>) => {
  const req = api().patch(`/api/v1/p2p/ads/${adId}`);
  return (user ? req.set(user.auth) : req).send(body);
};

async function trade(taker: TestUser, adId: string, amount: string): Promise<OrderBody> {
  const res = await initiate(taker, p2pTrade(adId, amount));
  expect(res.status, JSON.stringify(res.body)).to.equal(202);
  return waitForOrder(taker, (res.body as { order_id: string }).order_id);
}

const escrowBalance = async (adId: string, currency: string): Promise<string> =>
  (
    await rows<{ b: string }>(`SELECT coalesce(max(balance_minor), 0)::text AS b FROM accounts WHERE account = :a AND currency = :c`, {
      a: `escrow:${adId}`,
      c: currency,
    })
  )[0].b;

const adEvents = async (adId: string): Promise<string[]> =>
  (await rows<{ event: string }>('SELECT event FROM p2p_ad_events WHERE ad_id = :adId ORDER BY id', { adId })).map((r) => r.event);

describe('p2p on wallets', () => {
  describe('when a funded owner posts a sell ad', () => {
    it('then its total_amount moves from the owner’s asset wallet into the ad’s escrow, shown on the statement', async () => {
      const owner = await userWith({ USDT: 150_000000n });
      const ad = await adOf(owner, { total_amount: '100.000000' });
      expect(await available(owner, 'USDT')).to.equal('50.000000');
      expect(await escrowBalance(ad.ad_id, 'USDT')).to.equal('100000000');
      const [line] = await statement(owner, 'USDT');
      expect(line).to.include({ kind: 'ad_fund', amount: '-100.000000', order_id: null, ad_id: ad.ad_id });
      const wallets = (await api().get('/api/v1/wallets').set(owner.auth)).body as { data: { currency: string; held: string }[] };
      expect(wallets.data.find((w) => w.currency === 'USDT')?.held, 'the escrow shows as held').to.equal('100.000000');
    });
  });

  describe('when a funded owner posts a buy ad', () => {
    it('then total_amount × price in KES is held from the owner’s KES wallet in the ad’s escrow', async () => {
      const owner = await userWith({ KES: 20_000_00n });
      const ad = await adOf(owner, { side: 'buy', price: '130.00', total_amount: '100.000000' });
      expect(await available(owner, 'KES')).to.equal('7000.00');
      expect(await escrowBalance(ad.ad_id, 'KES')).to.equal('1300000');
    });
  });

  describe('when an owner cannot fund the ad', () => {
    it('then posting is 422 insufficient_funds, no ad exists and the wallet is unchanged', async () => {
      const owner = await userWith({ USDT: 50_000000n });
      const res = await postAd(owner, sellAd({ total_amount: '100.000000' }));
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
      expect((res.body as Problem).code).to.equal('insufficient_funds');
      expect(await rows('SELECT id FROM p2p_ads WHERE owner_id = :id', { id: owner.id })).to.deep.equal([]);
      expect(await available(owner, 'USDT')).to.equal('50.000000');
      const buy = await postAd(owner, sellAd({ side: 'buy' }));
      expect((buy.body as Problem).code).to.equal('insufficient_funds');
    });
  });

  describe('when a buyer takes a sell ad', () => {
    let seller: TestUser;
    let buyer: TestUser;
    let ad: Ad;
    let order: OrderBody;

    before(async () => {
      seller = await userWith({ USDT: 100_000000n });
      buyer = await userWith({ KES: 5_000_00n });
      ad = await adOf(seller, { price: '130.00', total_amount: '100.000000' });
      order = await trade(buyer, ad.ad_id, '1300.00');
    });

    it('then the trade completes with both legs between wallets, and the ad has 10 USDT less', async () => {
      expect(order.status).to.equal('completed');
      expect(await ledgerKindsOf(order.order_id)).to.have.members(['trade_fiat', 'trade_asset']);
      expect((await getAd(ad.ad_id)).available_amount).to.equal('90.000000');
      expect(await escrowBalance(ad.ad_id, 'USDT')).to.equal('90000000');
    });

    it('then the buyer’s KES went to the seller and the escrowed USDT to the buyer, on both wallets’ statements', async () => {
      expect(await available(buyer, 'KES')).to.equal('3700.00');
      expect(await available(buyer, 'USDT')).to.equal('10.000000');
      expect(await available(seller, 'KES')).to.equal('1300.00');
      expect(await available(seller, 'USDT')).to.equal('0.000000');
      expect((await statement(buyer, 'KES'))[0]).to.include({ kind: 'trade_fiat', amount: '-1300.00', order_id: order.order_id });
      expect((await statement(buyer, 'USDT'))[0]).to.include({ kind: 'trade_asset', amount: '10.000000', order_id: order.order_id });
      expect((await statement(seller, 'KES'))[0]).to.include({ kind: 'trade_fiat', amount: '1300.00', order_id: order.order_id });
    });
  });

  describe('when a trade’s workflow history is replayed', () => {
    it('then it ran as trade-<order_id>, carries only the patch asked before its first step and replays on this code without a nondeterminism error', async function () {
      this.timeout(60_000);
      const seller = await userWith({ USDT: 100_000000n });
      const buyer = await userWith({ KES: 5_000_00n });
      const ad = await adOf(seller);
      const order = await trade(buyer, ad.ad_id, '1300.00');
      const handle = temporalClient().workflow.getHandle(tradeWorkflowId(order.order_id));
      expect(await handle.result()).to.deep.equal({ orderId: order.order_id, status: 'completed' });
      const history = await handle.fetchHistory();
      // The one patch is asked before the first step (`MonitoringPatch` in workflows/admission.ts): a trade begun
      // before it asks monitoring's after screening, and one begun before monitoring replays without the step.
      const patches = (history.events ?? [])
        .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
        .map((e) => Buffer.from(e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data ?? []).toString());
      expect(patches).to.have.length(1);
      expect(patches[0]).to.include('"patches-first"');
      await Worker.runReplayHistory({ workflowsPath: require.resolve('../workflows') }, history, tradeWorkflowId(order.order_id));
    });
  });

  describe('when a seller takes a buy ad', () => {
    it('then the taker’s asset goes to the owner and the escrowed KES to the taker', async () => {
      const owner = await userWith({ KES: 13_000_00n });
      const taker = await userWith({ USDT: 20_000000n });
      const ad = await adOf(owner, { side: 'buy', price: '130.00', total_amount: '100.000000' });
      const order = await trade(taker, ad.ad_id, '1300.00');
      expect(order.status).to.equal('completed');
      expect(await available(taker, 'USDT')).to.equal('10.000000');
      expect(await available(taker, 'KES')).to.equal('1300.00');
      expect(await available(owner, 'USDT')).to.equal('10.000000');
      expect(await escrowBalance(ad.ad_id, 'KES')).to.equal('1170000');
      expect((await getAd(ad.ad_id)).available_amount).to.equal('90.000000');
    });
  });

  describe('when 50 trades race for an ad funded for exactly 10', () => {
    it('then exactly 10 complete, the rest fail, the ad ends filled with nothing left, and no wallet goes negative', async function () {
      this.timeout(180_000);
      const seller = await userWith({ USDT: 10_000000n });
      const buyers = await Promise.all(Array.from({ length: 5 }, () => userWith({ KES: 1_000_00n * 20n })));
      // 10 USDT at 100.00 KES; each trade buys 1 USDT.
      const ad = await adOf(seller, { price: '100.00', total_amount: '10.000000', max_order: '1000.00' });
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) => initiate(buyers[i % buyers.length], p2pTrade(ad.ad_id, '100.00'))),
      );
      const orders: OrderBody[] = [];
      for (const [i, res] of responses.entries()) {
        // Refused up front once the ad visibly has nothing left (409) or is already filled and closed (400).
        expect([202, 400, 409], JSON.stringify(res.body)).to.include(res.status);
        if (res.status === 202) {
          orders.push(await waitForOrder(buyers[i % buyers.length], (res.body as { order_id: string }).order_id, 60_000));
        }
      }
      const completed = orders.filter((o) => o.status === 'completed');
      expect(completed).to.have.length(10);
      for (const o of orders.filter((x) => x.status !== 'completed')) {
        expect(o.status).to.equal('rejected');
        expect(o.failure_code).to.equal('ad_unavailable');
        expect(await ledgerKindsOf(o.order_id)).to.deep.equal([]);
      }
      const after = await getAd(ad.ad_id);
      expect(after).to.include({ available_amount: '0.000000', status: 'closed' });
      expect(await adEvents(ad.ad_id)).to.deep.equal(['created', 'filled']);
      expect(await escrowBalance(ad.ad_id, 'USDT')).to.equal('0');
      expect(await available(seller, 'KES')).to.equal('1000.00');
      let bought = 0n;
      for (const b of buyers) bought += BigInt((await available(b, 'USDT'))?.replace('.', '') ?? '0');
      expect(bought).to.equal(10_000000n);
      const accounts = [
        `escrow:${ad.ad_id}`,
        `wallet:${seller.id}:USDT`,
        `wallet:${seller.id}:KES`,
        ...buyers.map((b) => `wallet:${b.id}:KES`),
      ];
      const negative = await rows('SELECT account FROM accounts WHERE account IN (:accounts) AND balance_minor < 0', { accounts });
      expect(negative).to.deep.equal([]);
    });
  });

  describe('when the taker’s wallet cannot pay', () => {
    it('then a visibly short taker is refused (422 insufficient_funds) and the ad is untouched', async () => {
      const seller = await userWith({ USDT: 100_000000n });
      const taker = await userWith({ KES: 1_000_00n });
      const ad = await adOf(seller);
      const res = await initiate(taker, p2pTrade(ad.ad_id, '1300.00'));
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect((res.body as Problem).code).to.equal('insufficient_funds');
      expect((await getAd(ad.ad_id)).available_amount).to.equal('100.000000');
      expect(await escrowBalance(ad.ad_id, 'USDT')).to.equal('100000000');
    });

    it('then trades racing past the wallet fail with insufficient_funds in the workflow, with the escrow and the ad untouched by them', async function () {
      this.timeout(120_000);
      const seller = await userWith({ USDT: 100_000000n });
      // Enough for exactly one trade of 1300.00 KES.
      const taker = await userWith({ KES: 1_300_00n });
      const ad = await adOf(seller);
      const responses = await Promise.all(Array.from({ length: 8 }, () => initiate(taker, p2pTrade(ad.ad_id, '1300.00'))));
      const orders: OrderBody[] = [];
      for (const res of responses) {
        if (res.status === 422) expect((res.body as Problem).code).to.equal('insufficient_funds');
        else {
          expect(res.status, JSON.stringify(res.body)).to.equal(202);
          orders.push(await waitForOrder(taker, (res.body as { order_id: string }).order_id, 60_000));
        }
      }
      expect(orders.filter((o) => o.status === 'completed')).to.have.length(1);
      const failed = orders.filter((o) => o.status !== 'completed');
      expect(failed.length, 'orders that passed the API check and failed at settlement').to.be.greaterThan(0);
      for (const o of failed) {
        expect(o).to.include({ status: 'failed', failure_code: 'insufficient_funds' });
        expect(await ledgerKindsOf(o.order_id)).to.deep.equal([]);
      }
      expect((await getAd(ad.ad_id)).available_amount).to.equal('90.000000');
      expect(await escrowBalance(ad.ad_id, 'USDT')).to.equal('90000000');
      expect(await available(taker, 'KES')).to.equal('0.00');
      expect(await available(taker, 'USDT')).to.equal('10.000000');
    });
  });

  describe('when the owner changes an ad', () => {
    let owner: TestUser;
    let other: TestUser;
    let ad: Ad;

    before(async () => {
      owner = await userWith({ USDT: 100_000000n });
      other = await userWith({ KES: 10_000_00n });
      ad = await adOf(owner, { price: '130.00', total_amount: '100.000000', max_order: '13000.00' });
    });

    it('then pausing takes it off the list and refuses trades, keeping the escrow; resuming brings it back', async () => {
      const paused = await patchAd(owner, ad.ad_id, { status: 'paused' });
      expect(paused.status, JSON.stringify(paused.body)).to.equal(200);
      expect(paused.body as Ad).to.include({ status: 'paused' });
      const listed = await api().get('/api/v1/p2p/ads').query({ side: 'sell', asset: 'USDT', limit: '100' });
      expect((listed.body as { data: Ad[] }).data.map((a) => a.ad_id)).not.to.include(ad.ad_id);
      expect((await initiate(other, p2pTrade(ad.ad_id, '1300.00'))).status).to.equal(409);
      expect(await escrowBalance(ad.ad_id, 'USDT')).to.equal('100000000');
      const resumed = await patchAd(owner, ad.ad_id, { status: 'active' });
      expect((resumed.body as Ad).status).to.equal('active');
    });

    it('then price, limits and terms change, validated like a new ad', async () => {
      const edited = await patchAd(owner, ad.ad_id, { price: '131.00', min_order: '200.00', max_order: '5000.00', terms: 'fast' });
      expect(edited.status, JSON.stringify(edited.body)).to.equal(200);
      expect(edited.body as Ad).to.include({ price: '131.00', min_order: '200.00', max_order: '5000.00', terms: 'fast' });
      const tooBig = await patchAd(owner, ad.ad_id, { max_order: '13100.01' });
      expect(tooBig.status).to.equal(400);
      expect((tooBig.body as Problem).errors!.map((e) => e.field)).to.deep.equal(['max_order']);
      const crossed = await patchAd(owner, ad.ad_id, { min_order: '6000.00' });
      expect((crossed.body as Problem).errors!.map((e) => e.field)).to.deep.equal(['min_order']);
      expect((await patchAd(owner, ad.ad_id, { status: 'sold' })).status).to.equal(400);
      expect((await patchAd(owner, ad.ad_id, {})).status).to.equal(400);
      expect((await getAd(ad.ad_id)).max_order).to.equal('5000.00');
    });

    it('then nobody else may change it: another user 403, anonymous 401, an unknown ad 404', async () => {
      const res = await patchAd(other, ad.ad_id, { status: 'closed' });
      expect(res.status).to.equal(403);
      expect((res.body as Problem).code).to.equal('forbidden');
      expect((await patchAd(undefined, ad.ad_id, { status: 'closed' })).status).to.equal(401);
      expect((await patchAd(owner, '01930000-0000-7000-8000-000000000000', { status: 'closed' })).status).to.equal(404);
      expect((await getAd(ad.ad_id)).status).to.equal('active');
    });

    it('then closing returns what is left in escrow to the owner, and a closed ad is final', async () => {
      const bought = await trade(other, ad.ad_id, '1310.00');
      expect(bought.status).to.equal('completed');
      const closed = await patchAd(owner, ad.ad_id, { status: 'closed' });
      expect(closed.status, JSON.stringify(closed.body)).to.equal(200);
      expect((closed.body as Ad).status).to.equal('closed');
      expect(await available(owner, 'USDT')).to.equal('90.000000');
      expect(await escrowBalance(ad.ad_id, 'USDT')).to.equal('0');
      expect((await statement(owner, 'USDT'))[0]).to.include({ kind: 'ad_return', amount: '90.000000' });
      const again = await patchAd(owner, ad.ad_id, { status: 'active' });
      expect(again.status).to.equal(409);
      expect((await patchAd(owner, ad.ad_id, { terms: 'reopen?' })).status).to.equal(409);
      expect((await initiate(other, p2pTrade(ad.ad_id, '1310.00'))).status).to.equal(400);
    });

    it('then the owner’s P2P history shows each event of the ad', async () => {
      const res = await api().get('/api/v1/p2p/history').query({ limit: 100 }).set(owner.auth);
      expect(res.status).to.equal(200);
      const events = (res.body as { data: { type: string; ad_id: string; event?: string }[] }).data
        .filter((i) => i.type === 'ad_event' && i.ad_id === ad.ad_id)
        .map((i) => i.event)
        .reverse();
      expect(events).to.deep.equal(['created', 'paused', 'resumed', 'edited', 'closed']);
    });
  });

  describe('when the owner of a buy ad changes its price', () => {
    it('then it is 409: the escrow was funded at the old price', async () => {
      const owner = await userWith({ KES: 13_000_00n });
      const ad = await adOf(owner, { side: 'buy', price: '130.00' });
      const res = await patchAd(owner, ad.ad_id, { price: '140.00' });
      expect(res.status).to.equal(409);
      expect((await getAd(ad.ad_id)).price).to.equal('130.00');
    });
  });

  describe('when a buy ad fills', () => {
    it('then the ad closes, marked filled, with its escrow empty and the KES paid to the taker', async () => {
      const owner = await userWith({ KES: 1_000_00n });
      const taker = await userWith({ USDT: 10_000000n });
      // 3 USDT at 333.33 KES = 999.99 KES held; trades of 333.33 KES each buy exactly 1 USDT.
      const ad = await adOf(owner, { side: 'buy', price: '333.33', total_amount: '3.000000', min_order: '100.00', max_order: '999.99' });
      expect(await available(owner, 'KES')).to.equal('0.01');
      const order = await trade(taker, ad.ad_id, '999.99');
      expect(order.status).to.equal('completed');
      expect(await getAd(ad.ad_id)).to.include({ available_amount: '0.000000', status: 'closed' });
      expect(await escrowBalance(ad.ad_id, 'KES')).to.equal('0');
      expect(await available(taker, 'KES')).to.equal('999.99');
      expect(await available(owner, 'USDT')).to.equal('3.000000');
      expect(await adEvents(ad.ad_id)).to.deep.equal(['created', 'filled']);
    });
  });

  describe('when an appeal on a trade is approved with a refund', () => {
    it('then both legs move back between the two wallets, once', async () => {
      const compliance = await newUser({ roles: ['compliance'] });
      const seller = await userWith({ USDT: 100_000000n });
      const buyer = await userWith({ KES: 5_000_00n });
      const ad = await adOf(seller);
      const order = await trade(buyer, ad.ad_id, '1300.00');
      expect(order.status).to.equal('completed');
      const appeal = await postAppeal(buyer, { order_id: order.order_id, reason: 'other', description: 'the seller agreed to undo it' });
      expect(appeal.status, JSON.stringify(appeal.body)).to.equal(201);
      const appealId = (appeal.body as { appeal_id: string }).appeal_id;
      const approved = await api().put(`/api/v1/appeals/${appealId}/approve`).set(compliance.auth).send({ note: 'undo', action: 'refund' });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      expect(await available(buyer, 'KES')).to.equal('5000.00');
      expect(await available(buyer, 'USDT')).to.equal('0.000000');
      expect(await available(seller, 'KES')).to.equal('0.00');
      expect(await available(seller, 'USDT')).to.equal('10.000000');
      expect(await ledgerKindsOf(order.order_id)).to.have.members([
        'trade_fiat',
        'trade_asset',
        'trade_fiat_reverse',
        'trade_asset_reverse',
      ]);
      expect((await statement(buyer, 'KES'))[0]).to.include({ kind: 'trade_fiat_reverse', amount: '1300.00' });
      const again = await api()
        .put(`/api/v1/appeals/${appealId}/approve`)
        .set(compliance.auth)
        .send({ note: 'undo twice', action: 'refund' });
      expect([200, 409]).to.include(again.status);
      expect(await available(buyer, 'KES')).to.equal('5000.00');
      expect((await api().get(`/api/v1/payments/orders/${order.order_id}`).set(buyer.auth)).body).to.include({ status: 'reversed' });
    });
  });

  describe('when an approved refund would overdraw the party who received a leg', () => {
    it('then the decision is refused (409), the appeal stays open and no wallet moves', async () => {
      const compliance = await newUser({ roles: ['compliance'] });
      const seller = await userWith({ USDT: 100_000000n });
      const buyer = await userWith({ KES: 5_000_00n });
      const ad = await adOf(seller);
      const order = await trade(buyer, ad.ad_id, '1300.00');
      // The seller puts the 1300.00 KES received straight into a buy ad's escrow.
      await adOf(seller, { side: 'buy', price: '130.00', total_amount: '10.000000', max_order: '1300.00' });
      expect(await available(seller, 'KES')).to.equal('0.00');
      const appeal = await postAppeal(buyer, { order_id: order.order_id, reason: 'other', description: 'undo it' });
      const appealId = (appeal.body as { appeal_id: string }).appeal_id;
      const res = await api().put(`/api/v1/appeals/${appealId}/approve`).set(compliance.auth).send({ note: 'undo', action: 'refund' });
      expect(res.status, JSON.stringify(res.body)).to.equal(409);
      expect((await api().get(`/api/v1/appeals/${appealId}`).set(buyer.auth)).body).to.include({ status: 'open' });
      expect(await ledgerKindsOf(order.order_id)).to.have.members(['trade_fiat', 'trade_asset']);
      expect(await available(buyer, 'KES')).to.equal('3700.00');
      expect(await available(buyer, 'USDT')).to.equal('10.000000');
    });
  });
});
