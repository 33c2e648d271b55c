import { expect } from 'chai';
import type { Express } from 'express';
import { createApp } from '../../api/app';
import { newUser } from '../support/api';
import { call, fillPath, isRouteFallback404, pathParameters, specOperations, UNKNOWN_ID, type Method } from './support';

/**
 * OWASP API9 (improper inventory): what Express serves under /api/v1 and what the OpenAPI description
 * documents are the same set of operations, in both directions.
 */

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  match(path: string): boolean;
}

/** Every (method, path) routed under /api/v1 in the application, found by walking Express's router. */
function expressOperations(app: Express): string[] {
  const root = (app as unknown as { router: { stack: Layer[] } }).router.stack;
  // The router mounted at /api/v1: a layer that matches the prefix and carries its own stack of routes.
  const mounted = root.filter((layer) => layer.handle.stack && layer.match('/api/v1') && !layer.match('/elsewhere'));
  expect(mounted, 'routers mounted at /api/v1').to.have.length.greaterThan(0);
  const found: string[] = [];
  for (const router of mounted) {
    for (const layer of router.handle.stack ?? []) {
      if (!layer.route) continue;
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on && method !== '_all') found.push(`${method.toUpperCase()} ${layer.route.path}`);
      }
    }
  }
  return found;
}

/** `/users/{user_id}/kyc` → `/users/:user_id/kyc`, as Express writes it. */
const expressPath = (specPath: string): string => specPath.replace(/\{(\w+)\}/g, ':$1');

describe('security: API inventory', () => {
  describe('when the routes Express serves under /api/v1 are compared with /openapi.json', () => {
    it('then every routed operation is documented and every documented operation is routed', async () => {
      const routed = expressOperations(createApp()).sort();
      const documented = (await specOperations()).map((op) => `${op.method.toUpperCase()} ${expressPath(op.path)}`).sort();
      expect(routed.length, 'routes found').to.be.greaterThan(20);
      expect(
        routed.filter((r) => !documented.includes(r)),
        'routed but missing from the spec',
      ).to.deep.equal([]);
      expect(
        documented.filter((d) => !routed.includes(d)),
        'in the spec but not routed',
      ).to.deep.equal([]);
      expect(new Set(routed).size, 'each operation routed once').to.equal(routed.length);
    });
  });

  describe('when every operation of the spec is called', () => {
    it('then each answers from its own handler, never the unknown-route 404 or a 405', async function () {
      this.timeout(60_000);
      const admin = await newUser({ roles: ['user', 'compliance', 'admin'] });
      const ops = await specOperations();
      for (const op of ops) {
        const values = Object.fromEntries(pathParameters(op.path).map((name) => [name, UNKNOWN_ID]));
        const res = await call(op.method, fillPath(op.path, values), {
          token: admin.token,
          body: op.method === 'get' || op.method === 'delete' ? undefined : {},
        });
        expect(isRouteFallback404(res), `${op.key} fell through to the unknown-route 404`).to.equal(false);
        expect(res.status, `${op.key} answered 405`).not.to.equal(405);
        // A documented 503 (a dependency the operation needs, e.g. the primary bank on the sandbox rail) is an answer too.
        const documented503 = res.status === 503 && op.responses.includes('503');
        expect(res.status < 500 || documented503, `${op.key} failed inside: ${res.text}`).to.equal(true);
      }
    });

    it('then a path that is in no spec entry is the unknown-route 404 (control for the check above)', async () => {
      for (const [method, path] of [
        ['get', '/payments/orderz'],
        ['post', '/admin/users'],
        ['get', '/users/me/secrets'],
      ] as [Method, string][]) {
        const res = await call(method, path);
        expect(isRouteFallback404(res), `${method} ${path}: ${res.text}`).to.equal(true);
      }
    });
  });
});
