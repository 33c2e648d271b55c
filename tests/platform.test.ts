import { expect } from 'chai';
import { api, metricsAuth, newUser } from './support/api';
import { expectedRails } from './support/rails';
import { expectCompleteProblem as expectProblem } from './support/problems';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

describe('platform', () => {
  describe('when the health endpoints are probed', () => {
    it('then /healthz is 200 ok', async () => {
      const res = await api().get('/healthz');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
    });

    it('then /readyz is 200 with postgres, redis and temporal up', async () => {
      const res = await api().get('/readyz');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({
        status: 'ready',
        checks: { postgres: 'up', redis: 'up', temporal: 'up' },
        rails: expectedRails,
      });
    });
  });

  describe('when a route does not exist', () => {
    it('then it is a 404 problem carrying the request id', async () => {
      const res = await api().get('/api/v1/no-such-thing');
      const problem = expectProblem(res, 404, 'not_found');
      expect(problem.title).to.equal('Not found');
      expect(problem.type).to.equal('https://paygate.dev/problems/not-found');
      expect(problem).to.have.all.keys('type', 'title', 'status', 'detail', 'code', 'request_id');
    });

    it('then a path outside the api is a 404 problem too', async () => {
      const res = await api().post('/nowhere').send({ a: 1 });
      expectProblem(res, 404, 'not_found');
    });
  });

  describe('when a known path is called with the wrong method', () => {
    const cases: [string, string, string][] = [
      ['delete', '/api/v1/auth/login', 'POST'],
      ['get', '/api/v1/payments/initiate', 'POST'],
      ['put', '/api/v1/auth/me', 'GET'],
      ['post', '/api/v1/payments/orders/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'GET'],
    ];
    for (const [method, path, allowed] of cases) {
      it(`then ${method.toUpperCase()} ${path} is 405 with Allow: ${allowed}`, async () => {
        const res = await api()[method as 'get' | 'post' | 'put' | 'delete'](path);
        expectProblem(res, 405, 'method_not_allowed');
        const allow = String(res.headers.allow)
          .split(',')
          .map((m) => m.trim());
        expect(allow).to.include(allowed);
        expect(allow).not.to.include(method.toUpperCase());
      });
    }
  });

  describe('when the body is malformed', () => {
    it('then invalid JSON is a 400 malformed_json problem without parser internals', async () => {
      const res = await api().post('/api/v1/auth/login').set('Content-Type', 'application/json').send('{"email": "a@b.co", "password": ');
      const problem = expectProblem(res, 400, 'malformed_json');
      expect(problem.detail).to.equal('the request body is not valid JSON');
    });

    it('then a body over 64 KiB is a 413 payload_too_large problem', async () => {
      const body = JSON.stringify({ email: 'big@example.com', password: 'x'.repeat(65 * 1024), full_name: 'Big Body' });
      const res = await api().post('/api/v1/auth/register').set('Content-Type', 'application/json').send(body);
      expectProblem(res, 413, 'payload_too_large');
    });

    it('then a body just under 64 KiB is parsed (and judged on its content)', async () => {
      const body = JSON.stringify({ email: 'not-an-email', password: 'x'.repeat(60 * 1024), full_name: 'Big Body' });
      const res = await api().post('/api/v1/auth/register').set('Content-Type', 'application/json').send(body);
      expectProblem(res, 400, 'validation_failed');
    });
  });

  describe('when the request itself is broken', () => {
    it('then a JSON body that is not an object or array is a 400 malformed_json', async () => {
      const res = await api().post('/api/v1/auth/login').set('Content-Type', 'application/json').send('"just a string"');
      expectProblem(res, 400, 'malformed_json');
    });

    it('then a path with a malformed percent-encoding is a 400, not a 500', async () => {
      const res = await api().get('/api/v1/payments/orders/%E0%A4%A');
      const problem = expectProblem(res, 400, 'validation_failed');
      expect(problem.detail).to.equal('the request path is not valid percent-encoding');
    });

    it('then an unsupported body encoding is a 415 problem', async () => {
      const res = await api()
        .post('/api/v1/auth/login')
        .set('Content-Type', 'application/json; charset=iso-8859-1')
        .send(JSON.stringify({ email: 'a@b.co', password: 'whatever-password' }));
      expectProblem(res, 415, 'unsupported_media_type');
    });
  });

  describe('when a request carries an X-Request-Id', () => {
    it('then the same id is echoed on the response', async () => {
      const id = `client-${Date.now()}-abc.def:1`;
      const res = await api().get('/healthz').set('X-Request-Id', id);
      expect(res.status).to.equal(200);
      expect(res.headers['x-request-id']).to.equal(id);
    });

    it('then it is also the request_id of an error problem', async () => {
      const id = `trace-${Date.now()}`;
      const res = await api().get('/api/v1/missing').set('X-Request-Id', id);
      const problem = expectProblem(res, 404, 'not_found');
      expect(problem.request_id).to.equal(id);
    });

    it('then an unsafe id (spaces, newline-ish, too long) is replaced by a generated UUID', async () => {
      for (const given of ['has spaces in it', 'x'.repeat(200), '<script>']) {
        const res = await api().get('/healthz').set('X-Request-Id', given);
        expect(res.headers['x-request-id']).to.match(UUID);
        expect(res.headers['x-request-id']).not.to.equal(given);
      }
    });
  });

  describe('when a request carries no X-Request-Id', () => {
    it('then a fresh UUID is generated for every response', async () => {
      const first = await api().get('/healthz');
      const second = await api().get('/healthz');
      expect(first.headers['x-request-id']).to.match(UUID);
      expect(second.headers['x-request-id']).to.match(UUID);
      expect(first.headers['x-request-id']).not.to.equal(second.headers['x-request-id']);
    });
  });

  describe('when any response is sent', () => {
    it('then helmet security headers are present and x-powered-by is not', async () => {
      for (const res of [await api().get('/healthz'), await api().get('/api/v1/nope')]) {
        expect(res.headers['x-content-type-options']).to.equal('nosniff');
        expect(res.headers['content-security-policy']).to.be.a('string').and.include("default-src 'self'");
        expect(res.headers['strict-transport-security']).to.match(/max-age=\d+/);
        expect(res.headers['x-frame-options']).to.equal('SAMEORIGIN');
        expect(res.headers).not.to.have.property('x-powered-by');
      }
    });
  });

  describe('when the API description is fetched', () => {
    it('then /openapi.json is an OpenAPI 3 document with the auth and payment paths', async () => {
      const res = await api().get('/openapi.json');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.match(/^application\/json/);
      const doc = res.body as { openapi: string; info: { title: string }; paths: Record<string, Record<string, unknown>> };
      expect(doc.openapi).to.match(/^3\./);
      expect(doc.info.title).to.equal('Paygate API');
      expect(doc.paths).to.include.all.keys(
        '/auth/register',
        '/auth/login',
        '/auth/me',
        '/payments/initiate',
        '/payments/orders/{order_id}',
        '/payments/history',
      );
      expect(doc.paths['/auth/register']).to.have.property('post');
      expect(doc.paths['/auth/me']).to.have.property('get');
      expect(doc.paths['/payments/initiate']).to.have.property('post');
    });

    it('then every error response is problem+json, and operations behind a token document 401 (and 403 when role-bound)', async () => {
      interface Op {
        responses: Record<string, { content?: Record<string, unknown> }>;
        security?: Record<string, string[]>[];
      }
      const doc = (await api().get('/openapi.json')).body as { paths: Record<string, Record<string, Op>> };
      let secured = 0;
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          for (const [status, response] of Object.entries(op.responses)) {
            if (Number(status) >= 400 && response.content) {
              expect(Object.keys(response.content), `${method} ${path} ${status}`).to.deep.equal(['application/problem+json']);
            }
          }
          const roles = op.security?.find((s) => 'jwt' in s)?.jwt;
          if (roles === undefined) continue;
          secured += 1;
          expect(op.responses, `${method} ${path}`).to.have.property('401');
          if (roles.length > 0) expect(op.responses, `${method} ${path}`).to.have.property('403');
        }
      }
      expect(secured).to.be.greaterThan(10);
      const unauthenticated = await api().get('/api/v1/auth/me');
      expect(unauthenticated.status).to.equal(401);
      expect(unauthenticated.headers['content-type']).to.match(/^application\/problem\+json/);
    });

    it('then an order lists its nullable fields as nullable, as the API sends them', async () => {
      const doc = (await api().get('/openapi.json')).body as {
        components: { schemas: Record<string, { properties: Record<string, { nullable?: boolean }> }> };
      };
      for (const name of ['OrderSummary', 'OrderView']) {
        const props = doc.components.schemas[name]?.properties ?? {};
        for (const field of ['failure_code', 'failure_reason', 'rail_reference', 'description', 'reference']) {
          expect(props[field]?.nullable, `${name}.${field}`).to.equal(true);
        }
      }
    });

    it('then /docs/ serves the Swagger UI page', async () => {
      const res = await api().get('/docs/');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.match(/^text\/html/);
      expect(res.text).to.include('<html').and.include('swagger-ui');
      expect(res.text).to.include('Paygate API');
    });
  });

  describe('when metrics are scraped', () => {
    it('then /metrics is Prometheus text with the HTTP latency histogram labelled by route pattern', async () => {
      const user = await newUser();
      expect((await api().get('/api/v1/auth/me').set(user.auth)).status).to.equal(200);
      const res = await api().get('/metrics').set(metricsAuth());
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.match(/^text\/plain/);
      expect(res.text).to.include('# TYPE paygate_http_request_duration_seconds histogram');
      expect(res.text).to.match(
        /^paygate_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/auth\/me",status="200"\} [1-9]\d*$/m,
      );
      expect(res.text).to.include('paygate_process_cpu_user_seconds_total');
    });

    it('then an unmatched path is counted as "unmatched", never by its raw path', async () => {
      const raw = `/api/v1/raw-${Date.now()}`;
      expect((await api().get(raw)).status).to.equal(404);
      const res = await api().get('/metrics').set(metricsAuth());
      expect(res.text).to.match(/^paygate_http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} [1-9]\d*$/m);
      expect(res.text).not.to.include(raw);
    });

    it('then a request that fails inside a route keeps the full route pattern', async () => {
      expect((await api().get('/api/v1/auth/me')).status).to.equal(401);
      const res = await api().get('/metrics').set(metricsAuth());
      expect(res.text).to.match(
        /^paygate_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/auth\/me",status="401"\} [1-9]\d*$/m,
      );
      expect(res.text).not.to.match(/route="\/auth\/me"/);
    });
  });
});
