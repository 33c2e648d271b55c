import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startRailFakes, type RailFakes } from './fakes/rails';
import { api, mpesaPayment, newUser, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { database } from '../platform/database';
import { rows } from './support/db';
import { realRails } from './support/rails';
import { awayFromQuotaWindowEnd, until } from './support/wait';

/**
 * API keys (docs/access.md#api-keys): created with the secret shown once and only a hash stored, used as
 * `Authorization: Bearer sk_…` within their scopes and mode, and revoked at once.
 */

interface CreatedKey {
  key_id: string;
  name: string;
  mode: string;
  prefix: string;
  scopes: string[];
  secret: string;
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at: string | null;
}

const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });

async function createKey(owner: TestUser, body: Record<string, unknown>, auth = owner.auth): Promise<CreatedKey> {
  const res = await api()
    .post('/api/v1/api-keys')
    .set(auth)
    .send({ name: 'shop backend', mode: 'test', ...body });
  expect(res.status, res.text).to.equal(201);
  return res.body as CreatedKey;
}

const initiateWith = (secret: string, body: Record<string, unknown> = mpesaPayment()) =>
  api().post('/api/v1/payments/initiate').set(bearer(secret)).set('Idempotency-Key', randomUUID()).send(body);

describe('API keys', () => {
  describe('when a user creates a key', () => {
    it('then the secret is shown once, lists show only its prefix, and only a hash of it is stored', async () => {
      const owner = await newUser({ funded: false });
      const key = await createKey(owner, { scopes: ['wallets:read', 'payments:read'] });
      expect(key.secret).to.match(/^sk_test_[A-Za-z0-9_-]{43}$/);
      expect(key).to.include({ name: 'shop backend', mode: 'test', prefix: key.secret.slice(0, 16), revoked_at: null });
      expect(key.scopes).to.deep.equal(['wallets:read', 'payments:read']);

      const listed = await api().get('/api/v1/api-keys').set(owner.auth);
      expect(listed.status).to.equal(200);
      expect(listed.text).to.not.include(key.secret);
      expect(listed.text).to.not.include(key.secret.slice(16));
      expect((listed.body as { data: { key_id: string }[] }).data.map((k) => k.key_id)).to.deep.equal([key.key_id]);

      const [stored] = await rows<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = :id', { id: key.key_id });
      expect(JSON.stringify(stored)).to.not.include(key.secret.slice(16));
      expect(Buffer.from(stored.secret_hash as Buffer).equals(createHash('sha256').update(key.secret).digest())).to.equal(true);
    });
  });

  describe('when a request comes with a key', () => {
    it("then it acts as the key's owner, and the key's last use is noted", async () => {
      const owner = await newUser({ funded: false });
      const key = await createKey(owner, { scopes: ['wallets:read'] });
      const res = await api().get('/api/v1/wallets').set(bearer(key.secret));
      expect(res.status, res.text).to.equal(200);
      expect((res.body as { user_id: string }).user_id).to.equal(owner.id);
      // The last use is noted beside the request, not before its answer: wait (briefly) for it.
      const lastUsed = await until(
        "the key's last use to be noted",
        async () => {
          const [used] = await rows<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys WHERE id = :id', { id: key.key_id });
          return used.last_used_at ?? undefined;
        },
        5_000,
      );
      expect(lastUsed).to.be.instanceOf(Date);
    });
  });

  describe('when a key is revoked', () => {
    it('then its very next request is refused with 401, and revoking it again changes nothing', async () => {
      const owner = await newUser({ funded: false });
      const key = await createKey(owner, { scopes: ['wallets:read'] });
      expect((await api().get('/api/v1/wallets').set(bearer(key.secret))).status).to.equal(200);
      expect((await api().delete(`/api/v1/api-keys/${key.key_id}`).set(owner.auth)).status).to.equal(204);
      const refused = await api().get('/api/v1/wallets').set(bearer(key.secret));
      expect(refused.status, refused.text).to.equal(401);
      expect(refused.headers['content-type']).to.match(/^application\/problem\+json/);
      expect((await api().delete(`/api/v1/api-keys/${key.key_id}`).set(owner.auth)).status).to.equal(204);
      const [listed] = ((await api().get('/api/v1/api-keys').set(owner.auth)).body as { data: CreatedKey[] }).data;
      expect(listed.revoked_at).to.be.a('string');
    });
  });

  describe('when a key scoped payments:read tries to initiate', () => {
    it('then it is refused with 403 naming the scope, and no order is made', async () => {
      const owner = await newUser();
      const key = await createKey(owner, { scopes: ['payments:read'] });
      const res = await initiateWith(key.secret);
      expect(res.status, res.text).to.equal(403);
      expect((res.body as { detail: string }).detail).to.include('payments:write');
      expect(await rows('SELECT id FROM orders WHERE user_id = :id', { id: owner.id })).to.deep.equal([]);
      // It still reads what it is scoped to.
      expect((await api().get('/api/v1/payments/history').set(bearer(key.secret))).status).to.equal(200);
    });
  });

  describe('when a key is forged, mangled or someone else’s', () => {
    it('then a wrong secret behind a real prefix, or a malformed key, is 401; another user cannot revoke it', async () => {
      const owner = await newUser({ funded: false });
      const key = await createKey(owner, { scopes: ['wallets:read'] });
      const last = key.secret.at(-1) === 'A' ? 'B' : 'A';
      for (const forged of [
        `${key.secret.slice(0, -1)}${last}`,
        key.secret.replace('sk_test_', 'sk_live_'),
        'sk_test_short',
        `${key.secret}x`,
      ]) {
        const res = await api().get('/api/v1/wallets').set(bearer(forged));
        expect(res.status, forged).to.equal(401);
      }
      const other = await newUser({ funded: false });
      expect((await api().delete(`/api/v1/api-keys/${key.key_id}`).set(other.auth)).status).to.equal(404);
      expect((await api().get('/api/v1/wallets').set(bearer(key.secret))).status).to.equal(200);
    });
  });

  describe('when a key asks for a key, or to revoke one', () => {
    it('then it is refused with 403, even holding a key scope from before, and nothing is made or revoked', async () => {
      const owner = await newUser({ funded: false });
      const key = await createKey(owner, { scopes: ['api-keys:read', 'wallets:read'] });
      // A key made before keys lost api-keys:write: its scope no longer opens key management.
      await database().query(`UPDATE api_keys SET scopes = array_append(scopes, 'api-keys:write') WHERE id = :id`, {
        replacements: { id: key.key_id },
      });
      const made = await api()
        .post('/api/v1/api-keys')
        .set(bearer(key.secret))
        .send({ name: 'reader', mode: 'test', scopes: ['wallets:read'] });
      expect(made.status, made.text).to.equal(403);
      const revoked = await api().delete(`/api/v1/api-keys/${key.key_id}`).set(bearer(key.secret));
      expect(revoked.status, revoked.text).to.equal(403);
      const listed = ((await api().get('/api/v1/api-keys').set(bearer(key.secret))).body as { data: CreatedKey[] }).data;
      expect(listed.map((k) => [k.key_id, k.revoked_at])).to.deep.equal([[key.key_id, null]]);
    });
  });

  describe('when a key is made with an expiry', () => {
    it('then it works until then, and is refused like a revoked key after', async () => {
      const owner = await newUser({ funded: false });
      const expiresAt = new Date(Date.now() + 60 * 60_000).toISOString();
      const key = await createKey(owner, { scopes: ['wallets:read'], expires_at: expiresAt });
      expect(key.expires_at).to.equal(expiresAt);
      expect((await api().get('/api/v1/wallets').set(bearer(key.secret))).status).to.equal(200);
      await database().query(
        `UPDATE api_keys SET expires_at = now() - interval '1 second', created_at = now() - interval '1 hour' WHERE id = :id`,
        { replacements: { id: key.key_id } },
      );
      const refused = await api().get('/api/v1/wallets').set(bearer(key.secret));
      expect(refused.status, refused.text).to.equal(401);
    });

    it('then an expiry now or in the past, or not a date-time, is a 400 naming expires_at', async () => {
      const owner = await newUser({ funded: false });
      for (const expires_at of [new Date(Date.now() - 1000).toISOString(), '2020-01-01T00:00:00Z', 'tomorrow']) {
        const res = await api()
          .post('/api/v1/api-keys')
          .set(owner.auth)
          .send({ name: 'k', mode: 'test', scopes: ['wallets:read'], expires_at });
        expect(res.status, expires_at).to.equal(400);
        expect(res.text).to.include('expires_at');
      }
    });
  });

  describe('when the scopes, mode or name are not valid', () => {
    it('then it is a 400 naming the field', async () => {
      const owner = await newUser({ funded: false });
      for (const [body, field] of [
        [{ name: 'k', mode: 'test', scopes: ['payments:everything'] }, 'scopes'],
        [{ name: 'k', mode: 'test', scopes: [] }, 'scopes'],
        [{ name: 'k', mode: 'prod', scopes: ['wallets:read'] }, 'mode'],
        [{ name: '', mode: 'test', scopes: ['wallets:read'] }, 'name'],
      ] as const) {
        const res = await api().post('/api/v1/api-keys').set(owner.auth).send(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.text).to.include(field);
      }
    });
  });

  describe('when a key is asked with a staff scope', () => {
    it('then it is a 422 scope_not_grantable naming scopes, and no key is made', async () => {
      const owner = await newUser({ funded: false, roles: ['user', 'compliance', 'admin'] });
      for (const scope of ['compliance:read', 'compliance:write', 'operations:read', 'sandbox:write', 'api-keys:write']) {
        const res = await api()
          .post('/api/v1/api-keys')
          .set(owner.auth)
          .send({ name: 'staff', mode: 'test', scopes: ['wallets:read', scope] });
        expect(res.status, scope).to.equal(422);
        expect(res.body).to.include({ code: 'scope_not_grantable' });
        expect((res.body as { errors: { field: string }[] }).errors.map((e) => e.field)).to.deep.equal(['scopes']);
      }
      expect(await rows('SELECT id FROM api_keys WHERE user_id = :id', { id: owner.id })).to.deep.equal([]);
    });
  });

  describe("when a staff member's key (made before staff scopes were refused) calls a staff operation", () => {
    it('then the key acts as a merchant: 403, whatever scopes it carries', async () => {
      const owner = await newUser({ funded: false, roles: ['user', 'compliance', 'admin'] });
      const key = await createKey(owner, { scopes: ['users:read'] });
      await database().query(`UPDATE api_keys SET scopes = scopes || ARRAY['compliance:read', 'operations:read'] WHERE id = :id`, {
        replacements: { id: key.key_id },
      });
      for (const path of ['/api/v1/compliance/blocklist', '/api/v1/operations/unresolved-payouts', '/api/v1/users']) {
        const res = await api().get(path).set(bearer(key.secret));
        expect(res.status, `${path}: ${res.text}`).to.equal(403);
      }
      // Its owner's own things it still reads.
      expect((await api().get(`/api/v1/users/${owner.id}`).set(bearer(key.secret))).status).to.equal(200);
    });
  });

  describe('when a test key meets a real rail', () => {
    let fakes: RailFakes | undefined;
    let restore: (() => void) | undefined;
    before(async () => {
      if (realRails) return;
      fakes = await startRailFakes();
      restore = withEnv(fakes.env);
    });
    after(async () => {
      restore?.();
      await fakes?.close();
    });

    it('then a payout and a deposit are refused with 403 before anything moves', async () => {
      const owner = await newUser();
      const key = await createKey(owner, { scopes: ['payments:write', 'wallets:write', 'wallets:read'] });
      const payout = await initiateWith(key.secret);
      expect(payout.status, payout.text).to.equal(403);
      expect((payout.body as { detail: string }).detail).to.match(/test API key reaches only sandbox rails/);
      const deposit = await api()
        .post('/api/v1/wallets/deposits')
        .set(bearer(key.secret))
        .set('Idempotency-Key', randomUUID())
        .send({ amount: '100.00', currency: 'KES', method: 'mobile_money', phone: '+254712345678' });
      expect(deposit.status, deposit.text).to.equal(403);
      expect((await api().get('/api/v1/wallets/USDT/deposit-address').set(bearer(key.secret))).status).to.equal(403);
      expect(await rows('SELECT id FROM orders WHERE user_id = :id', { id: owner.id })).to.deep.equal([]);
    });
  });

  describe('when keys of each mode pay out on the rails this suite runs', () => {
    it('then the mode that matches the rails pays out, and the other is refused with 403', async () => {
      const [reaches, refused] = realRails ? (['live', 'test'] as const) : (['test', 'live'] as const);
      const owner = await newUser();
      const matching = await createKey(owner, { mode: reaches, scopes: ['payments:write'] });
      const accepted = await initiateWith(matching.secret);
      expect(accepted.status, accepted.text).to.equal(202);
      const other = await createKey(owner, { mode: refused, scopes: ['payments:write'] });
      const res = await initiateWith(other.secret);
      expect(res.status, res.text).to.equal(403);
      expect((res.body as { detail: string }).detail).to.include(`${refused} API key reaches only`);
    });
  });

  describe('when a key uses up its quota', () => {
    let restore: () => void;
    let key: CreatedKey;
    let other: TestUser;
    before(async () => {
      // Made before the quota shrinks: registering and signing in count against the address.
      const owner = await newUser({ funded: false });
      key = await createKey(owner, { scopes: ['wallets:read'] });
      other = await newUser({ funded: false });
      restore = withEnv({ RATE_LIMIT_API_PER_MINUTE: '3' });
    });
    after(() => restore());

    it('then each answer says what is left, the fourth request is 429 with Retry-After, and other callers are not held back', async () => {
      await awayFromQuotaWindowEnd();
      const left: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await api().get('/api/v1/wallets').set(bearer(key.secret));
        expect(res.status, res.text).to.equal(200);
        expect(res.headers['ratelimit-policy']).to.match(/^"default";q=3;w=60, "account";q=\d+;w=60$/);
        left.push(/"default";r=(\d+)/.exec(String(res.headers.ratelimit))?.[1] ?? '?');
      }
      expect(left).to.deep.equal(['2', '1', '0']);
      const limited = await api().get('/api/v1/wallets').set(bearer(key.secret));
      expect(limited.status, limited.text).to.equal(429);
      expect(limited.headers['content-type']).to.match(/^application\/problem\+json/);
      expect(Number(limited.headers['retry-after'])).to.be.within(1, 60);
      expect(limited.headers.ratelimit).to.match(/^"default";r=0;t=\d+, "account";r=\d+;t=\d+$/);
      // Another caller has a quota of its own.
      expect((await api().get('/api/v1/wallets').set(other.auth)).status).to.equal(200);
    });
  });

  describe('when the API description is read', () => {
    it('then both schemes are documented, and every operation behind a login takes a key with its scope but for those no key may call', async () => {
      const spec = (await api().get('/openapi.json')).body as {
        components: { securitySchemes: Record<string, { scheme: string }> };
        paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
      };
      expect(spec.components.securitySchemes).to.have.keys('jwt', 'api_key');
      const initiate = spec.paths['/payments/initiate'].post.security;
      expect(initiate).to.deep.include({ api_key: ['payments:write'] });
      for (const [path, item] of Object.entries(spec.paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (!op.security?.some((s) => 'jwt' in s)) continue;
          const keysRefused = /^\/(compliance|operations|sandbox)\//.test(path) || (path.startsWith('/api-keys') && method !== 'get');
          expect(
            op.security.some((s) => 'api_key' in s),
            `${method.toUpperCase()} ${path}`,
          ).to.equal(!keysRefused);
        }
      }
    });
  });
});
