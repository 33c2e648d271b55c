import { expect } from 'chai';
import type { Response } from 'supertest';
import { api, newUser } from '../support/api';
import { launchBrowser } from '../support/browser';
import { stack } from '../support/stack';

/** OWASP API8 (security misconfiguration): the headers every kind of answer carries. */

function expectBaseline(res: Response, what: string): void {
  expect(res.headers['x-content-type-options'], what).to.equal('nosniff');
  expect(res.headers, what).not.to.have.property('x-powered-by');
  const hsts = String(res.headers['strict-transport-security'] ?? '');
  const maxAge = Number(/max-age=(\d+)/.exec(hsts)?.[1] ?? 0);
  expect(maxAge, `${what}: HSTS max-age (${hsts})`).to.be.at.least(180 * 24 * 3600);
  expect(res.headers['x-frame-options'], what).to.be.oneOf(['DENY', 'SAMEORIGIN']);
  expect(res.headers['referrer-policy'], what).to.equal('no-referrer');
  expect(res.headers, `${what}: CORS is not opened to every origin`).not.to.have.property('access-control-allow-origin');
  expect(res.headers['x-request-id'], what).to.be.a('string');
}

/** The Content-Security-Policy as a map of directive → sources. */
function csp(res: Response): Record<string, string[]> {
  const header = String(res.headers['content-security-policy'] ?? '');
  return Object.fromEntries(
    header
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name, ...sources]) => [name, sources]),
  );
}

describe('security: response headers', () => {
  describe('when the API answers JSON', () => {
    it('then authenticated, public and error answers carry the baseline headers and Cache-Control: no-store', async () => {
      const user = await newUser();
      const answers: [string, Response][] = [
        ['GET /auth/me', await api().get('/api/v1/auth/me').set(user.auth)],
        ['GET /payments/history', await api().get('/api/v1/payments/history').set(user.auth)],
        ['POST /auth/login', await api().post('/api/v1/auth/login').send({ email: user.email, password: user.password })],
        ['GET /platforms/banks', await api().get('/api/v1/platforms/banks')],
        ['401', await api().get('/api/v1/auth/me')],
        ['404', await api().get('/api/v1/no/such/route')],
        ['400', await api().get('/api/v1/payments/history?limit=0').set(user.auth)],
      ];
      for (const [what, res] of answers) {
        expectBaseline(res, what);
        expect(res.headers['content-type'], what).to.match(/^application\/(problem\+)?json/);
        expect(res.headers['cache-control'], `${what}: Cache-Control`).to.equal('no-store');
      }
    });

    it('then the access token of a login is never cacheable', async () => {
      const user = await newUser();
      const res = await api().post('/api/v1/auth/login').send({ email: user.email, password: user.password });
      expect(res.status).to.equal(200);
      expect(res.headers['cache-control']).to.equal('no-store');
    });
  });

  describe('when the console is served', () => {
    it('then its Content-Security-Policy allows scripts from its own origin only and no framing', async () => {
      const res = await api().get('/');
      expect(res.status).to.equal(200);
      expectBaseline(res, 'GET /');
      const policy = csp(res);
      expect(policy['default-src']).to.deep.equal(["'self'"]);
      expect(policy['script-src']).to.deep.equal(["'self'"]);
      expect(policy['object-src']).to.deep.equal(["'none'"]);
      expect(policy['frame-ancestors']).to.be.an('array').and.not.include('*');
      expect(policy['base-uri']).to.deep.equal(["'self'"]);
      expect(policy['form-action']).to.deep.equal(["'self'"]);
      expect(Object.values(policy).flat(), 'no source is a wildcard').not.to.include('*');
    });

    it('then its script is served as JavaScript that is not sniffed', async () => {
      const res = await api().get('/console/main.js');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.match(/javascript/);
      expectBaseline(res, 'GET /console/main.js');
    });
  });

  describe('when the docs and the machine-readable description are served', () => {
    it('then /docs/ and /openapi.json carry the same policy', async () => {
      for (const path of ['/docs/', '/openapi.json']) {
        const res = await api().get(path);
        expect(res.status, path).to.equal(200);
        expectBaseline(res, path);
        expect(csp(res)['script-src'], path).to.deep.equal(["'self'"]);
      }
    });
  });

  describe('when the console and the docs are opened in a browser under that policy', () => {
    it('then both render and the browser reports no Content-Security-Policy violation', async function () {
      this.timeout(60_000);
      const browser = await launchBrowser();
      try {
        const page = await browser.context.newPage();
        const violations: string[] = [];
        page.on('console', (message) => {
          if (/Content Security Policy|Content-Security-Policy/i.test(message.text())) violations.push(message.text());
        });
        await page.goto(`${stack.baseUrl}/docs/`);
        await page.locator('.swagger-ui .info .title').filter({ hasText: 'Paygate API' }).waitFor({ timeout: 20_000 });
        await page.goto(`${stack.baseUrl}/`);
        await page.locator('section#login').waitFor({ timeout: 20_000 });
        expect(violations).to.deep.equal([]);
      } finally {
        await browser.close();
      }
    });
  });

  describe('when the queue dashboard is asked for without a token', () => {
    it('then it is a 401 with the baseline headers, and nothing of the dashboard', async () => {
      const res = await api().get('/admin/queues');
      expect(res.status).to.equal(401);
      expectBaseline(res, 'GET /admin/queues');
      expect(res.text).not.to.include('Paygate queues');
    });
  });
});
