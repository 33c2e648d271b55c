import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import { pruneOldEvents } from '../workers/webhook-delivery';
import {
  api,
  completedPayment,
  initiate,
  mpesaPayment,
  newUser,
  p2pTrade,
  postAd,
  sellAd,
  waitForOrder,
  type TestUser,
} from './support/api';
import { rows } from './support/db';
import { until } from './support/processes';
import type { WebhookReceiver } from './fakes/webhook-receiver';
import { receiverWithDelivery } from './support/webhooks';

/**
 * Events (docs/events.md#events): every state change is one event with a stable id, listed by `GET /events` (type and
 * created filters, keyset pages) and delivered by webhooks with the same id; one delivery can be sent again
 * on request; events older than the retention are pruned.
 */

interface Event {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}
interface EventPage {
  data: Event[];
  next_cursor: string | null;
}

/** Every event of the user matching `query`, following the cursor to the end. */
async function allEvents(user: TestUser, query: Record<string, string> = {}): Promise<Event[]> {
  const events: Event[] = [];
  let cursor: string | null = null;
  do {
    const res = await api()
      .get('/api/v1/events')
      .set(user.auth)
      .query({ ...query, limit: '3', ...(cursor ? { cursor } : {}) });
    expect(res.status, res.text).to.equal(200);
    const page = res.body as EventPage;
    events.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return events;
}

describe('events', () => {
  describe('when a user is funded and pays out', () => {
    let user: TestUser;
    let orderId: string;
    before(async () => {
      user = await newUser();
      orderId = (await completedPayment(user)).order_id;
    });

    it("then the order's status changes and the wallet credits are events, newest first, each id once", async () => {
      const events = await allEvents(user);
      const ids = events.map((e) => e.id);
      expect(new Set(ids).size).to.equal(ids.length);
      expect([...ids].sort().reverse()).to.deep.equal(ids);
      const orderStatuses = events
        .filter((e) => e.type === 'order.status_changed' && e.data.order_id === orderId)
        .map((e) => e.data.status);
      expect(orderStatuses).to.deep.equal(['completed', 'processing', 'screening']);
      const completed = events.find((e) => e.type === 'order.status_changed' && e.data.status === 'completed');
      expect(completed?.data).to.include({ amount: '1500.00', currency: 'KES', method: 'mobile_money' });
      const credit = events.find((e) => e.type === 'wallet.credited' && e.data.currency === 'KES');
      expect(credit?.data).to.include({ kind: 'deposit', amount: '20000000.00', balance_after: '20000000.00' });
      expect(credit?.data.deposit_id).to.be.a('string');
    });

    it('then `type` picks one type or a family, and `created_gte`/`created_lt` a window', async () => {
      const orders = await allEvents(user, { type: 'order.status_changed' });
      expect(orders.length).to.be.at.least(3);
      expect(orders.every((e) => e.type === 'order.status_changed')).to.equal(true);
      const wallet = await allEvents(user, { type: 'wallet.*' });
      expect(wallet.length).to.be.at.least(1);
      expect(wallet.every((e) => e.type === 'wallet.credited')).to.equal(true);

      const all = await allEvents(user);
      const middle = all[Math.floor(all.length / 2)];
      const from = await allEvents(user, { created_gte: middle.created_at });
      const before = await allEvents(user, { created_lt: middle.created_at });
      expect(from.every((e) => e.created_at >= middle.created_at)).to.equal(true);
      expect(before.every((e) => e.created_at < middle.created_at)).to.equal(true);
      expect(from.length + before.length).to.equal(all.length);
    });

    it('then another user sees none of them', async () => {
      const other = await newUser({ funded: false });
      const theirs = await allEvents(other);
      const mine = new Set((await allEvents(user)).map((e) => e.id));
      expect(theirs.filter((e) => mine.has(e.id))).to.deep.equal([]);
    });

    it('then an unknown type, a time that is not RFC 3339, or a forged cursor is a 400 naming the field', async () => {
      for (const [query, field] of [
        [{ type: 'order.exploded' }, 'type'],
        [{ type: 'nothing.*' }, 'type'],
        [{ created_gte: 'yesterday' }, 'created_gte'],
        [{ cursor: 'bm90LWEtY3Vyc29y' }, 'cursor'],
      ] as const) {
        const res = await api().get('/api/v1/events').set(user.auth).query(query);
        expect(res.status, JSON.stringify(query)).to.equal(400);
        expect(JSON.stringify(res.body)).to.include(field);
      }
      expect((await api().get('/api/v1/events')).status).to.equal(401);
    });
  });

  describe('when KYC changes and a P2P trade fills an ad', () => {
    it('then the user, the seller and the buyer each see their events', async function () {
      this.timeout(30_000);
      const admin = await newUser({ roles: ['admin'], funded: false });
      const seller = await newUser({ kycStatus: 'verified' });
      const buyer = await newUser({ kycStatus: 'verified' });
      const posted = await postAd(seller, sellAd());
      expect(posted.status, posted.text).to.equal(201);
      const adId = (posted.body as { ad_id: string }).ad_id;
      const trade = await initiate(buyer, p2pTrade(adId, '1300.00'));
      expect(trade.status, trade.text).to.equal(202);
      const tradeId = (trade.body as { order_id: string }).order_id;
      expect((await waitForOrder(buyer, tradeId)).status).to.equal('completed');

      const sellerTypes = (await allEvents(seller)).map((e) => `${e.type}:${String(e.data.ad_id ?? e.data.order_id)}`);
      expect(sellerTypes).to.include.members([`p2p.ad.created:${adId}`, `p2p.trade.created:${adId}`]);
      const buyerEvents = await allEvents(buyer, { type: 'p2p.*' });
      expect(buyerEvents.some((e) => e.type === 'p2p.trade.created' && e.data.order_id === tradeId && e.data.role === 'buyer')).to.equal(
        true,
      );

      const kycUser = await newUser({ funded: false });
      const submitted = await api()
        .put(`/api/v1/users/${kycUser.id}/kyc`)
        .set(kycUser.auth)
        .send({
          id_type: 'national_id',
          id_number: String(randomInt(10_000_000, 100_000_000)),
          date_of_birth: '1990-04-12',
          kra_pin: 'a123456789b',
          address: 'Moi Avenue 12, Nairobi',
        });
      expect(submitted.status, submitted.text).to.equal(200);
      const kyc = await allEvents(kycUser, { type: 'kyc.*' });
      expect(kyc.map((e) => e.data)).to.deep.include({
        user_id: kycUser.id,
        status: 'pending',
        previous_status: 'unverified',
        at: kyc[0].data.at,
      });
      const others = await allEvents(admin, { type: 'kyc.*' });
      expect(others.some((e) => e.data.user_id === kycUser.id)).to.equal(false);
    });
  });

  describe('when a webhook receiver was down', () => {
    let receiver: WebhookReceiver;
    let close: () => Promise<void>;

    before(async () => {
      ({ receiver, close } = await receiverWithDelivery(0, { WEBHOOK_BACKOFF_MS: '50', WEBHOOK_MAX_ATTEMPTS: '2' }));
    });
    after(() => close());

    it('then it catches up from GET /events, and one delivery retried on request arrives again with the same event id', async function () {
      this.timeout(40_000);
      const user = await newUser();
      const created = await api().post('/api/v1/webhooks/endpoints').set(user.auth).send({ url: receiver.url });
      expect(created.status, created.text).to.equal(201);
      const endpoint = created.body as { endpoint_id: string; secret: string };
      receiver.secret = endpoint.secret;

      receiver.down = true;
      const downSince = new Date().toISOString();
      const paid = await initiate(user, mpesaPayment());
      const orderId = (paid.body as { order_id: string }).order_id;
      expect((await waitForOrder(user, orderId)).status).to.equal('completed');
      const deliveriesUrl = `/api/v1/webhooks/endpoints/${endpoint.endpoint_id}/deliveries`;
      type Delivery = { delivery_id: string; event_id: string; status: string; attempts: number };
      const failed = await until(
        'every delivery given up',
        async () => {
          const log = (await api().get(deliveriesUrl).set(user.auth).query({ limit: '100' })).body as { data: Delivery[] };
          return log.data.length >= 3 && log.data.every((d) => d.status === 'failed') ? log.data : undefined;
        },
        20_000,
      );
      expect(receiver.acknowledged()).to.deep.equal([]);

      // Back up: what happened meanwhile is listed, and it is what the webhooks tried to deliver.
      receiver.down = false;
      const missed = await allEvents(user, { created_gte: downSince });
      const missedIds = new Set(missed.map((e) => e.id));
      for (const d of failed) expect(missedIds.has(d.event_id), d.event_id).to.equal(true);
      expect(missed.filter((e) => e.type === 'order.status_changed' && e.data.order_id === orderId).map((e) => e.data.status)).to.include(
        'completed',
      );

      const chosen = failed[0];
      const retried = await api().post(`${deliveriesUrl}/${chosen.delivery_id}/retry`).set(user.auth);
      expect(retried.status, retried.text).to.equal(202);
      expect(retried.body).to.include({ delivery_id: chosen.delivery_id, event_id: chosen.event_id, status: 'pending' });
      const arrived = await until('the retried delivery', () =>
        Promise.resolve(receiver.acknowledged().find((r) => r.eventId === chosen.event_id)),
      );
      expect(arrived.headerEventId).to.equal(chosen.event_id);
      expect(arrived.signatureValid).to.equal(true);
      const listed = missed.find((e) => e.id === chosen.event_id);
      expect(arrived.body).to.deep.equal(listed);
      await until('the delivery log to show it delivered', async () => {
        const log = (await api().get(deliveriesUrl).set(user.auth).query({ limit: '100' })).body as { data: Delivery[] };
        return log.data.find((d) => d.delivery_id === chosen.delivery_id && d.status === 'delivered');
      });
      expect(receiver.acknowledged().map((r) => r.eventId)).to.deep.equal([chosen.event_id]);
    });

    it("then another user cannot retry the endpoint's deliveries, an unknown delivery is a 404, and a disabled endpoint's a 409", async () => {
      const owner = await newUser({ funded: false });
      const other = await newUser({ funded: false });
      const created = await api().post('/api/v1/webhooks/endpoints').set(owner.auth).send({ url: receiver.url });
      const endpointId = (created.body as { endpoint_id: string }).endpoint_id;
      const someDelivery = '01a205e7-cb20-7233-b0b2-3ad4a6f91819';
      const theirs = await api().post(`/api/v1/webhooks/endpoints/${endpointId}/deliveries/${someDelivery}/retry`).set(other.auth);
      expect(theirs.status).to.equal(404);
      const unknown = await api().post(`/api/v1/webhooks/endpoints/${endpointId}/deliveries/${someDelivery}/retry`).set(owner.auth);
      expect(unknown.status).to.equal(404);
      // A disabled endpoint's deliveries are not sent again.
      expect((await api().delete(`/api/v1/webhooks/endpoints/${endpointId}`).set(owner.auth)).status).to.equal(204);
      const disabled = await api().post(`/api/v1/webhooks/endpoints/${endpointId}/deliveries/${someDelivery}/retry`).set(owner.auth);
      expect(disabled.status).to.equal(409);
      expect(disabled.body).to.include({ code: 'conflict' });
    });
  });

  describe('when events are older than the retention', () => {
    it('then the prune job deletes them and their deliveries, and keeps the rest', async () => {
      const user = await newUser();
      const events = await allEvents(user);
      expect(events.length).to.be.at.least(1);
      const [old, ...recent] = events;
      await rows("UPDATE webhook_events SET created_at = now() - interval '31 days', dispatched_at = now() WHERE id = :id", { id: old.id });
      await rows('UPDATE webhook_events SET dispatched_at = now() WHERE id IN (:ids) AND dispatched_at IS NULL', {
        ids: [...recent.map((e) => e.id), old.id],
      });
      expect(await pruneOldEvents(30)).to.be.at.least(1);
      const left = (await allEvents(user)).map((e) => e.id);
      expect(left).to.not.include(old.id);
      expect(left).to.include.members(recent.map((e) => e.id));
    });
  });
});
