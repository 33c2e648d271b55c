import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { database } from '../../platform/database';
import { api, newUser, type TestUser } from '../support/api';
import { withEnv } from '../support/config-env';
import { rows } from '../support/db';
import { expectSafeProblem as expectProblem } from '../support/problems';
import { awayFromQuotaWindowEnd } from '../support/wait';

/**
 * Least privilege for API keys (docs/access.md#what-a-key-can-never-do), read as an attacker would: a key
 * reaches no further than its owner meant. A key never sees another credential's stored answers nor a secret
 * twice, never makes or revokes keys, never holds a staff scope nor acts with its owner's staff roles, never
 * opens the queue dashboard, and more keys never mean more requests or more keys than the bound.
 */

interface CreatedKey {
  key_id: string;
  secret: string;
  scopes: string[];
}

const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });

async function createKey(owner: TestUser, scopes: string[], extra: Record<string, unknown> = {}): Promise<CreatedKey> {
  const res = await api()
    .post('/api/v1/api-keys')
    .set(owner.auth)
    .send({ name: 'least privilege', mode: 'test', scopes, ...extra });
  expect(res.status, res.text).to.equal(201);
  return res.body as CreatedKey;
}

/** A key as it could have been made before the rules of this suite: scopes written straight into its row. */
async function widen(key: CreatedKey, scopes: string[]): Promise<void> {
  await database().query('UPDATE api_keys SET scopes = scopes || CAST(:scopes AS text[]) WHERE id = :id', {
    replacements: { id: key.key_id, scopes: `{${scopes.join(',')}}` },
  });
}

const storedAnswers = (key: string) =>
  rows<{ scope: string; response_status: number | null; response_body: string | null }>(
    'SELECT scope, response_status, response_body FROM idempotency_keys WHERE key = :key',
    { key },
  );

