import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { apiKeyHash, keyPrefix } from '../../domain/api-keys';
import { createApiKeyWithin } from '../../repositories/api-keys';
import { inTransaction } from '../../repositories/transaction';
import { ensureAdmin } from '../../services/auth-service';
import { newUser, type TestUser } from '../support/api';
import { rows } from '../support/db';
import { expectSafeProblem as expectProblem } from '../support/problems';
import { call } from './support';

/**
 * The audit trail of staff actions (docs/compliance.md#audit-trail) read as an attacker would: who may read
 * it, what it may never carry, and whether anyone can make it say something else afterwards.
 */

interface AuditPage {
  data: { actor: { user_id: string | null }; action: string; subject: { id: string } }[];
}

/** A key of `owner` with `scopes`, stored as a key made before staff scopes were refused to keys would be. */
async function keyOf(owner: TestUser, scopes: string[]): Promise<string> {
  const random = randomBytes(32).toString('base64url');
  const secret = `sk_test_${random}`;
  await inTransaction((tx) =>
    createApiKeyWithin(
      {
        id: randomUUID(),
        userId: owner.id,
        name: 'audit reader',
        mode: 'test',
        prefix: keyPrefix('test', random),
        secretHash: apiKeyHash(secret),
        scopes,
        expiresAt: null,
      },
      20,
      tx,
    ),
  );
  return secret;
}

describe('security: the audit trail', () => {
  let admin: TestUser;
  before(async () => {
    admin = await newUser({ roles: ['user', 'compliance', 'admin'], funded: false });
  });

  describe('API5:2023 Broken Function Level Authorization — when anyone but an admin, with their login, reads the trail', () => {
    it('then anonymous is 401, a user and a compliance officer are 403, and only the admin reads it', async () => {
      expectProblem(await call('get', '/compliance/audit'), 401, 'unauthenticated');
      const user = await newUser({ funded: false });
      expectProblem(await call('get', '/compliance/audit', { token: user.token }), 403, 'forbidden');
      const officer = await newUser({ roles: ['user', 'compliance'], funded: false });
      expectProblem(await call('get', '/compliance/audit', { token: officer.token }), 403, 'forbidden');
      expect((await call('get', '/compliance/audit?limit=1', { token: admin.token })).status).to.equal(200);
    });

    it('then an admin’s API key is 403 even when it carries the compliance:read scope', async () => {
      const secret = await keyOf(admin, ['compliance:read']);
      const res = await call('get', '/compliance/audit', { token: secret });
      expectProblem(res, 403, 'forbidden');
      expect(res.text).not.to.include('"data"');
    });
  });

  describe('API3:2023 Broken Object Property Level Authorization — when an admin account is created with a password', () => {
    it('then its audit entry records the roles granted, and no password or hash anywhere', async () => {
      const email = `audit-admin-${randomUUID().slice(0, 8)}@example.com`;
      const password = `operator-${randomUUID()}`;
      const { user } = await ensureAdmin(email, password);
      const [stored] = await rows<{ entry: string }>(`SELECT row_to_json(a)::text AS entry FROM audit_entries a WHERE subject_id = :id`, {
        id: user.user_id,
      });
      expect(stored.entry).to.include('role.changed');
      expect(stored.entry).not.to.include(password);
      expect(stored.entry).not.to.match(/argon2|password|hash/i);
    });
  });

  describe('API8:2023 Security Misconfiguration — when someone with the application’s database access rewrites history', () => {
    it('then Postgres refuses to change, delete or empty the trail, so an action once recorded stays recorded', async () => {
      const target = await newUser({ funded: false });
      await ensureAdmin(target.email, undefined, { promote: true });
      for (const sql of [
        `UPDATE audit_entries SET actor_id = NULL, credential_kind = 'operator' WHERE subject_id = :id`,
        `DELETE FROM audit_entries WHERE subject_id = :id`,
        `TRUNCATE audit_entries`,
      ]) {
        const err = await rows(sql, { id: target.id }).then(
          () => null,
          (e: unknown) => e as Error,
        );
        expect(err?.message, sql).to.match(/append-only/);
      }
      const res = await call('get', `/compliance/audit?subject_type=user&subject_id=${target.id}`, { token: admin.token });
      expect(res.status).to.equal(200);
      expect((res.body as AuditPage).data.map((e) => e.action)).to.deep.equal(['role.changed']);
    });
  });

  describe('API3:2023 Broken Object Property Level Authorization (mass assignment) — when a staff member’s body claims another actor', () => {
    it('then the entry names the caller, never who the body says', async () => {
      const officer = await newUser({ roles: ['user', 'compliance'], funded: false });
      const res = await call('post', '/compliance/blocklist', {
        token: officer.token,
        body: { type: 'name', value: `Claimed Actor ${randomUUID().slice(0, 8)}`, reason: 'test', actor: admin.id, created_by: admin.id },
      });
      expect(res.status, res.text).to.equal(201);
      const entryId = (res.body as { entry_id: string }).entry_id;
      const read = await call('get', `/compliance/audit?subject_type=blocklist_entry&subject_id=${entryId}`, { token: admin.token });
      expect((read.body as AuditPage).data.map((e) => e.actor.user_id)).to.deep.equal([officer.id]);
    });
  });
});
