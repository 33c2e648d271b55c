import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { User, WebhookDelivery, WebhookEndpoint, WebhookEvent } from '../../models';
import { ConfigError, loadConfig } from '../../platform/config';
import { AppError } from '../../platform/errors';
import { uuidv7 } from '../../platform/ids';
import { vetWebhookTarget, WebhookTargetError } from '../../connectors/webhook-targets';
import { ccxtRailError } from '../../connectors/ccxt-transfer';
import { registerWebhookEndpoint } from '../../services/webhook-service';
import { api, metricsAuth, newUser, registerEndpoint, type TestUser } from '../support/api';
import { withEnv } from '../support/config-env';
import { freePort, startApiProcess, stopApiProcess, untilHealthy, type ApiProcess } from '../support/processes';
import { expectSafeProblem as expectProblem } from '../support/problems';

/**
 * The smaller holes an attacker finds once the big doors are shut: operational figures for anyone, an admin
 * password in `ps`, webhooks in the clear, a retry button that sends traffic anywhere, a lockout turned
 * against the owner, and a provider's own words handed to clients. Each test is labelled with the OWASP API
 * Security Top 10 (2023) risk it closes.
 */

const DEPLOYED_SECRET = 'a-deployment-secret-that-is-long-enough-0123456789';
/** A deployment outside a local run: a public HOST, so every built-in secret must be replaced. */
const DEPLOYED = { HOST: '0.0.0.0', JWT_SECRET: DEPLOYED_SECRET, SANDBOX_CALLBACK_SECRET: DEPLOYED_SECRET, METRICS_TOKEN: DEPLOYED_SECRET };

