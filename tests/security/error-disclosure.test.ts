import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { DatabaseError } from 'sequelize';
import { User } from '../../models';
import { startRailFakes, type RailFakes } from '../fakes/rails';
import { api, newUser, type OrderBody, type TestUser } from '../support/api';
import { rows } from '../support/db';
import { RUN_ID } from '../support/env';
import { expectNoLeak, expectSafeProblem as expectProblem } from '../support/problems';
import { freePort, until } from '../support/processes';
import { stack } from '../support/stack';

/**
 * OWASP API8 (security misconfiguration): errors tell the client what it did wrong, never how the server is
 * built — no stack traces, file paths, SQL, ORM or driver names, whatever breaks inside or comes in malformed.
 */

describe('security: no internals in error answers', () => {
  let user: TestUser;

  before(async () => {
    user = await newUser();
  });

  describe('when the database fails inside a request', () => {
    it('then the answer is a bare 500 internal problem with the request id, and nothing of the failure', async () => {
      const failure = new DatabaseError(
        Object.assign(new Error('relation "users" does not exist'), {
          sql: 'SELECT "id", "email", "password_hash" FROM "users" AS "User" WHERE "User"."email" = $1',
          parameters: ['someone@example.com'],
        }),
      );
      const original = User.findOne.bind(User);
      User.findOne = () => Promise.reject(failure);
      try {
        const res = await api()
          .post('/api/v1/auth/login')
          .set('X-Request-Id', 'trace-me-123')
          .send({ email: `broken-${randomUUID()}@example.com`, password: 'whatever-it-is' });
        expectProblem(res, 500, 'internal', 'login while the database fails');
        const body = res.body as { detail: string; request_id: string };
        expect(body.request_id).to.equal('trace-me-123');
        expect(body.detail).not.to.include('relation');
        expect(body.detail).not.to.include('password_hash');
        expect(Object.keys(body).sort()).to.deep.equal(['code', 'detail', 'request_id', 'status', 'title', 'type']);
      } finally {
        User.findOne = original as typeof User.findOne;
      }
    });

    it('then a plain programming error inside is the same bare 500', async () => {
      const original = User.findOne.bind(User);
      User.findOne = () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'passwordHash')"));
      try {
        const res = await api()
          .post('/api/v1/auth/login')
          .send({ email: `typo-${randomUUID()}@example.com`, password: 'whatever-it-is' });
        expectProblem(res, 500, 'internal');
        expect(res.text).not.to.include('passwordHash');
        expect(res.text).not.to.include('TypeError');
      } finally {
        User.findOne = original as typeof User.findOne;
      }
    });
  });

  describe('when requests are malformed in the ways attackers probe', () => {
    const raw = (method: 'post' | 'put', path: string, type: string, body: string, token?: string) => {
      let req = api()[method](`/api/v1${path}`).set('Content-Type', type);
      if (token) req = req.set('Authorization', `Bearer ${token}`);
      return req.send(body);
    };

    it('then broken or foreign bodies are 4xx problems without parser or framework internals', async () => {
      const cases: [string, () => Promise<import('supertest').Response>][] = [
        ['truncated JSON', () => raw('post', '/auth/register', 'application/json', '{"email": "a@b.co", "password": ')],
        ['JSON with trailing garbage', () => raw('post', '/auth/login', 'application/json', '{"email":"a@b.co","password":"x"} trailing')],
        ['a JSON string', () => raw('post', '/auth/login', 'application/json', '"just a string"')],
        ['XML', () => raw('post', '/auth/login', 'application/xml', '<login><email>a@b.co</email></login>')],
        ['a form', () => raw('post', '/auth/login', 'application/x-www-form-urlencoded', 'email=a%40b.co&password=x')],
        ['plain text', () => raw('post', '/auth/register', 'text/plain', 'hello')],
        ['an unknown charset', () => raw('post', '/auth/login', 'application/json; charset=ebcdic', '{}')],
        [
          'an operator object for a string',
          () => raw('post', '/auth/login', 'application/json', '{"email":{"$gt":""},"password":{"$ne":null}}'),
        ],
        ['an array for an object', () => raw('post', '/payments/initiate', 'application/json', '[1,2,3]', user.token)],
        [
          'a number for an amount',
          () =>
            raw(
              'post',
              '/payments/initiate',
              'application/json',
              '{"amount":1e309,"currency":"KES","method":"mobile_money","destination":{}}',
              user.token,
            ),
        ],
      ];
      for (const [what, send] of cases) {
        const res = await send();
        expect(res.status, `${what}: ${res.text}`).to.be.within(400, 499);
        expect(res.headers['content-type'], what).to.match(/^application\/problem\+json/);
        expectNoLeak(res, what);
      }
    });

    it('then injection-shaped ids and filters are 400s, never database errors', async () => {
      for (const path of [
        "/users/' OR '1'='1",
        '/users/1;DROP TABLE users',
        '/payments/orders/../../etc/passwd',
        '/payments/orders/%27%20OR%201%3D1--',
        '/appeals/00000000-0000-0000-0000-00000000000g',
        '/payments/orders/%E0%A4%A',
        '/payments/history?limit=1;DROP TABLE orders',
        "/payments/history?status=completed' OR '1'='1",
        '/payments/history?from=2026-13-45T99:99:99Z',
        '/payments/history?status=a&status=b',
        '/platforms/exchanges?certified=maybe',
        '/compliance/blocklist?type=../../',
      ]) {
        const res = await api().get(`/api/v1${path}`).set(user.auth);
        expect(res.status, `${path}: ${res.text}`).to.be.within(400, 404);
        expect(res.headers['content-type'], path).to.match(/^application\/problem\+json/);
        expectNoLeak(res, path);
      }
    });

    it('then a __proto__ or constructor in a body grants nothing', async () => {
      const email = `proto-${randomUUID()}@example.com`;
      const res = await raw(
        'post',
        '/auth/register',
        'application/json',
        JSON.stringify({ email, password: 'a-long-enough-password', full_name: 'Proto Type' }).replace(
          /}$/,
          ',"__proto__":{"role":"admin","roles":["admin"]},"constructor":{"prototype":{"role":"admin"}}}',
        ),
      );
      expect(res.status, res.text).to.equal(201);
      expect((res.body as { role: string }).role).to.equal('user');
      expect(({} as { role?: string }).role, 'Object.prototype untouched').to.equal(undefined);
      const stored = await User.findOne({ where: { email } });
      expect(stored!.roles).to.deep.equal(['user']);
    });
  });

  describe('when pages outside the API fail', () => {
    it('then an unknown path, a wrong method and a bad console asset are problems without internals', async () => {
      for (const [method, path] of [
        ['get', '/no-such-page'],
        ['delete', '/openapi.json'],
        ['get', '/console/../../package.json'],
        ['get', '/console/%2e%2e/%2e%2e/package.json'],
        ['get', '/console/%E0%A4%A'],
      ] as ['get' | 'delete', string][]) {
        const res = await api()[method](path);
        expect(res.status, `${method} ${path}: ${res.text}`).to.be.within(400, 499);
        expectNoLeak(res, `${method} ${path}`);
        expect(res.text).not.to.include('"name": "paygate"');
      }
    });
  });

  /**
   * OWASP API8:2023: a bank's or M-Pesa's own words about a refused or failed payment (which may name our
   * account, its setup or the beneficiary) are logged with the order id, never put in what the client
   * reads: the order, its events, its webhooks. The real connectors run in an api and a worker of their own,
   * pointed at the provider fakes, with their log read back.
   */
  describe('when a rail refuses or fails a payment in words of its own', function () {
    this.timeout(90_000);
    const marker = `provider-words-${randomBytes(6).toString('hex')}`;
    let fakes: RailFakes;
    const children: ChildProcess[] = [];
    const output: Buffer[] = [];
    let baseUrl = '';

    before(async function () {
      this.timeout(90_000);
      fakes = await startRailFakes();
      fakes.jenga.providerWords = marker;
      fakes.daraja.providerWords = marker;
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      const env = {
        ...process.env,
        ...fakes.env,
        TEMPORAL_ADDRESS: stack.temporalAddress,
        LOG_LEVEL: 'warn',
        PORT: String(port),
        PUBLIC_BASE_URL: baseUrl,
        TEMPORAL_TASK_QUEUE: `paygate-disclosure-${RUN_ID}`,
        PAYMENT_POLL_AFTER_MS: '500',
      };
      for (const entry of ['api/server.js', 'workers/temporal-worker.js']) {
        const child = spawn(process.execPath, [path.resolve(__dirname, '..', '..', entry)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
        child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
        children.push(child);
      }
      await until('the api with the real rails', async () => {
        const res = await fetch(`${baseUrl}/readyz`).catch(() => undefined);
        return res?.status === 200 ? true : undefined;
      });
    });

    after(async () => {
      await Promise.all(
        children.map((child) => {
          if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
          const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.kill('SIGTERM');
          return exited;
        }),
      );
      await fakes.close();
    });

    /** The failed order as its owner reads it, its events and the webhook payloads queued for it. */
    async function failedPayment(user: TestUser, body: Record<string, unknown>) {
      const started = await request(baseUrl)
        .post('/api/v1/payments/initiate')
        .set(user.auth)
        .set('Idempotency-Key', randomUUID())
        .send(body);
      expect(started.status, started.text).to.equal(202);
      const orderId = (started.body as { order_id: string }).order_id;
      const order = await until(`order ${orderId} to fail`, async () => {
        const res = await request(baseUrl).get(`/api/v1/payments/orders/${orderId}`).set(user.auth);
        return (res.body as OrderBody).status === 'failed' ? (res.body as OrderBody) : undefined;
      });
      const events = await request(baseUrl).get('/api/v1/events').set(user.auth);
      expect(events.status, events.text).to.equal(200);
      const webhooks = await rows<{ payload: unknown }>('SELECT payload FROM webhook_events WHERE order_id = :orderId', { orderId });
      expect(webhooks.length, 'the failure is a webhook event').to.be.greaterThan(0);
      const logged = await until('the provider words in the log', () => {
        const lines = Buffer.concat(output).toString('utf8').split('\n');
        const line = lines.find((l) => l.includes(marker) && l.includes(orderId));
        return Promise.resolve(line);
      });
      return { orderId, order, events: events.body as unknown, webhooks, logged };
    }

    it('then a bank refusal fails the order with our own reason, and only the log holds the bank’s words', async () => {
      const user = await newUser();
      const { order, events, webhooks, logged } = await failedPayment(user, {
        amount: '2500.00',
        currency: 'KES',
        method: 'bank_transfer',
        destination: { bank_code: '01', account_number: '1234560000', account_name: 'Jane Doe' },
      });
      expect(order.failure_code).to.equal('account_not_found');
      expect(order.failure_reason).to.equal('the beneficiary bank could not credit the account');
      expect(JSON.stringify(order), 'the order').not.to.include(marker);
      expect(JSON.stringify(events), 'the events').not.to.include(marker);
      expect(JSON.stringify(webhooks), 'the webhooks').not.to.include(marker);
      expect(JSON.parse(logged)).to.include({ rail: 'jenga', failureCode: 'account_not_found' });
    });

    it('then an M-Pesa B2C failure with a code Paygate does not map reads neutrally, and only the log and the request record hold M-Pesa’s words', async () => {
      const user = await newUser();
      const { orderId, order, events, webhooks, logged } = await failedPayment(user, {
        amount: '1500.00',
        currency: 'KES',
        method: 'mobile_money',
        destination: { provider: 'mpesa', phone: '+254700002040' },
      });
      expect(order.failure_code).to.equal('provider_error');
      expect(order.failure_reason).to.equal('M-Pesa did not complete the request (result code 2040)');
      expect(JSON.stringify(order), 'the order').not.to.include(marker);
      expect(JSON.stringify(events), 'the events').not.to.include(marker);
      expect(JSON.stringify(webhooks), 'the webhooks').not.to.include(marker);
      expect(JSON.parse(logged)).to.include({ rail: 'daraja', orderId, providerCode: '2040' });
      const [recorded] = await rows<{ result_desc: string }>(
        `SELECT result_desc FROM rail_requests WHERE order_id = :orderId AND kind = 'b2c'`,
        {
          orderId,
        },
      );
      expect(recorded.result_desc, 'kept on the request for operators').to.include(marker);
    });
  });
});
