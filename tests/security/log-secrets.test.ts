import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { newUser, type TestUser } from '../support/api';
import { freePort } from '../support/local-tools';
import { startApiProcess, stopApiProcess, until, untilHealthy, type ApiProcess } from '../support/processes';

/**
 * OWASP API8 / ASVS 7.1: credentials never reach the logs. Whoever reads the api's access log must not find
 * an admin's JWT (the queue dashboard's `?access_token=` or its cookie), a bearer token, Daraja's per-order
 * callback `?token=` (enough to settle a B2C payout) or a signature header in it. The compiled api runs as
 * a process with LOG_LEVEL=info, as in production, and its stdout is read back.
 */

const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;
const signaturePart = (jwt: string) => jwt.split('.')[2];

describe('security: credentials in the access log', function () {
  this.timeout(60_000);
  let api: ApiProcess;

  before(async () => {
    const port = await freePort();
    api = startApiProcess({ LOG_LEVEL: 'info' }, port, ['stdout']);
    await untilHealthy(api, 'the api process');
  });

  after(() => stopApiProcess(api));

  /** The access-log lines of the given request ids, once all of them have been written. */
  async function logLinesOf(ids: string[]): Promise<string[]> {
    return until('the access log lines', () => {
      const lines = api.output().split('\n');
      const found = ids.map((id) => lines.filter((l) => l.includes(`"component":"http"`) && l.includes(id)));
      return Promise.resolve(found.every((f) => f.length > 0) ? found.flat() : undefined);
    });
  }

  describe('when requests carry credentials in the query, the cookie and the headers', () => {
    let admin: TestUser;
    let user: TestUser;
    const ids = {
      dashboardQuery: `log-dash-query-${randomUUID()}`,
      dashboardCookie: `log-dash-cookie-${randomUUID()}`,
      stkCallback: `log-stk-${randomUUID()}`,
      b2cCallback: `log-b2c-${randomUUID()}`,
      bearer: `log-bearer-${randomUUID()}`,
      queryElsewhere: `log-query-${randomUUID()}`,
      signed: `log-signed-${randomUUID()}`,
    };
    const callbackToken = secret('callback-token');
    const b2cToken = secret('b2c-token');
    const apiKey = secret('api-key');
    const signature = secret('signature');
    const queryPassword = secret('query-password');
    let cookiePair: string;
    let lines: string[];

    before(async () => {
      admin = await newUser({ roles: ['user', 'admin'] });
      user = await newUser();
      const orderId = randomUUID();

      const first = await request(api.url)
        .get(`/admin/queues?access_token=${admin.token}`)
        .set('X-Request-Id', ids.dashboardQuery)
        .redirects(0);
      expect(first.status, first.text).to.equal(303);
      cookiePair = (first.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
      const page = await request(api.url).get('/admin/queues').set('Cookie', cookiePair).set('X-Request-Id', ids.dashboardCookie);
      expect(page.status).to.equal(200);

      const stk = await request(api.url)
        .post(`/api/v1/callbacks/mpesa/stk/${orderId}?token=${callbackToken}`)
        .set('X-Request-Id', ids.stkCallback)
        .send({ Body: { stkCallback: { MerchantRequestID: 'm', CheckoutRequestID: 'c', ResultCode: 0, ResultDesc: 'ok' } } });
      expect(stk.status).to.equal(200);
      const b2c = await request(api.url)
        .post(`/api/v1/callbacks/mpesa/b2c/${orderId}/result?token=${b2cToken}`)
        .set('X-Request-Id', ids.b2cCallback)
        .send({ Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'ok', OriginatorConversationID: 'o', ConversationID: 'c' } });
      expect(b2c.status).to.equal(200);

      const me = await request(api.url).get('/api/v1/auth/me').set(user.auth).set('X-Api-Key', apiKey).set('X-Request-Id', ids.bearer);
      expect(me.status).to.equal(200);
      await request(api.url)
        .get(`/api/v1/auth/me?limit=7&password=${queryPassword}&access_token=${user.token}`)
        .set('X-Request-Id', ids.queryElsewhere);
      await request(api.url)
        .post('/api/v1/callbacks/sandbox')
        .set('X-Sandbox-Signature', signature)
        .set('X-Request-Id', ids.signed)
        .send({ reference: 'r', merchant_reference: orderId, status: 'succeeded', failure_code: null, provider_code: null });

      lines = await logLinesOf(Object.values(ids));
    });

    it('then the log holds no token, cookie, key or signature', () => {
      const log = api.output();
      for (const [what, value] of Object.entries({
        'the admin JWT': admin.token,
        "the admin JWT's signature": signaturePart(admin.token),
        'the dashboard cookie': cookiePair.split('=')[1],
        "the user's bearer JWT": signaturePart(user.token),
        'the STK callback token': callbackToken,
        'the B2C callback token': b2cToken,
        'the X-Api-Key header': apiKey,
        'the X-Sandbox-Signature header': signature,
        'a password in a query string': queryPassword,
      })) {
        expect(log.includes(value), `${what} is in the log`).to.equal(false);
      }
    });

    it('then each request is still logged with its id, method, path, route, status and duration', () => {
      const entries = lines.map(
        (l) =>
          JSON.parse(l) as {
            req: { id: string; method: string; url: string; route: string };
            res: { statusCode: number };
            responseTime: number;
          },
      );
      const byId = (id: string) => entries.find((e) => e.req.id === id);
      expect(byId(ids.dashboardQuery)?.req).to.include({ method: 'GET', url: '/admin/queues?[redacted]' });
      expect(byId(ids.dashboardQuery)?.res.statusCode).to.equal(303);
      expect(byId(ids.dashboardCookie)?.req.url).to.equal('/admin/queues');
      expect(byId(ids.stkCallback)?.req.method).to.equal('POST');
      expect(byId(ids.stkCallback)?.req.url).to.match(/^\/api\/v1\/callbacks\/mpesa\/stk\/[0-9a-f-]{36}\?\[redacted\]$/);
      expect(byId(ids.b2cCallback)?.req.url).to.match(/^\/api\/v1\/callbacks\/mpesa\/b2c\/[0-9a-f-]{36}\/result\?\[redacted\]$/);
      expect(byId(ids.bearer)?.res.statusCode).to.equal(200);
      expect(byId(ids.bearer)?.req.route).to.equal('/api/v1/auth/me');
      expect(byId(ids.stkCallback)?.req.route).to.match(/^\/api\/v1\/callbacks\/mpesa\/stk\/:\w+$/);
      expect(byId(ids.queryElsewhere)?.req.url).to.equal('/api/v1/auth/me?limit=7&password=[redacted]&access_token=[redacted]');
      for (const entry of entries) expect(entry.responseTime).to.be.a('number');
    });
  });
});
