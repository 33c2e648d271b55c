import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, initiate, newUser, p2pTrade, postAd, sellAd, waitForOrder, type OrderBody, type TestUser } from './support/api';
import { ledgerKindsOf, rows } from './support/db';
import { SELLER_PHONE } from './support/rails';
import { expectProblem } from './support/problems';

interface Ad {
  ad_id: string;
  side: string;
  asset: string;
  price_type: string;
  price: string;
  price_margin_pct: string | null;
  total_amount: string;
  available_amount: string;
  min_order: string;
  max_order: string;
  payment_methods: string[];
  status: string;
  owner: string;
}

interface HistoryItem {
  type: string;
  id: string;
  ad_id: string;
  event?: string;
  role?: string;
  order_id?: string;
  order_status?: string;
  asset_amount?: string;
  fiat_amount?: string;
  escrow_state?: string;
}

async function createAdOf(owner: TestUser, overrides: Record<string, unknown> = {}): Promise<Ad> {
  const res = await postAd(owner, sellAd(overrides));
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body as Ad;
}

/** Every active ad of the listing for `query`, following the cursor. */
async function listAll(query: Record<string, string>): Promise<Ad[]> {
  const all: Ad[] = [];
  let cursor: string | null = null;
  do {
    const res = await api()
      .get('/api/v1/p2p/ads')
      .query({ ...query, limit: '100', ...(cursor ? { cursor } : {}) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const page = res.body as { data: Ad[]; next_cursor: string | null };
    all.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

const getAd = async (adId: string) => (await api().get(`/api/v1/p2p/ads/${adId}`)).body as Ad;

describe('p2p ads', () => {
  describe('when an unverified user posts an ad', () => {
    it('then it is refused with 422 kyc_required and nothing is listed', async () => {
      const user = await newUser();
      const res = await postAd(user, sellAd());
      expectProblem(res, 422, 'kyc_required');
      const mine = await rows('SELECT id FROM p2p_ads WHERE owner_id = :id', { id: user.id });
      expect(mine).to.deep.equal([]);
    });
  });

  describe('when anonymous posts an ad', () => {
    it('then it is 401', async () => {
      const res = await api().post('/api/v1/p2p/ads').send(sellAd());
      expectProblem(res, 401, 'unauthenticated');
    });
  });

  describe('when an ad has bad limits', () => {
    it('then min_order above max_order is a 400 naming min_order', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      const body = expectProblem(await postAd(user, sellAd({ min_order: '5000.00', max_order: '1000.00' })), 400, 'validation_failed');
      expect(body.errors!.map((e) => e.field)).to.deep.equal(['min_order']);
    });

    it('then max_order above total × price is a 400 naming max_order', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      const body = expectProblem(await postAd(user, sellAd({ total_amount: '10.000000', max_order: '1300.01' })), 400, 'validation_failed');
      expect(body.errors).to.deep.equal([{ field: 'max_order', message: 'must not exceed total_amount × price (1300.00 KES)' }]);
    });

    it('then unknown assets, methods and a missing price are each named', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      const res = await postAd(user, sellAd({ asset: 'DOGE', payment_methods: ['cash'], price: undefined }));
      const body = expectProblem(res, 400, 'validation_failed');
      expect(body.errors!.map((e) => e.field)).to.have.members(['asset', 'payment_methods', 'price']);
    });
  });

  describe('when a blocklisted user posts an ad', () => {
    it('then it is refused with blocked_by_compliance', async () => {
      const staff = await newUser({ roles: ['compliance'] });
      const user = await newUser({ kycStatus: 'verified' });
      const add = await api()
        .post('/api/v1/compliance/blocklist')
        .set(staff.auth)
        .send({ type: 'email', value: user.email, reason: 'test' });
      expect(add.status).to.equal(201);
      expectProblem(await postAd(user, sellAd()), 422, 'blocked_by_compliance');
    });
  });

  describe('when a verified user posts sell and buy ads', () => {
    let owner: TestUser;
    let cheap: Ad;
    let dear: Ad;
    let middle: Ad;
    let floating: Ad;
    let buyLow: Ad;
    let buyHigh: Ad;

    before(async () => {
      owner = await newUser({ kycStatus: 'verified' });
      // Worth at most 100 × 120.00 KES each, so max_order stays within total × price.
      const createAd = (overrides: Record<string, unknown>) => createAdOf(owner, { max_order: '12000.00', ...overrides });
      dear = await createAd({ price: '131.00', payment_methods: ['mpesa', 'airtel_money'] });
      cheap = await createAd({ price: '127.00' });
      middle = await createAd({ price: '129.50', min_order: '5000.00' });
      floating = await createAd({ price_type: 'floating', price: undefined, price_margin_pct: '1.00' });
      buyLow = await createAd({ side: 'buy', price: '120.00' });
      buyHigh = await createAd({ side: 'buy', price: '125.00' });
    });

    it('then the ad is answered with its fields, available = total, and the owner', () => {
      expect(cheap).to.include({
        side: 'sell',
        asset: 'USDT',
        price_type: 'fixed',
        price: '127.00',
        price_margin_pct: null,
        total_amount: '100.000000',
        available_amount: '100.000000',
        min_order: '100.00',
        max_order: '12000.00',
        status: 'active',
        owner: owner.id,
      });
    });

    it('then a floating price is the reference price with the margin', () => {
      // Reference USDT = 129.00 KES; +1.00 % = 130.29.
      expect(floating).to.include({ price_type: 'floating', price: '130.29', price_margin_pct: '1.00' });
    });

    it('then the public list shows sell ads cheapest first and buy ads highest first', async () => {
      const mine = new Set([cheap, dear, middle, floating, buyLow, buyHigh].map((a) => a.ad_id));
      const sells = (await listAll({ side: 'sell', asset: 'USDT' })).filter((a) => mine.has(a.ad_id));
      expect(sells.map((a) => a.price)).to.deep.equal(['127.00', '129.50', '130.29', '131.00']);
      const buys = (await listAll({ side: 'buy', asset: 'USDT' })).filter((a) => mine.has(a.ad_id));
      expect(buys.map((a) => a.price)).to.deep.equal(['125.00', '120.00']);
      const all = (await listAll({ asset: 'USDT' })).filter((a) => mine.has(a.ad_id));
      expect(all.map((a) => a.ad_id)).to.deep.equal([cheap, middle, floating, dear, buyHigh, buyLow].map((a) => a.ad_id));
    });

    it('then filters by payment method and by an amount that fits the limits', async () => {
      const mine = new Set([cheap, dear, middle, floating].map((a) => a.ad_id));
      const airtel = (await listAll({ side: 'sell', payment_method: 'airtel_money' })).filter((a) => mine.has(a.ad_id));
      expect(airtel.map((a) => a.ad_id)).to.deep.equal([dear.ad_id]);
      const small = (await listAll({ side: 'sell', asset: 'USDT', amount: '1000.00' })).filter((a) => mine.has(a.ad_id));
      expect(small.map((a) => a.ad_id)).to.deep.equal([cheap, floating, dear].map((a) => a.ad_id));
      const btc = (await listAll({ asset: 'BTC' })).filter((a) => mine.has(a.ad_id));
      expect(btc).to.deep.equal([]);
    });

    it('then keyset paging walks the same order one ad at a time', async () => {
      const full = await listAll({ side: 'sell', asset: 'USDT' });
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await api()
          .get('/api/v1/p2p/ads')
          .query({ side: 'sell', asset: 'USDT', limit: '1', ...(cursor ? { cursor } : {}) });
        expect(res.status).to.equal(200);
        const page = res.body as { data: Ad[]; next_cursor: string | null };
        walked.push(...page.data.map((a) => a.ad_id));
        cursor = page.next_cursor;
      } while (cursor && walked.length < full.length + 1);
      expect(walked).to.deep.equal(full.map((a) => a.ad_id));
    });

    it('then bad filters are 400s naming the filter', async () => {
      const res = await api().get('/api/v1/p2p/ads').query({ side: 'both' });
      const body = expectProblem(res, 400, 'validation_failed');
      expect(body.errors![0].field).to.equal('side');
      const cursor = await api().get('/api/v1/p2p/ads').query({ cursor: 'nonsense' });
      expect(expectProblem(cursor, 400, 'validation_failed').errors![0].field).to.equal('cursor');
    });

    it('then the same Idempotency-Key and body replay the same ad', async () => {
      const key = randomUUID();
      const first = await postAd(owner, sellAd({ price: '140.00' }), key);
      const second = await postAd(owner, sellAd({ price: '140.00' }), key);
      expect(first.status).to.equal(201);
      expect(second.status).to.equal(201);
      expect(second.headers['idempotent-replayed']).to.equal('true');
      expect(second.body).to.deep.equal(first.body);
      const count = await rows<{ n: string }>(`SELECT count(*)::text AS n FROM p2p_ads WHERE owner_id = :id AND price_minor = 14000`, {
        id: owner.id,
      });
      expect(count[0].n).to.equal('1');
    });
  });
});

