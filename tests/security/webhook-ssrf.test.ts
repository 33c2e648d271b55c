import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import { loadConfig } from '../../platform/config';
import { database } from '../../platform/database';
import { createRedis } from '../../platform/redis';
import { deliverWebhook, dispatchWebhookEvents } from '../../workers/webhook-delivery';
import { isPublicAddress } from '../../connectors/webhook-targets';
import { startWebhookDelivery } from '../../workers/webhooks';
import { api, completedPayment, newUser, registerEndpoint, type TestUser } from '../support/api';
import { until } from '../support/processes';
import { startWebhookReceiver } from '../fakes/webhook-receiver';
import { withEnv } from '../support/config-env';

/**
 * Server-side request forgery through webhooks: a DNS server that answers differently to the check and
 * to the connection, the address ranges that reach inside, and an endpoint that never answers. Nothing
 * here resolves a real name or leaves 127.0.0.0/8: resolvers are injected, and 127.0.0.2 stands in for
 * a public address.
 */

const register = (user: TestUser, url: string) => registerEndpoint(user, url, 'ssrf test');

async function completedOrders(user: TestUser, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) await completedPayment(user);
}

/** An HTTP server on `host` that counts what reaches it; port 0 for any. */
async function countingServer(host: string, port = 0): Promise<{ hits: string[]; port: number; close: () => Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.headers.host ?? ''} ${req.url ?? ''}`);
    req.resume();
    res.writeHead(200).end('{}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    hits,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A receiver that accepts connections and never answers. */
async function startTarpit(): Promise<{ url: string; open: () => number; peak: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let peak = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    peak = Math.max(peak, sockets.size);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    open: () => sockets.size,
    peak: () => peak,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

interface DeliveryLogItem {
  delivery_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

async function deliveriesOf(user: TestUser, endpointId: string): Promise<DeliveryLogItem[]> {
  const res = await api().get(`/api/v1/webhooks/endpoints/${endpointId}/deliveries`).query({ limit: 100 }).set(user.auth);
  expect(res.status).to.equal(200);
  return (res.body as { data: DeliveryLogItem[] }).data;
}

describe('webhook SSRF', () => {
  describe("when the target's DNS answers a vetted address to the check and 127.0.0.1 afterwards (DNS rebinding)", () => {
    let restore: () => void;
    let vetted: Awaited<ReturnType<typeof countingServer>>;
    let internal: Awaited<ReturnType<typeof countingServer>>;

    before(async () => {
      // Registration does not resolve when private targets are allowed, so the made-up name is never looked up.
      restore = withEnv({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
      // The same port on two loopback addresses: 127.0.0.2 plays the public address, 127.0.0.1 the inside.
      for (let tries = 0; ; tries += 1) {
        vetted = await countingServer('127.0.0.2');
        try {
          internal = await countingServer('127.0.0.1', vetted.port);
          break;
        } catch (err) {
          await vetted.close();
          if (tries >= 10) throw err;
        }
      }
    });
    after(async () => {
      await vetted.close();
      await internal.close();
      restore();
    });

    /** A delivery of a fresh user's completed order to `http://<host>:<port>/hooks`. */
    async function pendingDelivery(host: string): Promise<string> {
      const user = await newUser();
      const created = await register(user, `http://${host}:${vetted.port}/hooks`);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      await completedOrders(user, 1);
      // The suite's other events (every order and deposit) are in the outbox too: dispatch until this one's turn.
      const row = await until(
        'a pending delivery',
        async () => {
          await dispatchWebhookEvents();
          const [found] = await database().query<{ id: string }>(
            `SELECT id FROM webhook_deliveries WHERE endpoint_id = :endpointId AND status = 'pending' ORDER BY id LIMIT 1`,
            { replacements: { endpointId: (created.body as { endpoint_id: string }).endpoint_id }, type: QueryTypes.SELECT },
          );
          return found;
        },
        20_000,
        10,
      );
      return row.id;
    }

    it('then the delivery connects to the address that was checked, resolving the name only once', async function () {
      this.timeout(30_000);
      const deliveryId = await pendingDelivery('hooks.rebind.test');
      const asked: string[] = [];
      const rebinding = (host: string) => {
        asked.push(host);
        return Promise.resolve(asked.length === 1 ? ['127.0.0.2'] : ['127.0.0.1']);
      };
      const settings = { ...loadConfig(process.env).webhooks, allowPrivateTargets: false, timeoutMs: 5000 };

      const result = await deliverWebhook(settings, deliveryId, undefined, {
        resolve: rebinding,
        isAllowedAddress: (address) => address === '127.0.0.2',
      });

      expect(result.outcome, result.error).to.equal('delivered');
      expect(internal.hits, 'requests that reached 127.0.0.1').to.deep.equal([]);
      expect(asked).to.deep.equal(['hooks.rebind.test']);
      expect(vetted.hits).to.deep.equal([`hooks.rebind.test:${vetted.port} /hooks`]);
    });

    it('then a name with one refused address among its answers is refused, and nothing is called', async function () {
      this.timeout(30_000);
      const deliveryId = await pendingDelivery('mixed.rebind.test');
      const settings = { ...loadConfig(process.env).webhooks, allowPrivateTargets: false };
      const before = vetted.hits.length;

      const result = await deliverWebhook(settings, deliveryId, undefined, {
        resolve: () => Promise.resolve(['127.0.0.2', '127.0.0.1']),
        isAllowedAddress: (address) => address === '127.0.0.2',
      });

      expect(result.outcome).to.equal('refused');
      expect(vetted.hits.length).to.equal(before);
      expect(internal.hits).to.deep.equal([]);
    });
  });

  describe('when a target is in a range that reaches inside through a translator, or is reserved', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'false' });
    });
    after(() => restore());

    const refused = [
      '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
      '64:ff9b::808:808', // NAT64 of anything: the gateway is inside
      '64:ff9b:1::1', // local-use NAT64
      '2001:db8::1', // documentation
      'fec0::1', // site-local
      '::7f00:1', // IPv4-compatible 127.0.0.1
      '::ffff:7f00:1', // IPv4-mapped 127.0.0.1, hexadecimal
      '::ffff:169.254.169.254',
      '2002:7f00:1::1', // 6to4 of 127.0.0.1
      '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
      '192.0.2.10',
      '198.51.100.10',
      '203.0.113.10',
      'fe80::1%eth0',
    ];

    it('then each address is not public', () => {
      for (const address of refused) expect(isPublicAddress(address), address).to.equal(false);
      for (const address of ['8.8.8.8', '2606:4700::1111', '::ffff:808:808']) expect(isPublicAddress(address), address).to.equal(true);
    });

    it('then registering it is refused with a 400 naming url', async () => {
      const user = await newUser();
      for (const address of refused.filter((a) => !a.includes('%'))) {
        const host = net.isIPv6(address) ? `[${address}]` : address;
        const res = await register(user, `http://${host}/latest`);
        expect(res.status, address).to.equal(400);
        expect((res.body as { errors: { field: string }[] }).errors[0]?.field).to.equal('url');
      }
    });
  });

  describe('when a user registers more endpoints than WEBHOOK_MAX_ENDPOINTS_PER_USER', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_MAX_ENDPOINTS_PER_USER: '3' });
    });
    after(() => restore());

    it('then concurrent registrations stop at the limit, the next is 422 limit_exceeded, and disabling one makes room', async () => {
      const user = await newUser();
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => register(user, `http://127.0.0.1:9/hooks/${i}`)));
      expect(answers.map((r) => r.status).sort()).to.deep.equal([201, 201, 201, 422, 422, 422]);
      const refused = answers.find((r) => r.status === 422)!;
      expect(refused.body).to.include({ code: 'limit_exceeded', status: 422 });
      expect((refused.body as { detail: string }).detail).to.match(/at most 3 enabled webhook endpoints/);

      const first = answers.find((r) => r.status === 201)!.body as { endpoint_id: string };
      expect((await api().delete(`/api/v1/webhooks/endpoints/${first.endpoint_id}`).set(user.auth)).status).to.equal(204);
      expect((await register(user, 'http://127.0.0.1:9/hooks/again')).status).to.equal(201);
      expect((await register(user, 'http://127.0.0.1:9/hooks/more')).status).to.equal(422);

      const other = await newUser();
      expect((await register(other, 'http://127.0.0.1:9/hooks')).status, 'the limit is per user').to.equal(201);
    });
  });

  describe('when one endpoint accepts connections and never answers, with a backlog of deliveries', () => {
    let restore: () => void;
    let tarpit: Awaited<ReturnType<typeof startTarpit>>;
    let delivery: { close: () => Promise<void> } | undefined;
    const connection = createRedis({ forWorker: true });

    before(async () => {
      restore = withEnv({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
      tarpit = await startTarpit();
    });
    after(async () => {
      await tarpit.close(); // the attempts it held fail at once, so the worker closes without waiting for the timeout
      await delivery?.close();
      connection.disconnect();
      restore();
    });

    it("then another merchant's deliveries go through while the tarpit holds only its own slots", async function () {
      this.timeout(90_000);
      const slow = await newUser();
      const slowEndpoint = (await register(slow, tarpit.url)).body as { endpoint_id: string };
      await completedOrders(slow, 4); // 12 deliveries, more than the worker runs at once
      const merchant = await newUser();
      const receiver = await startWebhookReceiver(0);
      try {
        const created = await register(merchant, receiver.url);
        expect(created.status).to.equal(201);
        receiver.secret = (created.body as { secret: string }).secret;
        await completedOrders(merchant, 1); // 3 deliveries, all behind the tarpit's backlog

        const cfg = loadConfig({
          ...process.env,
          WEBHOOK_TIMEOUT_MS: '60000',
          WEBHOOK_DISPATCH_EVERY_MS: '100',
          WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '2',
        });
        delivery = await startWebhookDelivery(cfg, connection);

        await until('the tarpit holds two connections', () => Promise.resolve(tarpit.open() === 2 ? true : undefined), 30_000);
        await until(
          'the merchant acknowledged three events',
          () => Promise.resolve(receiver.acknowledged().length >= 3 ? true : undefined),
          30_000,
        );

        expect(tarpit.open(), 'the tarpit still holds its attempts').to.equal(2);
        expect(tarpit.peak(), 'connections the tarpit ever held at once').to.equal(2);
        const backlog = await deliveriesOf(slow, slowEndpoint.endpoint_id);
        expect(backlog).to.have.length(12);
        expect(
          backlog.every((d) => d.status === 'pending' && d.attempts === 0),
          'every tarpit delivery still pending: none timed out, none was given up',
        ).to.equal(true);
      } finally {
        await api().delete(`/api/v1/webhooks/endpoints/${slowEndpoint.endpoint_id}`).set(slow.auth);
        await receiver.close();
      }
    });
  });
});
