import { randomInt, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { creditIncoming } from '../services/money-in';
import { ensureAdmin } from '../services/auth-service';
import { recordStaffAction } from '../services/audit';
import { recordBreaks } from '../repositories/reconciliation';
import { inTransaction } from '../repositories/transaction';
import { setRoles } from '../repositories/users';
import { api, blocklist, completedPayment, freshScreeningReview, newUser, postAppeal, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { rows } from './support/db';
import { expectProblem } from './support/problems';

/**
 * The audit trail of staff actions (docs/compliance.md#audit-trail): each action leaves one entry saying
 * who, when, what, before and after; admins read it at GET /compliance/audit, keyset-paged; the database
 * refuses to change or remove an entry.
 */

interface AuditEntryBody {
  entry_id: string;
  occurred_at: string;
  actor: { user_id: string | null; roles: string[]; credential_kind: string; credential_id: string | null };
  action: string;
  subject: { type: string; id: string };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string | null;
}

interface AuditPage {
  data: AuditEntryBody[];
  next_cursor: string | null;
}

const audit = (who: TestUser, query: Record<string, string | number> = {}) =>
  api().get('/api/v1/compliance/audit').set(who.auth).query(query);

/** The entries on one subject, newest first, as an admin reads them. */
async function entriesOn(admin: TestUser, type: string, id: string): Promise<AuditEntryBody[]> {
  const res = await audit(admin, { subject_type: type, subject_id: id, limit: 100 });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.body as AuditPage).data;
}

/** The one entry an action left on its subject: by `staff`, through their login, in the request that did it. */
async function theEntry(admin: TestUser, staff: TestUser, done: Response, type: string, id: string): Promise<AuditEntryBody> {
  const entries = await entriesOn(admin, type, id);
  expect(entries, JSON.stringify(entries)).to.have.length(1);
  const [entry] = entries;
  expect(entry.actor.user_id).to.equal(staff.id);
  expect(entry.actor.credential_kind).to.equal('login');
  expect(entry.request_id).to.equal(done.headers['x-request-id']);
  expect(Date.now() - new Date(entry.occurred_at).getTime()).to.be.within(0, 120_000);
  return entry;
}

/** Money that quotes a reference nobody has: it waits unmatched. */
async function unmatched(amountMinor: bigint): Promise<string> {
  const { deposit } = await creditIncoming({
    channel: 'bank_transfer',
    rail: 'sandbox',
    providerReference: `AUDIT-${randomUUID()}`,
    currency: 'KES',
    amountMinor,
    quotedReference: 'PGNOBODYHASTHIS',
    payer: {},
  });
  return deposit.deposit_id;
}

describe('the audit trail of staff actions', () => {
  let admin: TestUser;
  let compliance: TestUser;
  before(async () => {
    admin = await newUser({ roles: ['user', 'admin'], funded: false });
    compliance = await newUser({ roles: ['user', 'compliance'], funded: false });
  });

  describe('when compliance decides a KYC submission', () => {
    it('then one kyc.decided entry says who, when, and the status before and after', async () => {
      const user = await newUser({ funded: false });
      const submitted = await api()
        .put(`/api/v1/users/${user.id}/kyc`)
        .set(user.auth)
        .send({ id_type: 'national_id', id_number: String(randomInt(10_000_000, 100_000_000)), date_of_birth: '1990-04-12' });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
      const submissionId = (submitted.body as { kyc: { submission_id: string } }).kyc.submission_id;
      const decided = await api()
        .put(`/api/v1/users/${user.id}/kyc`)
        .set(compliance.auth)
        .send({ status: 'verified', submission_id: submissionId });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);

      const entry = await theEntry(admin, compliance, decided, 'user', user.id);
      expect(entry.action).to.equal('kyc.decided');
      expect(entry.actor.roles).to.include('compliance');
      expect(entry.before).to.deep.equal({ kyc_status: 'pending', submission_id: submissionId });
      expect(entry.after).to.deep.equal({ kyc_status: 'verified', submission_id: submissionId, reason: null });
    });
  });

  describe('when compliance decides a screening review', () => {
    it('then one review.decided entry records the decision and its note', async () => {
      const reviewId = await freshScreeningReview(compliance);
      const decided = await api()
        .post(`/api/v1/compliance/reviews/${reviewId}/decision`)
        .set(compliance.auth)
        .send({ decision: 'clear', note: 'different date of birth' });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);

      const entry = await theEntry(admin, compliance, decided, 'screening_review', reviewId);
      expect(entry.action).to.equal('review.decided');
      expect(entry.before).to.deep.equal({ status: 'needs_review' });
      expect(entry.after).to.include({ status: 'cleared', note: 'different date of birth' });
    });
  });

  describe('when compliance rejects an appeal', () => {
    it('then one appeal.rejected entry, written with the decision, names the decider and the request', async () => {
      const owner = await newUser();
      const order = await completedPayment(owner);
      const opened = await postAppeal(owner, {
        order_id: order.order_id,
        reason: 'other',
        description: 'I would like this looked at.',
        evidence: [{ url: 'https://files.example.com/statement.pdf' }],
      });
      expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
      const appealId = (opened.body as { appeal_id: string }).appeal_id;
      const decided = await api().put(`/api/v1/appeals/${appealId}/reject`).set(compliance.auth).send({ note: 'paid as asked' });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);

      const entry = await theEntry(admin, compliance, decided, 'appeal', appealId);
      expect(entry.action).to.equal('appeal.rejected');
      expect(entry.before).to.deep.equal({ status: 'open', order_id: order.order_id });
      expect(entry.after).to.include({ status: 'rejected', note: 'paid as asked' });
    });
  });

  describe('when a refund at or above FOUR_EYES_ABOVE_KES is approved by one staff member, then by another', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ FOUR_EYES_ABOVE_KES: '1000' });
    });
    after(() => restore());

    it('then appeal.first_approved names the first approver and appeal.approved the second, each with its request', async () => {
      const second = await newUser({ roles: ['user', 'compliance'], funded: false });
      const owner = await newUser();
      const order = await completedPayment(owner);
      const opened = await postAppeal(owner, { order_id: order.order_id, reason: 'unauthorized', description: 'not me' });
      expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
      const appealId = (opened.body as { appeal_id: string }).appeal_id;
      const approve = (who: TestUser) =>
        api()
          .put(`/api/v1/appeals/${appealId}/approve`)
          .set(who.auth)
          .send({ note: `checked by ${who.id}` });

      const first = await approve(compliance);
      expect(first.status, JSON.stringify(first.body)).to.equal(202);
      const [waiting] = await entriesOn(admin, 'appeal', appealId);
      expect(waiting.action).to.equal('appeal.first_approved');
      expect(waiting.actor.user_id).to.equal(compliance.id);
      expect(waiting.request_id).to.equal(first.headers['x-request-id']);
      expect(waiting.after).to.include({ status: 'open' });

      const paid = await approve(second);
      expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
      const entries = await entriesOn(admin, 'appeal', appealId);
      expect(entries.map((e) => [e.action, e.actor.user_id])).to.deep.equal([
        ['appeal.approved', second.id],
        ['appeal.first_approved', compliance.id],
      ]);
      expect(entries[0].request_id).to.equal(paid.headers['x-request-id']);
      expect(entries[0].after).to.include({ status: 'approved' });
    });
  });

  describe('when a staff member assigns unmatched money below FOUR_EYES_ABOVE_KES', () => {
    it('then one deposit.assigned entry records who now owns it', async () => {
      const user = await newUser({ funded: false });
      const depositId = await unmatched(5_000n);
      const assigned = await api()
        .post(`/api/v1/wallets/unmatched-deposits/${depositId}/assign`)
        .set(compliance.auth)
        .send({ user_id: user.id });
      expect(assigned.status, JSON.stringify(assigned.body)).to.equal(200);

      const entry = await theEntry(admin, compliance, assigned, 'deposit', depositId);
      expect(entry.action).to.equal('deposit.assigned');
      expect(entry.before).to.deep.equal({ status: 'unmatched', user_id: null });
      expect(entry.after).to.include({ user_id: user.id, amount_minor: '5000', approval_request_id: null });
    });
  });

  describe('when an assignment above FOUR_EYES_ABOVE_KES is asked for and approved by a second staff member', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ FOUR_EYES_ABOVE_KES: '1000' });
    });
    after(() => restore());

    it('then the request, its approval and the assignment each leave an entry naming its own actor', async () => {
      const user = await newUser({ funded: false });
      const depositId = await unmatched(250_000n);
      const asked = await api()
        .post(`/api/v1/wallets/unmatched-deposits/${depositId}/assign`)
        .set(compliance.auth)
        .send({ user_id: user.id });
      expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
      const requestId = (asked.body as { request_id: string }).request_id;
      const approved = await api().post(`/api/v1/compliance/approvals/${requestId}/approve`).set(admin.auth).send({ note: 'payer called' });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);

      const [decision, request] = await entriesOn(admin, 'approval_request', requestId);
      expect(request.action).to.equal('approval.requested');
      expect(request.actor.user_id).to.equal(compliance.id);
      expect(request.before).to.equal(null);
      expect(request.after).to.include({ status: 'pending', kind: 'assign_unmatched_deposit', subject_id: depositId });
      expect(decision.action).to.equal('approval.decided');
      expect(decision.actor.user_id).to.equal(admin.id);
      expect(decision.request_id).to.equal(approved.headers['x-request-id']);
      expect(decision.before).to.deep.equal({ status: 'pending' });
      expect(decision.after).to.include({ status: 'approved', decided_by: admin.id, decision_note: 'payer called' });

      const assignment = await theEntry(admin, admin, approved, 'deposit', depositId);
      expect(assignment.action).to.equal('deposit.assigned');
      expect(assignment.after).to.include({ user_id: user.id, approval_request_id: requestId });
    });

    it('then a rejection is one approval.decided entry, and a repeated request leaves none', async () => {
      const user = await newUser({ funded: false });
      const depositId = await unmatched(300_000n);
      const assign = () =>
        api().post(`/api/v1/wallets/unmatched-deposits/${depositId}/assign`).set(compliance.auth).send({ user_id: user.id });
      const asked = await assign();
      expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
      const requestId = (asked.body as { request_id: string }).request_id;
      expectProblem(await assign(), 409, 'conflict');
      const rejected = await api().post(`/api/v1/compliance/approvals/${requestId}/reject`).set(admin.auth).send({ note: 'not ours' });
      expect(rejected.status, JSON.stringify(rejected.body)).to.equal(200);

      const entries = await entriesOn(admin, 'approval_request', requestId);
      expect(entries.map((e) => e.action)).to.deep.equal(['approval.decided', 'approval.requested']);
      expect(entries[0].after).to.include({ status: 'rejected', decided_by: admin.id });
      expect(await entriesOn(admin, 'deposit', depositId)).to.deep.equal([]);
    });
  });

  describe('when a staff member resolves a reconciliation break below FOUR_EYES_ABOVE_KES', () => {
    it('then one break.resolved entry records the note', async () => {
      const [found] = await recordBreaks('sandbox', 'bank_transfer', [
        {
          kind: 'missing_in_ledger',
          direction: 'in',
          reference: `AUDIT-${randomUUID()}`,
          currency: 'KES',
          railAmountMinor: 1_000n,
          ledgerAmountMinor: null,
          railLines: 1,
          ledgerLines: 0,
          day: new Date().toISOString().slice(0, 10),
          depositIds: [],
          orderIds: [],
        },
      ]);
      const resolved = await api()
        .post(`/api/v1/compliance/reconciliation/breaks/${found.id}/resolve`)
        .set(compliance.auth)
        .send({ note: 'bank fee, booked by hand' });
      expect(resolved.status, JSON.stringify(resolved.body)).to.equal(200);

      const entry = await theEntry(admin, compliance, resolved, 'reconciliation_break', found.id);
      expect(entry.action).to.equal('break.resolved');
      expect(entry.before).to.deep.equal({ status: 'open' });
      expect(entry.after).to.deep.equal({ status: 'resolved', resolution_note: 'bank fee, booked by hand' });
    });
  });

  describe('when compliance adds a value to the blocklist', () => {
    it('then one blocklist.changed entry records the new entry, and adding it again (nothing changes) records none', async () => {
      const value = `Audit Listed ${randomUUID().slice(0, 8)}`;
      const added = await api()
        .post('/api/v1/compliance/blocklist')
        .set(compliance.auth)
        .send({ type: 'name', value, reason: 'court order' });
      expect(added.status, JSON.stringify(added.body)).to.equal(201);
      const entryId = (added.body as { entry_id: string }).entry_id;
      await blocklist(compliance, { type: 'name', value, reason: 'again' });

      const entry = await theEntry(admin, compliance, added, 'blocklist_entry', entryId);
      expect(entry.action).to.equal('blocklist.changed');
      expect(entry.before).to.equal(null);
      expect(entry.after).to.include({ type: 'name', reason: 'court order', source: 'manual', expires_at: null });
    });
  });

  describe('when an operator promotes an account to admin (admin:create --promote)', () => {
    it('then one role.changed entry names the command, with the roles before and after', async () => {
      const user = await newUser({ funded: false });
      await ensureAdmin(user.email, undefined, { promote: true });

      const [entry, ...more] = await entriesOn(admin, 'user', user.id);
      expect(more).to.deep.equal([]);
      expect(entry.action).to.equal('role.changed');
      expect(entry.actor).to.deep.equal({ user_id: null, roles: [], credential_kind: 'operator', credential_id: 'admin:create' });
      expect(entry.request_id).to.equal(null);
      expect(entry.before).to.deep.equal({ roles: ['user'] });
      expect((entry.after as { roles: string[] }).roles).to.have.members(['user', 'compliance', 'admin']);
    });
  });

  describe('when a user creates and revokes an API key', () => {
    it('then api_key.created and api_key.revoked entries say what the key reaches, never its secret', async () => {
      const merchant = await newUser({ funded: false });
      const created = await api()
        .post('/api/v1/api-keys')
        .set(merchant.auth)
        .send({ name: 'shop server', mode: 'test', scopes: ['payments:read'] });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const { key_id: keyId, secret } = created.body as { key_id: string; secret: string };
      const revoked = await api().delete(`/api/v1/api-keys/${keyId}`).set(merchant.auth);
      expect(revoked.status).to.equal(204);

      const [revocation, creation] = await entriesOn(admin, 'api_key', keyId);
      expect(creation.action).to.equal('api_key.created');
      expect(creation.actor.user_id).to.equal(merchant.id);
      expect(creation.request_id).to.equal(created.headers['x-request-id']);
      expect(creation.before).to.equal(null);
      expect(creation.after).to.include({ name: 'shop server', mode: 'test', owner: merchant.id, revoked: false });
      expect(revocation.action).to.equal('api_key.revoked');
      expect(revocation.request_id).to.equal(revoked.headers['x-request-id']);
      expect(revocation.after).to.include({ revoked: true });
      const stored = await rows<{ entry: string }>(`SELECT row_to_json(a)::text AS entry FROM audit_entries a WHERE subject_id = :keyId`, {
        keyId,
      });
      const secretPart = secret.slice('sk_test_'.length);
      for (const { entry } of stored)
        expect(entry)
          .not.to.include(secretPart)
          .and.not.to.match(/secret|hash/i);
    });
  });

  describe('when an entry is changed, removed or the table emptied, even by the application’s own database user', () => {
    it('then Postgres refuses UPDATE, DELETE and TRUNCATE, and the entry is as it was', async () => {
      const user = await newUser({ funded: false });
      await ensureAdmin(user.email, undefined, { promote: true });
      const [before] = await rows<{ id: string; action: string }>(`SELECT id, action FROM audit_entries WHERE subject_id = :id`, {
        id: user.id,
      });
      const refused = async (sql: string) => {
        const err = await rows(sql, { id: before.id }).then(
          () => null,
          (e: unknown) => e as Error & { parent?: { code?: string } },
        );
        expect(err, sql).to.not.equal(null);
        expect(err?.message).to.match(/the audit trail is append-only: (UPDATE|DELETE|TRUNCATE) on audit_entries is not allowed/);
        expect(err?.parent?.code, 'raised by the trigger').to.equal('P0001');
      };
      await refused(`UPDATE audit_entries SET action = 'kyc.decided' WHERE id = :id`);
      await refused(`DELETE FROM audit_entries WHERE id = :id`);
      await refused(`TRUNCATE audit_entries`);
      expect(await rows(`SELECT id, action FROM audit_entries WHERE id = :id`, { id: before.id })).to.deep.equal([before]);
    });
  });

  describe('when an action’s audit entry cannot be written', () => {
    it('then the action does not commit either', async () => {
      const user = await newUser({ funded: false });
      const attempt = inTransaction(async (tx) => {
        await setRoles(user.id, ['user', 'admin'], tx);
        // An empty subject id breaks the table's CHECK: the entry is refused.
        await recordStaffAction(tx, {
          by: { id: admin.id, roles: ['admin'] },
          action: 'role.changed',
          subjectType: 'user',
          subjectId: '',
          before: null,
          after: null,
        });
      });
      await attempt.then(
        () => expect.fail('the entry was written'),
        () => undefined,
      );
      const [row] = await rows<{ roles: string[] }>('SELECT roles FROM users WHERE id = :id', { id: user.id });
      expect(row.roles).to.deep.equal(['user']);
    });
  });

  describe('when an admin pages through one staff member’s actions', () => {
    it('then the pages are newest first, do not overlap, and end with a null cursor; filters narrow them', async () => {
      const officer = await newUser({ roles: ['user', 'compliance'], funded: false });
      const start = new Date(Date.now() - 1000).toISOString();
      for (let i = 0; i < 3; i += 1) await blocklist(officer, { type: 'name', value: `Paged Entry ${i} ${randomUUID().slice(0, 8)}` });

      const first = await audit(admin, { actor: officer.id, limit: 2 });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const page1 = first.body as AuditPage;
      expect(page1.data).to.have.length(2);
      expect(page1.next_cursor).to.be.a('string');
      const second = await audit(admin, { actor: officer.id, limit: 2, cursor: page1.next_cursor! });
      const page2 = second.body as AuditPage;
      expect(page2.data).to.have.length(1);
      expect(page2.next_cursor).to.equal(null);
      const ids = [...page1.data, ...page2.data].map((e) => e.entry_id);
      expect(new Set(ids).size).to.equal(3);
      expect([...ids].sort().reverse()).to.deep.equal(ids);

      const filtered = await audit(admin, {
        actor: officer.id,
        action: 'blocklist.changed',
        from: start,
        to: new Date(Date.now() + 60_000).toISOString(),
      });
      expect((filtered.body as AuditPage).data).to.have.length(3);
      const none = await audit(admin, { actor: officer.id, to: start });
      expect((none.body as AuditPage).data).to.deep.equal([]);
      const other = await audit(admin, { actor: officer.id, action: 'kyc.decided' });
      expect((other.body as AuditPage).data).to.deep.equal([]);
    });

    it('then a forged cursor, a bad instant, an empty window, an unknown action or a malformed actor is a 400', async () => {
      expectProblem(await audit(admin, { cursor: Buffer.from('v1:not-an-id').toString('base64url') }), 400, 'validation_failed');
      expectProblem(await audit(admin, { from: 'yesterday' }), 400, 'validation_failed');
      expectProblem(await audit(admin, { from: '2026-11-26T10:00:00Z', to: '2026-11-26T09:00:00Z' }), 400, 'validation_failed');
      expectProblem(await audit(admin, { action: 'everything' }), 400, 'validation_failed');
      expectProblem(await audit(admin, { actor: 'root' }), 400, 'validation_failed');
    });
  });

  describe('when staff who are not admins, or users, ask for the trail', () => {
    it('then it is 403', async () => {
      expectProblem(await audit(compliance), 403, 'forbidden');
      expectProblem(await audit(await newUser({ funded: false })), 403, 'forbidden');
    });
  });
});
