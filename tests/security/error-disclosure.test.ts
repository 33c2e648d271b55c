import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DatabaseError } from 'sequelize';
import { User } from '../../models';
import { api, newUser, type TestUser } from '../support/api';
import { expectNoLeak, expectSafeProblem as expectProblem } from '../support/problems';

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
});