describe('security: the smaller holes', function () {
  this.timeout(60_000);

  describe('API8:2023 Security Misconfiguration: /metrics', () => {
    describe('when /metrics is read without the metrics token, or with another one', () => {
      it('then it is a 401 problem asking for a bearer token, and the figures are not shown', async () => {
        const bare = await api().get('/metrics');
        expectProblem(bare, 401, 'unauthenticated', 'no token');
        expect(bare.headers['www-authenticate']).to.match(/^Bearer /);
        expect(bare.text).not.to.include('paygate_');
        for (const header of ['Bearer not-the-metrics-token-at-all', `Basic ${metricsAuth().Authorization.slice(7)}`, 'Bearer']) {
          const wrong = await api().get('/metrics').set('Authorization', header);
          expectProblem(wrong, 401, 'unauthenticated', header);
          expect(wrong.text).not.to.include('paygate_');
        }
        const user = await newUser({ funded: false });
        expectProblem(await api().get('/metrics').set(user.auth), 401, 'unauthenticated', "a user's login token");
      });

      it('then the scraper presenting METRICS_TOKEN reads Prometheus text', async () => {
        const res = await api().get('/metrics').set(metricsAuth());
        expect(res.status, res.text).to.equal(200);
        expect(res.text).to.include('# TYPE paygate_http_request_duration_seconds histogram');
      });
    });

    describe('when a deployment outside a local run sets no METRICS_TOKEN', () => {
      it('then it refuses to boot, naming METRICS_TOKEN; the built-in one is refused too', () => {
        const { METRICS_TOKEN: _token, ...withoutToken } = DEPLOYED;
        for (const env of [withoutToken, { ...withoutToken, NODE_ENV: 'production', HOST: '127.0.0.1' }]) {
          let thrown: unknown;
          try {
            loadConfig(env);
          } catch (err) {
            thrown = err;
          }
          expect(thrown).to.be.instanceOf(ConfigError);
          expect((thrown as ConfigError).problems.join('\n')).to.match(/^METRICS_TOKEN: /m);
        }
        expect(() => loadConfig({ ...withoutToken, METRICS_TOKEN: loadConfig({}).metrics.token })).to.throw(ConfigError, /METRICS_TOKEN/);
        expect(loadConfig(DEPLOYED).metrics.token).to.equal(DEPLOYED_SECRET);
      });
    });
  });

  describe('API2:2023 Broken Authentication: the admin password on the command line', () => {
    describe('when admin:create is given the password as an argument', () => {
      it('then it refuses, says why and how to give it instead, and creates nothing', async () => {
        const email = `argv-admin-${Date.now()}-${randomUUID().slice(0, 8)}@example.com`;
        const cli = spawn(
          process.execPath,
          [path.resolve(__dirname, '..', '..', 'api', 'cli', 'create-admin.js'), email, 'a-password-in-ps-1234'],
          {
            env: { ...process.env, LOG_LEVEL: 'silent' },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let output = '';
        cli.stdout.on('data', (d: Buffer) => (output += d.toString()));
        cli.stderr.on('data', (d: Buffer) => (output += d.toString()));
        const code = await new Promise<number | null>((resolve) => cli.once('exit', resolve));
        expect(code, output).to.equal(64);
        expect(output).to.include('takes no password on the command line');
        expect(output).to.include('stdin');
        expect(output).not.to.include('a-password-in-ps-1234');
        expect(await User.count({ where: { email } })).to.equal(0);
      });
    });
  });

  describe('API8:2023 Security Misconfiguration: webhooks in the clear', () => {
    describe('when a deployment outside a local run is given a plain http webhook URL', () => {
      let restore: (() => void) | undefined;
      let owner: TestUser;
      before(async () => {
        owner = await newUser({ funded: false });
        // No name is resolved: the targets' addresses are not what this is about. The registration is asked
        // of the use case itself: the api's login tokens are signed with the local run's secret.
        restore = withEnv({ ...DEPLOYED, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
      });
      after(() => restore?.());

      const registerAs = async (url: string): Promise<AppError | 'registered'> => {
        try {
          await registerWebhookEndpoint({ id: owner.id, roles: ['user'] }, { url });
          return 'registered';
        } catch (err) {
          if (err instanceof AppError) return err;
          throw err;
        }
      };

      it('then registration is refused naming the url, while the same target over https is taken', async () => {
        for (const url of ['http://hooks.example.com/paygate', 'HTTP://hooks.example.com/paygate']) {
          const refused = await registerAs(url);
          expect(refused, url).to.be.instanceOf(AppError);
          const { code, status, options, detail } = refused as AppError;
          expect({ code, status }).to.deep.equal({ code: 'validation_failed', status: 400 });
          expect(options.errors?.map((e) => e.field)).to.deep.equal(['url']);
          expect(detail).to.include('https');
        }
        expect(await registerAs('https://hooks.example.com/paygate')).to.equal('registered');
      });

      it('then a delivery to an http target registered earlier is refused before it connects', async () => {
        let thrown: unknown;
        try {
          await vetWebhookTarget('http://127.0.0.2:9/hooks', { allowPrivate: true, requireHttps: true });
        } catch (err) {
          thrown = err;
        }
        expect(thrown).to.be.instanceOf(WebhookTargetError);
        expect((thrown as Error).message).to.include('https');
      });
    });

    describe('when the run is local (test or development on loopback)', () => {
      it('then plain http is still taken, for receivers on this machine', async () => {
        const restore = withEnv({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
        try {
          const user = await newUser({ funded: false });
          expect((await registerEndpoint(user, 'http://127.0.0.1:9/hooks')).status).to.equal(201);
        } finally {
          restore();
        }
      });
    });
  });

  describe('API4:2023 Unrestricted Resource Consumption: retrying a delivered delivery', () => {
    const MAX = 2;
    let restore: (() => void) | undefined;
    before(() => {
      restore = withEnv({ WEBHOOK_MAX_MANUAL_RETRIES: String(MAX) });
    });
    after(() => restore?.());

    /** A delivery already delivered to an endpoint of `user`. */
    async function deliveredDelivery(user: TestUser): Promise<{ url: string; deliveryId: string }> {
      const endpoint = await WebhookEndpoint.create({
        id: uuidv7(),
        userId: user.id,
        url: 'https://hooks.example.com/x',
        secret: 'whsec_test',
      });
      const event = await WebhookEvent.create({
        type: 'order.status_changed',
        userId: user.id,
        orderId: null,
        depositId: null,
        payload: { status: 'completed' },
        dispatchedAt: new Date(),
      });
      const delivery = await WebhookDelivery.create({
        eventId: event.id,
        endpointId: endpoint.id,
        status: 'delivered',
        attempts: 1,
        deliveredAt: new Date(),
      });
      return { url: `/api/v1/webhooks/endpoints/${endpoint.id}/deliveries/${delivery.id}/retry`, deliveryId: delivery.id };
    }

    describe('when its owner retries it again and again', () => {
      it('then the retries past WEBHOOK_MAX_MANUAL_RETRIES are a 409 problem, and the count stays at the bound', async () => {
        const user = await newUser({ funded: false });
        const { url, deliveryId } = await deliveredDelivery(user);
        for (let i = 0; i < MAX; i += 1) {
          const ok = await api().post(url).set(user.auth);
          expect(ok.status, ok.text).to.equal(202);
          // As if the sweep had sent it again: delivered once more.
          await WebhookDelivery.update({ status: 'delivered' }, { where: { id: deliveryId } });
        }
        for (let i = 0; i < 3; i += 1) {
          const refused = expectProblem(await api().post(url).set(user.auth), 409, 'conflict', `retry ${MAX + i + 1}`);
          expect(refused.detail).to.include(`${MAX} times`);
        }
        const row = await WebhookDelivery.findByPk(deliveryId);
        expect(row?.manualRetries).to.equal(MAX);
        expect(row?.status).to.equal('delivered');
      });
    });

    describe('when many retries of one delivery arrive at once', () => {
      it('then the database lets exactly the bound through', async () => {
        const user = await newUser({ funded: false });
        const { url, deliveryId } = await deliveredDelivery(user);
        const answers = await Promise.all(Array.from({ length: 8 }, () => api().post(url).set(user.auth)));
        expect(answers.filter((a) => a.status === 202)).to.have.length(MAX);
        for (const a of answers.filter((r) => r.status !== 202)) expectProblem(a, 409, 'conflict');
        expect((await WebhookDelivery.findByPk(deliveryId))?.manualRetries).to.equal(MAX);
      });
    });
  });

  describe('API2:2023 Broken Authentication: a lockout turned against the owner', () => {
    const PER_ACCOUNT_AND_IP = 5;
    const PER_ACCOUNT = 12;
    let proxied: ApiProcess;

    before(async () => {
      // Behind a trusted "proxy" (loopback), each request's X-Forwarded-For is its client address.
      proxied = startApiProcess(
        {
          TRUST_PROXY: '127.0.0.0/8,::1/128',
          RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP: String(PER_ACCOUNT_AND_IP),
          RATE_LIMIT_LOGIN_PER_ACCOUNT: String(PER_ACCOUNT),
        },
        await freePort(),
      );
      await untilHealthy(proxied, 'the api behind the proxy');
    });
    after(() => stopApiProcess(proxied));

    const login = (from: string, email: string, password: string) =>
      request(proxied.url).post('/api/v1/auth/login').set('X-Forwarded-For', from).send({ email, password });

    describe('when 200 failures come from 40 IPv6 /64s after the owner logged in from their usual address', () => {
      it('then the owner still logs in from that address (its /64), while a new address is held by the account bound', async () => {
        const owner = await newUser({ funded: false });
        const first = await login('2001:db8:aaaa:1::10', owner.email, owner.password);
        expect(first.status, first.text).to.equal(200);

        for (let net = 0; net < 40; net += 1) {
          const from = `2001:db8:bad:${net.toString(16)}::${(net + 1).toString(16)}`;
          for (let i = 0; i < 5; i += 1) {
            const failed = await login(from, owner.email, `wrong-guess-${net}-${i}`);
            expect([401, 429], `failure ${i + 1} from ${from}: ${failed.text}`).to.include(failed.status);
          }
        }

        // The account bound is used up: a stranger's address (and the owner on a new one) waits it out.
        expectProblem(await login('2001:db8:cafe:1::1', owner.email, owner.password), 429, 'rate_limited', 'a new /64');
        const again = await login('2001:db8:aaaa:1::99', owner.email, owner.password);
        expect(again.status, again.text).to.equal(200);
        expect((again.body as { token_type: string }).token_type).to.equal('Bearer');
      });
    });

    describe("when someone fails on the account from the owner's own address", () => {
      it('then the tight per-address bound still holds there', async () => {
        const owner = await newUser({ funded: false });
        expect((await login('198.51.100.77', owner.email, owner.password)).status).to.equal(200);
        for (let i = 0; i < PER_ACCOUNT_AND_IP; i += 1) {
          expectProblem(await login('198.51.100.77', owner.email, `wrong-${i}`), 401, 'unauthenticated', `failure ${i + 1}`);
        }
        expectProblem(await login('198.51.100.77', owner.email, owner.password), 429, 'rate_limited');
      });
    });
  });

  describe("API8:2023 Security Misconfiguration / API3:2023: a provider's error text", () => {
    const PROVIDER_TEXT = 'Invalid API-key, IP 10.20.30.40, or permissions for action on sub-account ops-treasury-7';
    let exchange: http.Server;
    let restore: (() => void) | undefined;

    before(async () => {
      // An exchange that refuses everything with words about our account.
      exchange = http.createServer((req, res) => {
        req.resume();
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ code: -2015, msg: PROVIDER_TEXT }));
      });
      await new Promise<void>((resolve) => exchange.listen(0, '127.0.0.1', resolve));
      restore = withEnv({
        RAIL_CRYPTO: 'ccxt',
        CCXT_EXCHANGE: 'binance',
        CCXT_API_KEY: 'test-key',
        CCXT_SECRET: 'test-secret',
        CCXT_SANDBOX: 'false',
        CCXT_API_URL: `http://127.0.0.1:${(exchange.address() as AddressInfo).port}`,
      });
    });
    after(async () => {
      restore?.();
      await new Promise<void>((resolve) => exchange.close(() => resolve()));
    });

    describe('when the exchange refuses to give a deposit address', () => {
      it('then the client gets a neutral problem, without a word of what the exchange said', async () => {
        const user = await newUser({ funded: false });
        for (const query of [{}, { network: 'TRC20' }]) {
          const res = await api().get('/api/v1/wallets/USDT/deposit-address').query(query).set(user.auth);
          expect([400, 503], res.text).to.include(res.status);
          expectProblem(res, res.status, res.status === 503 ? 'dependency_unavailable' : 'validation_failed', JSON.stringify(query));
          for (const word of ['API-key', '10.20.30.40', 'ops-treasury-7', '-2015', 'binance']) expect(res.text).not.to.include(word);
        }
      });
    });

    describe("when the exchange refuses a withdrawal (the text an order's failure_reason is made from)", () => {
      /** Named as ccxt's class is: the connector reads the error's class by name. */
      class AuthenticationError extends Error {}

      it('then the rail error names the failure in neutral words, and keeps its code', () => {
        for (const [raw, code] of [
          [`binance {"code":-2015,"msg":"${PROVIDER_TEXT}"}`, 'provider_auth_failed'],
          [`binance {"code":-4026,"msg":"You have insufficient balance in ops-treasury-7."}`, 'insufficient_funds'],
          [`binance {"code":-4003,"msg":"Invalid coin for sub-account ops-treasury-7."}`, 'provider_rejected'],
        ] as const) {
          const err = ccxtRailError(code === 'provider_auth_failed' ? new AuthenticationError(raw) : new Error(raw));
          expect(err.failureCode, raw).to.equal(code);
          for (const word of ['ops-treasury-7', 'binance', '-40', '-2015', 'API-key']) expect(err.message, raw).not.to.include(word);
        }
      });
    });
  });
});
