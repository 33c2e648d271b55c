import { expect } from 'chai';
import { api, initiate, mpesaPayment, newUser, waitForOrder, type TestUser } from './support/api';

interface HistoryPage {
  data: { order_id: string; status: string; method: string; currency: string; amount: string; user_id: string }[];
  next_cursor: string | null;
}

const history = (user: TestUser, query: Record<string, string | number> = {}) =>
  api()
    .get('/api/v1/payments/history')
    .query(query)
    .set(user.auth)
    .then((res) => ({ status: res.status, body: res.body as HistoryPage & { code?: string; errors?: { field: string }[] } }));

async function payMany(user: TestUser, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await initiate(user, mpesaPayment({ amount: `${100 + i}.00` }));
    expect(res.status).to.equal(202);
    ids.push((res.body as { order_id: string }).order_id);
  }
  return ids;
}

describe('GET /payments/history', () => {
  describe('when a user pages through their orders', () => {
    it('then pages are newest first, do not overlap, and end with a null cursor', async () => {
      const user = await newUser();
      const ids = await payMany(user, 5);
      const first = await history(user, { limit: 2 });
      expect(first.status).to.equal(200);
      expect(first.body.data.map((o) => o.order_id)).to.deep.equal([ids[4], ids[3]]);
      expect(first.body.next_cursor).to.be.a('string');
      const second = await history(user, { limit: 2, cursor: first.body.next_cursor! });
      expect(second.body.data.map((o) => o.order_id)).to.deep.equal([ids[2], ids[1]]);
      const third = await history(user, { limit: 2, cursor: second.body.next_cursor! });
      expect(third.body.data.map((o) => o.order_id)).to.deep.equal([ids[0]]);
      expect(third.body.next_cursor).to.equal(null);
    });

    it('then orders created between pages do not shift the pages already being read', async () => {
      const user = await newUser();
      const ids = await payMany(user, 3);
      const first = await history(user, { limit: 2 });
      await payMany(user, 2);
      const second = await history(user, { limit: 2, cursor: first.body.next_cursor! });
      expect(second.body.data.map((o) => o.order_id)).to.deep.equal([ids[0]]);
    });
  });

  describe('when filters are given', () => {
    it('then only matching orders are listed', async () => {
      const user = await newUser();
      const [good] = await payMany(user, 1);
      const failing = await initiate(user, mpesaPayment({ amount: '300.13' }));
      const failedId = (failing.body as { order_id: string }).order_id;
      await waitForOrder(user, good);
      await waitForOrder(user, failedId);
      const failed = await history(user, { status: 'failed' });
      expect(failed.body.data.map((o) => o.order_id)).to.deep.equal([failedId]);
      const mobile = await history(user, { method: 'mobile_money', currency: 'KES' });
      expect(mobile.body.data).to.have.length(2);
      expect((await history(user, { method: 'crypto' })).body.data).to.have.length(0);
      expect((await history(user, { from: '2999-01-01T00:00:00Z' })).body.data).to.have.length(0);
      expect((await history(user, { to: '2999-01-01T00:00:00Z' })).body.data).to.have.length(2);
    });

    it('then a bad filter is a 400 problem naming it', async () => {
      const user = await newUser();
      for (const [field, value] of [
        ['status', 'lost'],
        ['method', 'cash'],
        ['currency', 'ABC'],
        ['from', 'yesterday'],
        ['limit', 0],
        ['limit', 101],
        ['cursor', 'garbage'],
      ] as const) {
        const res = await history(user, { [field]: value });
        expect(res.status, `${field}=${value}`).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.errors!.map((e) => e.field)).to.include(field);
      }
    });
  });

  describe('when users read history', () => {
    it('then a user sees only their own orders and compliance may filter by user', async () => {
      const [alice, bob] = [await newUser(), await newUser()];
      const staff = await newUser({ roles: ['user', 'compliance'] });
      const [aliceOrder] = await payMany(alice, 1);
      await payMany(bob, 1);
      const forAlice = await history(alice);
      expect(forAlice.body.data.map((o) => o.order_id)).to.deep.equal([aliceOrder]);
      const ignoredFilter = await history(alice, { user_id: bob.id });
      expect(ignoredFilter.body.data.every((o) => o.user_id === alice.id)).to.equal(true);
      const forStaff = await history(staff, { user_id: alice.id });
      expect(forStaff.body.data.map((o) => o.order_id)).to.deep.equal([aliceOrder]);
    });
  });
});