describe('security: least privilege for API keys', function () {
  this.timeout(60_000);

  describe('when a narrow key of the same user repeats a call that created a secret, with its Idempotency-Key', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
    });
    after(() => restore());

    it('API2:2023 Broken Authentication — then a replay of POST /api-keys gives an events:read key no secret (403), and the record keeps none', async () => {
      const owner = await newUser({ funded: false });
      const narrow = await createKey(owner, ['events:read']);
      const idempotencyKey = randomUUID();
      const body = { name: 'broad', mode: 'test', scopes: ['payments:write', 'wallets:write'] };
      const first = await api().post('/api/v1/api-keys').set(owner.auth).set('Idempotency-Key', idempotencyKey).send(body);
      expect(first.status, first.text).to.equal(201);
      const broad = first.body as CreatedKey;

      const repeated = await api().post('/api/v1/api-keys').set(bearer(narrow.secret)).set('Idempotency-Key', idempotencyKey).send(body);
      expectProblem(repeated, 403, 'forbidden');
      expect(repeated.text).to.not.include(broad.secret);
      expect(repeated.headers['idempotent-replayed']).to.equal(undefined);

      const stored = await storedAnswers(idempotencyKey);
      expect(stored.map((s) => s.scope)).to.deep.equal([`user:${owner.id}`]);
      expect(JSON.stringify(stored)).to.not.include(broad.secret.slice(8));
    });

    it('API2:2023 Broken Authentication — then a replay of POST /webhooks/endpoints gives an events:read key no whsec_ secret (403)', async () => {
      const owner = await newUser({ funded: false });
      const narrow = await createKey(owner, ['events:read']);
      const writer = await createKey(owner, ['webhooks:write']);
      const idempotencyKey = randomUUID();
      const body = { url: 'http://127.0.0.1:9/hooks' };
      const first = await api()
        .post('/api/v1/webhooks/endpoints')
        .set(bearer(writer.secret))
        .set('Idempotency-Key', idempotencyKey)
        .send(body);
      expect(first.status, first.text).to.equal(201);
      const { secret } = first.body as { secret: string };
      expect(secret).to.match(/^whsec_/);

      const repeated = await api()
        .post('/api/v1/webhooks/endpoints')
        .set(bearer(narrow.secret))
        .set('Idempotency-Key', idempotencyKey)
        .send(body);
      expectProblem(repeated, 403, 'forbidden');
      expect(repeated.text).to.not.include(secret);
      expect(JSON.stringify(await storedAnswers(idempotencyKey))).to.not.include(secret);
    });

    it('API1:2023 Broken Object Level Authorization — then another key of the same user holding the scope never gets the first key’s answer: the call runs as its own', async () => {
      const owner = await newUser({ funded: false });
      const [first, second] = [await createKey(owner, ['webhooks:write']), await createKey(owner, ['webhooks:write'])];
      const idempotencyKey = randomUUID();
      const body = { url: 'http://127.0.0.1:9/hooks' };
      const send = (key: CreatedKey) =>
        api().post('/api/v1/webhooks/endpoints').set(bearer(key.secret)).set('Idempotency-Key', idempotencyKey).send(body);
      const a = await send(first);
      const b = await send(second);
      expect([a.status, b.status], b.text).to.deep.equal([201, 201]);
      expect(b.headers['idempotent-replayed']).to.equal(undefined);
      expect((b.body as { endpoint_id: string }).endpoint_id).to.not.equal((a.body as { endpoint_id: string }).endpoint_id);
      expect((b.body as { secret: string }).secret).to.not.equal((a.body as { secret: string }).secret);
      expect((await storedAnswers(idempotencyKey)).map((s) => s.scope).sort()).to.deep.equal(
        [`key:${first.key_id}`, `key:${second.key_id}`].sort(),
      );
    });
  });

  describe('when the same person repeats a call that created a key, with the same Idempotency-Key', () => {
    it('API3:2023 Broken Object Property Level Authorization — then the replay is 409 secret_not_replayed naming the key, without its secret', async () => {
      const owner = await newUser({ funded: false });
      const idempotencyKey = randomUUID();
      const body = { name: 'retried', mode: 'test', scopes: ['wallets:read'] };
      const first = await api().post('/api/v1/api-keys').set(owner.auth).set('Idempotency-Key', idempotencyKey).send(body);
      expect(first.status, first.text).to.equal(201);
      const created = first.body as CreatedKey;

      const replayed = await api().post('/api/v1/api-keys').set(owner.auth).set('Idempotency-Key', idempotencyKey).send(body);
      const problem = expectProblem(replayed, 409, 'secret_not_replayed');
      expect(replayed.headers['idempotent-replayed']).to.equal('true');
      expect(problem.detail).to.include(created.key_id);
      expect(replayed.text).to.not.include(created.secret);
      // One key was made, not two; and its secret still works.
      expect(await rows('SELECT id FROM api_keys WHERE user_id = :id', { id: owner.id })).to.have.length(1);
      expect((await api().get('/api/v1/wallets').set(bearer(created.secret))).status).to.equal(200);
    });
  });

  describe('when a staff member who has since lost the role repeats a staff call with its Idempotency-Key', () => {
    it('API5:2023 Broken Function Level Authorization — then the role is checked before any replay: 403, not the stored answer', async () => {
      const officer = await newUser({ funded: false, roles: ['user', 'compliance'] });
      const idempotencyKey = randomUUID();
      const body = { type: 'email', value: `listed-${randomUUID()}@example.invalid`, reason: 'least privilege', source: 'manual' };
      const send = () => api().post('/api/v1/compliance/blocklist').set(officer.auth).set('Idempotency-Key', idempotencyKey).send(body);
      const first = await send();
      expect(first.status, first.text).to.equal(201);
      // Control: while the role holds, the repeat is a replay.
      expect((await send()).headers['idempotent-replayed']).to.equal('true');

      await database().query(`UPDATE users SET roles = ARRAY['user'] WHERE id = :id`, { replacements: { id: officer.id } });
      const repeated = await send();
      expectProblem(repeated, 403, 'forbidden');
      expect(repeated.headers['idempotent-replayed']).to.equal(undefined);
    });
  });

  describe('when a key tries to make or revoke keys', () => {
    it('API5:2023 Broken Function Level Authorization — then it is 403 even holding api-keys:write, and its owner signed in still can', async () => {
      const owner = await newUser({ funded: false });
      const key = await createKey(owner, ['api-keys:read', 'wallets:read']);
      await widen(key, ['api-keys:write']);

      const made = await api()
        .post('/api/v1/api-keys')
        .set(bearer(key.secret))
        .send({ name: 'child', mode: 'test', scopes: ['wallets:read'] });
      expectProblem(made, 403, 'forbidden');
      expectProblem(await api().delete(`/api/v1/api-keys/${key.key_id}`).set(bearer(key.secret)), 403, 'forbidden');
      expect(await rows('SELECT id FROM api_keys WHERE user_id = :id AND revoked_at IS NULL', { id: owner.id })).to.have.length(1);

      // The person, signed in, still makes and revokes keys.
      const child = await createKey(owner, ['wallets:read']);
      expect((await api().delete(`/api/v1/api-keys/${child.key_id}`).set(owner.auth)).status).to.equal(204);
    });
  });

  describe('when a staff member asks for a key with staff scopes, or uses a key made with them before', () => {
    it('API5:2023 Broken Function Level Authorization — then the scopes are 422 scope_not_grantable naming scopes, and an older key acts as a merchant only (403)', async () => {
      const officer = await newUser({ funded: false, roles: ['user', 'compliance', 'admin'] });
      for (const scope of ['compliance:write', 'sandbox:write', 'operations:write', 'api-keys:write']) {
        const res = await api()
          .post('/api/v1/api-keys')
          .set(officer.auth)
          .send({ name: 'staff', mode: 'test', scopes: ['payments:read', scope] });
        const problem = expectProblem(res, 422, 'scope_not_grantable', scope);
        expect(problem.errors?.map((e) => e.field)).to.deep.equal(['scopes']);
      }

      const key = await createKey(officer, ['users:read', 'appeals:read']);
      await widen(key, ['compliance:read', 'compliance:write', 'sandbox:write']);
      expectProblem(await api().get('/api/v1/compliance/blocklist').set(bearer(key.secret)), 403, 'forbidden');
      expectProblem(
        await api().post('/api/v1/compliance/blocklist').set(bearer(key.secret)).send({ name: 'Someone Else', reason: 'test' }),
        403,
        'forbidden',
      );
      // users:read does not make the officer's key staff: the list of users is for staff signed in.
      expectProblem(await api().get('/api/v1/users').set(bearer(key.secret)), 403, 'forbidden');
      expect((await api().get('/api/v1/users').set(officer.auth)).status).to.equal(200);
    });
  });

  describe('when a user makes more keys than API_KEYS_MAX_PER_USER', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ API_KEYS_MAX_PER_USER: '5' });
    });
    after(() => restore());

    it('API4:2023 Unrestricted Resource Consumption — then the one past the bound is 422 limit_exceeded, even sent all at once, and a revoked key frees its place', async () => {
      const owner = await newUser({ funded: false });
      await createKey(owner, ['wallets:read']);
      const burst = await Promise.all(
        Array.from({ length: 8 }, () =>
          api()
            .post('/api/v1/api-keys')
            .set(owner.auth)
            .send({ name: 'burst', mode: 'test', scopes: ['wallets:read'] }),
        ),
      );
      expect(burst.map((r) => r.status).sort()).to.deep.equal([201, 201, 201, 201, 422, 422, 422, 422]);
      for (const refused of burst.filter((r) => r.status === 422)) expectProblem(refused, 422, 'limit_exceeded');
      expect(await rows('SELECT id FROM api_keys WHERE user_id = :id', { id: owner.id })).to.have.length(5);

      const revoked = (burst.find((r) => r.status === 201)?.body as CreatedKey).key_id;
      expect((await api().delete(`/api/v1/api-keys/${revoked}`).set(owner.auth)).status).to.equal(204);
      await createKey(owner, ['wallets:read']);
      expectProblem(
        await api()
          .post('/api/v1/api-keys')
          .set(owner.auth)
          .send({ name: 'one more', mode: 'test', scopes: ['wallets:read'] }),
        422,
        'limit_exceeded',
      );
    });

    it('API4:2023 Unrestricted Resource Consumption — then the default bound is 20: the 21st key is 422', async () => {
      const back = withEnv({ API_KEYS_MAX_PER_USER: '20' });
      try {
        const owner = await newUser({ funded: false });
        for (let i = 0; i < 20; i += 1) await createKey(owner, ['wallets:read']);
        expectProblem(
          await api()
            .post('/api/v1/api-keys')
            .set(owner.auth)
            .send({ name: 'twenty-first', mode: 'test', scopes: ['wallets:read'] }),
          422,
          'limit_exceeded',
        );
      } finally {
        back();
      }
    });
  });

  describe('when one account spreads its requests over several keys', () => {
    let restore: () => void;
    let owner: TestUser;
    let keys: CreatedKey[];
    let other: TestUser;
    before(async () => {
      owner = await newUser({ funded: false });
      keys = [await createKey(owner, ['wallets:read']), await createKey(owner, ['wallets:read'])];
      other = await newUser({ funded: false });
      restore = withEnv({ RATE_LIMIT_API_PER_ACCOUNT_PER_MINUTE: '6' });
    });
    after(() => restore());

    it('API4:2023 Unrestricted Resource Consumption — then they share the account quota: past it every key and the login get 429, and other accounts do not', async () => {
      await awayFromQuotaWindowEnd();
      let accountLeft = Number.POSITIVE_INFINITY;
      let i = 0;
      for (; accountLeft > 0 && i < 10; i += 1) {
        const res = await api()
          .get('/api/v1/wallets')
          .set(bearer(keys[i % 2].secret));
        expect(res.status, res.text).to.equal(200);
        expect(res.headers['ratelimit-policy']).to.match(/"account";q=6;w=60/);
        const left = Number(/"account";r=(\d+)/.exec(String(res.headers.ratelimit))?.[1]);
        expect(left).to.be.below(accountLeft);
        // Each key's own quota is far from used up: it is the account's that runs out.
        expect(Number(/"default";r=(\d+)/.exec(String(res.headers.ratelimit))?.[1])).to.be.above(100);
        accountLeft = left;
      }
      expect(accountLeft).to.equal(0);
      for (const auth of [bearer(keys[0].secret), bearer(keys[1].secret), owner.auth]) {
        const limited = await api().get('/api/v1/wallets').set(auth);
        expectProblem(limited, 429, 'rate_limited');
        expect(Number(limited.headers['retry-after'])).to.be.within(1, 60);
      }
      expect((await api().get('/api/v1/wallets').set(other.auth)).status).to.equal(200);
    });
  });

  describe('when a key past its expires_at is used', () => {
    it('API2:2023 Broken Authentication — then it is refused with 401, like a revoked key', async () => {
      const owner = await newUser({ funded: false });
      const key = await createKey(owner, ['wallets:read'], { expires_at: new Date(Date.now() + 60_000).toISOString() });
      expect((await api().get('/api/v1/wallets').set(bearer(key.secret))).status).to.equal(200);
      await database().query(
        `UPDATE api_keys SET created_at = now() - interval '1 hour', expires_at = now() - interval '1 minute' WHERE id = :id`,
        {
          replacements: { id: key.key_id },
        },
      );
      expectProblem(await api().get('/api/v1/wallets').set(bearer(key.secret)), 401, 'unauthenticated');
    });
  });

  describe("when an admin's key is presented to the queue dashboard", () => {
    it('API5:2023 Broken Function Level Authorization — then it is refused (403) as a query token, a header or a cookie, and no cookie is set; the admin signed in still opens it', async () => {
      const admin = await newUser({ funded: false, roles: ['user', 'compliance', 'admin'] });
      const key = await createKey(admin, ['events:read']);
      const server = api();
      const viaQuery = await server.get(`/admin/queues?access_token=${key.secret}`).redirects(0);
      expect(viaQuery.status, viaQuery.text).to.equal(403);
      expect(viaQuery.headers['set-cookie']).to.equal(undefined);
      expect((await server.get('/admin/queues/api/queues').set(bearer(key.secret))).status).to.equal(403);
      expect((await server.get('/admin/queues/api/queues').set('Cookie', `paygate_admin_token=${key.secret}`)).status).to.equal(403);

      const signedIn = await server.get(`/admin/queues?access_token=${admin.token}`).redirects(0);
      expect(signedIn.status).to.equal(303);
    });
  });
});
