import { expect } from 'chai';
import { isPublicAddress } from '../connectors/webhook-targets';
import { api, initiate, mpesaPayment, newUser, registerEndpoint as register, waitForOrder } from './support/api';
import { until } from './support/processes';
import type { WebhookReceiver } from './fakes/webhook-receiver';
import { receiverWithDelivery } from './support/webhooks';
import { withEnv } from './support/config-env';

interface Endpoint {
  endpoint_id: string;
  url: string;
  secret: string;
  enabled: boolean;
}

describe('webhooks', () => {
  describe('when private targets are not allowed (the default)', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'false' });
    });
    after(() => restore());

    it('then a loopback or private URL is refused with a 400 naming url', async () => {
      const user = await newUser();
      for (const url of ['http://127.0.0.1:9/hooks', 'http://10.1.2.3/hooks', 'http://[::1]/hooks', 'http://169.254.169.254/latest']) {
        const res = await register(user, url);
        expect(res.status, url).to.equal(400);
        expect(res.body).to.include({ code: 'validation_failed' });
        expect((res.body as { errors: { field: string }[] }).errors[0]?.field).to.equal('url');
      }
    });

    it('then a URL that is not http(s) is refused', async () => {
      const user = await newUser();
      const res = await register(user, 'file:///etc/passwd');
      expect(res.status).to.equal(400);
      expect((res.body as { errors: { field: string; message: string }[] }).errors[0]).to.deep.include({ field: 'url' });
    });

    it('then public and non-public addresses are told apart', () => {
      expect(['8.8.8.8', '2606:4700::1111'].every(isPublicAddress)).to.equal(true);
      expect(
        ['127.0.0.1', '192.168.1.1', '172.20.0.1', '100.64.0.1', '::ffff:127.0.0.1', 'fd00::1', 'fe80::1'].some(isPublicAddress),
      ).to.equal(false);
    });

    it('then an anonymous caller is 401', async () => {
      const res = await api().post('/api/v1/webhooks/endpoints').send({ url: 'https://example.com/hooks' });
      expect(res.status).to.equal(401);
      expect(res.body).to.include({ code: 'unauthenticated' });
    });
  });

  describe('when a merchant registers an endpoint and its orders change status', () => {
    let receiver: WebhookReceiver;
    let close: () => Promise<void>;

    before(async () => {
      ({ receiver, close } = await receiverWithDelivery(2, { WEBHOOK_BACKOFF_MS: '100', WEBHOOK_MAX_ATTEMPTS: '5' }));
    });
    after(() => close());

    it('then the receiver gets every status change once per event id, signed, even after answering 500 twice', async function () {
      this.timeout(30_000);
      const user = await newUser();
      const created = await register(user, receiver.url);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const endpoint = created.body as Endpoint;
      expect(endpoint).to.include({ url: receiver.url, enabled: true });
      expect(endpoint.secret).to.match(/^whsec_/);
      receiver.secret = endpoint.secret;

      const ok = await initiate(user, mpesaPayment());
      const failed = await initiate(user, mpesaPayment({ destination: { provider: 'mpesa', phone: '+254700001032' } }));
      const okOrder = await waitForOrder(user, (ok.body as { order_id: string }).order_id);
      const failedOrder = await waitForOrder(user, (failed.body as { order_id: string }).order_id);
      expect(okOrder.status).to.equal('completed');
      expect(failedOrder.status).to.equal('failed');

      const orderEvents = () => receiver.acknowledged().filter((r) => r.body.type === 'order.status_changed');
      // The failed payout's hold goes back to the wallet: that is an event too, delivered on its own schedule.
      const walletCredited = () => receiver.acknowledged().some((r) => r.body.type === 'wallet.credited');
      await until(
        'six acknowledged order events and the wallet credit',
        () => Promise.resolve(orderEvents().length >= 6 && walletCredited() ? true : undefined),
        20_000,
      );
      await new Promise((r) => setTimeout(r, 500));
      const acked = orderEvents();
      expect(receiver.received.every((r) => r.signatureValid)).to.equal(true);
      expect(receiver.acknowledged().map((r) => r.body.type)).to.include('wallet.credited');
      expect(acked.every((r) => r.headerEventId === r.eventId)).to.equal(true);
      expect(new Set(acked.map((r) => r.eventId)).size, 'one acknowledgement per event id').to.equal(acked.length);
      const statusesOf = (orderId: string) => acked.filter((r) => r.body.data.order_id === orderId).map((r) => r.body.data.status);
      expect(statusesOf(okOrder.order_id)).to.have.members(['screening', 'processing', 'completed']).and.have.length(3);
      expect(statusesOf(failedOrder.order_id)).to.have.members(['screening', 'processing', 'failed']).and.have.length(3);
      const failedEvent = acked.find((r) => r.body.data.order_id === failedOrder.order_id && r.body.data.status === 'failed');
      expect(failedEvent?.body.type).to.equal('order.status_changed');
      expect(failedEvent?.body.data.failure_code).to.equal('cancelled_by_user');
      for (const event of acked) {
        expect(receiver.received.filter((r) => r.eventId === event.eventId).map((r) => r.answered)).to.deep.equal([500, 500, 200]);
      }

      const log = await api().get(`/api/v1/webhooks/endpoints/${endpoint.endpoint_id}/deliveries`).set(user.auth);
      expect(log.status).to.equal(200);
      const deliveries = (
        log.body as { data: { type: string; status: string; attempts: number; attempt_log: { status_code: number }[] }[] }
      ).data.filter((d) => d.type === 'order.status_changed');
      expect(deliveries).to.have.length(6);
      for (const d of deliveries) {
        expect(d).to.include({ status: 'delivered', attempts: 3 });
        expect(d.attempt_log.map((a) => a.status_code)).to.deep.equal([500, 500, 200]);
      }
    });

    it("then another user cannot read the endpoint's delivery log", async () => {
      const owner = await newUser();
      const other = await newUser();
      const created = await register(owner, receiver.url);
      const id = (created.body as Endpoint).endpoint_id;
      const res = await api().get(`/api/v1/webhooks/endpoints/${id}/deliveries`).set(other.auth);
      expect(res.status).to.equal(404);
      expect(res.body).to.include({ code: 'not_found' });
    });

    it('then a disabled endpoint is listed as disabled and the secret is never shown again', async () => {
      const user = await newUser();
      const created = await register(user, receiver.url);
      const id = (created.body as Endpoint).endpoint_id;
      const disabled = await api().delete(`/api/v1/webhooks/endpoints/${id}`).set(user.auth);
      expect(disabled.status).to.equal(204);
      const list = await api().get('/api/v1/webhooks/endpoints').set(user.auth);
      expect(list.status).to.equal(200);
      const items = (list.body as { data: Record<string, unknown>[]; next_cursor: string | null }).data;
      expect(items).to.have.length(1);
      expect(items[0]).to.include({ endpoint_id: id, enabled: false });
      expect(items[0]).to.not.have.property('secret');
    });
  });
});