describe('p2p trades', () => {
  describe('when a second verified user trades against a sell ad', () => {
    let seller: TestUser;
    let buyer: TestUser;
    let ad: Ad;
    let order: OrderBody;

    before(async () => {
      seller = await newUser({ kycStatus: 'verified', phone: SELLER_PHONE });
      buyer = await newUser({ kycStatus: 'verified' });
      ad = await createAdOf(seller);
      const res = await initiate(buyer, p2pTrade(ad.ad_id, '1300.00'));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      order = await waitForOrder(buyer, (res.body as { order_id: string }).order_id);
    });

    it('then the trade completes', () => {
      expect(order.status).to.equal('completed');
      expect(order.amount).to.equal('1300.00');
      // No rail: both legs settle between wallets in one step.
      expect(order.events.map((e) => e.status)).to.deep.equal(['screening', 'completed']);
    });

    it('then available_amount drops by the traded amount (1300.00 / 130.00 = 10 USDT)', async () => {
      expect((await getAd(ad.ad_id)).available_amount).to.equal('90.000000');
    });

    it('then both legs are in the ledger between wallets: the buyer’s KES to the seller, the escrowed USDT to the buyer', async () => {
      expect(await ledgerKindsOf(order.order_id)).to.have.members(['trade_fiat', 'trade_asset']);
      const entries = await rows<{ kind: string; account: string; currency: string; direction: string; amount: string }>(
        `SELECT t.kind, e.account, e.currency, e.direction, e.amount_minor::text AS amount
           FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE t.order_id = :id
          ORDER BY t.kind DESC, e.direction DESC`,
        { id: order.order_id },
      );
      expect(entries).to.deep.equal([
        { kind: 'trade_fiat', account: `wallet:${buyer.id}:KES`, currency: 'KES', direction: 'debit', amount: '130000' },
        { kind: 'trade_fiat', account: `wallet:${seller.id}:KES`, currency: 'KES', direction: 'credit', amount: '130000' },
        { kind: 'trade_asset', account: `escrow:${ad.ad_id}`, currency: 'USDT', direction: 'debit', amount: '10000000' },
        { kind: 'trade_asset', account: `wallet:${buyer.id}:USDT`, currency: 'USDT', direction: 'credit', amount: '10000000' },
      ]);
    });

    it('then both users’ P2P history shows the trade, and the seller’s shows the ad being created', async () => {
      const taker = await api().get('/api/v1/p2p/history').set(buyer.auth);
      expect(taker.status).to.equal(200);
      const takerItems = (taker.body as { data: HistoryItem[] }).data;
      expect(takerItems).to.have.length(1);
      expect(takerItems[0]).to.include({
        type: 'trade',
        order_id: order.order_id,
        role: 'taker',
        order_status: 'completed',
        asset_amount: '10.000000',
        fiat_amount: '1300.00',
        escrow_state: 'released',
      });
      const maker = await api().get('/api/v1/p2p/history').set(seller.auth);
      const makerItems = (maker.body as { data: HistoryItem[] }).data;
      expect(makerItems.map((i) => [i.type, i.role ?? i.event])).to.deep.equal([
        ['trade', 'maker'],
        ['ad_event', 'created'],
      ]);
    });

    it('then history pages with a cursor and refuses anonymous callers', async () => {
      const first = await api().get('/api/v1/p2p/history').query({ limit: 1 }).set(seller.auth);
      const page = first.body as { data: HistoryItem[]; next_cursor: string };
      expect(page.data[0].type).to.equal('trade');
      const second = await api().get('/api/v1/p2p/history').query({ limit: 1, cursor: page.next_cursor }).set(seller.auth);
      expect((second.body as { data: HistoryItem[]; next_cursor: string | null }).data[0].event).to.equal('created');
      expect((second.body as { next_cursor: string | null }).next_cursor).to.equal(null);
      expectProblem(await api().get('/api/v1/p2p/history'), 401, 'unauthenticated');
    });
  });

  describe('when a trade does not fit the ad', () => {
    it('then an unknown ad, an unaccepted payment method, an amount outside the limits and one’s own ad are 400s', async () => {
      const seller = await newUser({ kycStatus: 'verified' });
      const buyer = await newUser({ kycStatus: 'verified' });
      const ad = await createAdOf(seller);
      const field = async (user: TestUser, body: Record<string, unknown>) =>
        expectProblem(await initiate(user, body), 400, 'validation_failed').errors![0].field;
      expect(await field(buyer, p2pTrade(randomUUID(), '1300.00'))).to.equal('destination.ad_id');
      expect(await field(buyer, p2pTrade(ad.ad_id, '1300.00', 'bank_transfer'))).to.equal('destination.payment_method');
      expect(await field(buyer, p2pTrade(ad.ad_id, '50.00'))).to.equal('amount');
      expect(await field(seller, p2pTrade(ad.ad_id, '1300.00'))).to.equal('destination.ad_id');
    });
  });
});
