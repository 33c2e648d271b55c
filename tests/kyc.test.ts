import crypto, { randomInt } from 'node:crypto';
import { expect } from 'chai';
import { database } from '../platform/database';
import { api, blocklist, initiate, mpesaPayment, newNamedUser, newUser, type TestUser } from './support/api';
import { rows } from './support/db';
import { expectProblem } from './support/problems';

interface KycBody {
  status: string;
  id_type: string | null;
  id_number: string | null;
  date_of_birth: string | null;
  kra_pin: string | null;
  address: string | null;
  submission_id: string | null;
  submitted_at: string | null;
  decided_at: string | null;
  reason: string | null;
  decided_by?: string | null;
  history?: { from: string; to: string; by: string | null; at: string; reason: string | null }[];
}

interface UserDetailBody {
  user_id: string;
  kyc_status: string;
  kyc: KycBody;
}

/** A national ID number no other test uses (8 random digits). */
const nationalId = () => String(randomInt(10_000_000, 100_000_000));

const submission = (overrides: Record<string, unknown> = {}) => ({
  id_type: 'national_id',
  id_number: nationalId(),
  date_of_birth: '1990-04-12',
  kra_pin: 'a123456789b',
  address: 'Moi Avenue 12, Nairobi',
  ...overrides,
});

const putKyc = (who: TestUser | undefined, userId: string, body: Record<string, unknown>) => {
  const req = api().put(`/api/v1/users/${userId}/kyc`);
  return who ? req.set(who.auth).send(body) : req.send(body);
};

/** The id of the user's current KYC submission (a fresh UUID when there is none), as a reviewer sees it. */
async function currentSubmission(userId: string): Promise<string> {
  const [row] = await rows<{ submission_id: string }>('SELECT submission_id FROM kyc_records WHERE user_id = :userId', { userId });
  return row?.submission_id ?? crypto.randomUUID();
}

/** A staff decision on the submission the user has on file now. */
const decideKyc = async (who: TestUser, userId: string, body: Record<string, unknown>) =>
  putKyc(who, userId, { submission_id: await currentSubmission(userId), ...body });

async function statusOf(userId: string): Promise<string> {
  const [row] = await rows<{ kyc_status: string }>('SELECT kyc_status FROM users WHERE id = :userId', { userId });
  return row.kyc_status;
}

describe('kyc', () => {
  let compliance: TestUser;
  let admin: TestUser;

  before(async () => {
    compliance = await newUser({ roles: ['user', 'compliance'] });
    admin = await newUser({ roles: ['user', 'admin'] });
  });

  describe('when a user submits and compliance verifies', () => {
    it('then KYC goes unverified → pending → verified, each step answered with the user and the audit trail kept', async () => {
      const user = await newUser();
      const body = submission({ id_number: ` ${nationalId().slice(0, 4)} ${nationalId().slice(4)} ` });
      const submitted = await putKyc(user, user.id, body);
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
      const afterSubmit = submitted.body as UserDetailBody;
      expect(afterSubmit.kyc_status).to.equal('pending');
      expect(afterSubmit.kyc).to.include({
        status: 'pending',
        id_type: 'national_id',
        id_number: body.id_number.replace(/\s/g, ''),
        date_of_birth: '1990-04-12',
        kra_pin: 'A123456789B',
        address: 'Moi Avenue 12, Nairobi',
        decided_at: null,
        reason: null,
      });
      expect(afterSubmit.kyc.submitted_at).to.be.a('string');
      expect(afterSubmit.kyc).to.not.have.property('history');

      const verified = await decideKyc(compliance, user.id, { status: 'verified', reason: 'documents match' });
      expect(verified.status, JSON.stringify(verified.body)).to.equal(200);
      const afterDecision = verified.body as UserDetailBody;
      expect(afterDecision.kyc_status).to.equal('verified');
      expect(afterDecision.kyc).to.include({ status: 'verified', reason: 'documents match', decided_by: compliance.id });
      expect(afterDecision.kyc.decided_at).to.be.a('string');
      expect(afterDecision.kyc.history?.map(({ from, to, by, reason }) => ({ from, to, by, reason }))).to.deep.equal([
        { from: 'unverified', to: 'pending', by: user.id, reason: null },
        { from: 'pending', to: 'verified', by: compliance.id, reason: 'documents match' },
      ]);
      expect(await statusOf(user.id)).to.equal('verified');
    });

    it('then the user sees their own decision, but not who made it', async () => {
      const user = await newUser();
      await putKyc(user, user.id, submission());
      await decideKyc(admin, user.id, { status: 'verified' });
      const res = await api().get(`/api/v1/users/${user.id}`).set(user.auth);
      expect(res.status).to.equal(200);
      expect((res.body as UserDetailBody).kyc.status).to.equal('verified');
      expect((res.body as UserDetailBody).kyc).to.not.have.property('decided_by');
    });
  });

  describe('when compliance rejects and the user resubmits', () => {
    it('then KYC goes pending → rejected (with the reason) → pending again', async () => {
      const user = await newUser();
      await putKyc(user, user.id, submission());
      const rejected = await decideKyc(admin, user.id, { status: 'rejected', reason: 'the ID photo is unreadable' });
      expect(rejected.status).to.equal(200);
      expect((rejected.body as UserDetailBody).kyc).to.include({ status: 'rejected', reason: 'the ID photo is unreadable' });

      const seenByUser = await api().get(`/api/v1/users/${user.id}`).set(user.auth);
      expect((seenByUser.body as UserDetailBody).kyc.reason).to.equal('the ID photo is unreadable');

      const resubmitted = await putKyc(user, user.id, submission({ id_type: 'passport', id_number: `AK${nationalId()}` }));
      expect(resubmitted.status, JSON.stringify(resubmitted.body)).to.equal(200);
      expect((resubmitted.body as UserDetailBody).kyc).to.include({
        status: 'pending',
        id_type: 'passport',
        reason: null,
        decided_at: null,
      });

      const audit = await rows<{ from_status: string; to_status: string; actor_id: string }>(
        'SELECT from_status, to_status, actor_id FROM kyc_audit WHERE user_id = :id ORDER BY id',
        { id: user.id },
      );
      expect(audit).to.deep.equal([
        { from_status: 'unverified', to_status: 'pending', actor_id: user.id },
        { from_status: 'pending', to_status: 'rejected', actor_id: admin.id },
        { from_status: 'rejected', to_status: 'pending', actor_id: user.id },
      ]);
    });
  });

  describe('when a user sends a status for themself', () => {
    it('then it is 403 and nothing changes', async () => {
      const user = await newUser();
      await putKyc(user, user.id, submission());
      expectProblem(await putKyc(user, user.id, { status: 'verified' }), 403, 'forbidden');
      expectProblem(await putKyc(user, user.id, { ...submission(), status: 'pending' }), 403, 'forbidden');
      expect(await statusOf(user.id)).to.equal('pending');
    });

    it('then staff deciding their own KYC get 403 too', async () => {
      const officer = await newUser({ roles: ['user', 'compliance'] });
      await putKyc(officer, officer.id, submission());
      expectProblem(await putKyc(officer, officer.id, { status: 'verified' }), 403, 'forbidden');
    });
  });

  describe('when the access matrix is exercised', () => {
    it('then anonymous is 401 and a user acting on someone else 404', async () => {
      const user = await newUser();
      const other = await newUser();
      expectProblem(await putKyc(undefined, user.id, submission()), 401, 'unauthenticated');
      expectProblem(await putKyc(other, user.id, submission()), 404, 'not_found');
      expectProblem(await putKyc(other, user.id, { status: 'verified' }), 404, 'not_found');
      expect(await statusOf(user.id)).to.equal('unverified');
    });

    it('then staff may not submit data on someone else’s behalf: a decision needs a status', async () => {
      const user = await newUser();
      const problem = expectProblem(await putKyc(compliance, user.id, submission()), 400, 'validation_failed');
      expect(problem.errors?.map((e) => e.field)).to.deep.equal(['status']);
    });

    it('then a malformed id is 400 and an unknown one 404', async () => {
      expectProblem(await putKyc(compliance, 'nope', { status: 'verified' }), 400, 'validation_failed');
      expectProblem(await putKyc(compliance, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', { status: 'verified' }), 404, 'not_found');
    });
  });

  describe('when a change is not allowed from the current status', () => {
    it('then deciding on a user who submitted nothing is 409', async () => {
      const user = await newUser();
      expectProblem(await decideKyc(compliance, user.id, { status: 'verified' }), 409, 'conflict');
    });

    it('then a verified user resubmitting is 409, while compliance may revoke a verification', async () => {
      const user = await newUser();
      await putKyc(user, user.id, submission());
      await decideKyc(compliance, user.id, { status: 'verified' });
      expectProblem(await putKyc(user, user.id, submission()), 409, 'conflict');
      expectProblem(await decideKyc(compliance, user.id, { status: 'verified' }), 409, 'conflict');
      const revoked = await decideKyc(compliance, user.id, { status: 'rejected', reason: 'document reported stolen' });
      expect(revoked.status).to.equal(200);
      expect((revoked.body as UserDetailBody).kyc_status).to.equal('rejected');
    });

    it('then a document already used by another account is 409', async () => {
      const first = await newUser();
      const second = await newUser();
      const shared = submission();
      expect((await putKyc(first, first.id, shared)).status).to.equal(200);
      expectProblem(await putKyc(second, second.id, shared), 409, 'conflict');
      expect(await statusOf(second.id)).to.equal('unverified');
    });
  });

  describe('when the user resubmits while compliance is reviewing the first submission', () => {
    it('then the decision on the first submission is 409 and the new one stays pending, undecided', async () => {
      const user = await newUser();
      const first = await putKyc(user, user.id, submission());
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const reviewed = (first.body as UserDetailBody).kyc.submission_id;
      expect(reviewed).to.be.a('string');

      const second = await putKyc(user, user.id, submission({ id_type: 'passport', id_number: `AK${nationalId()}` }));
      expect(second.status, JSON.stringify(second.body)).to.equal(200);
      const current = (second.body as UserDetailBody).kyc.submission_id;
      expect(current).to.be.a('string').and.not.equal(reviewed);

      expectProblem(await putKyc(compliance, user.id, { status: 'verified', submission_id: reviewed }), 409, 'conflict');
      expect(await statusOf(user.id)).to.equal('pending');
      const [record] = await rows<{ submission_id: string; id_type: string; decided_at: Date | null; decided_by: string | null }>(
        'SELECT submission_id, id_type, decided_at, decided_by FROM kyc_records WHERE user_id = :id',
        { id: user.id },
      );
      expect(record).to.deep.equal({ submission_id: current, id_type: 'passport', decided_at: null, decided_by: null });
      const audit = await rows<{ to_status: string }>('SELECT to_status FROM kyc_audit WHERE user_id = :id ORDER BY id', { id: user.id });
      expect(audit.map((a) => a.to_status)).to.deep.equal(['pending', 'pending']);

      const decided = await putKyc(compliance, user.id, { status: 'verified', submission_id: current });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      expect(await statusOf(user.id)).to.equal('verified');
    });

    it('then a decision without the reviewed submission id is a 400 naming submission_id', async () => {
      const user = await newUser();
      await putKyc(user, user.id, submission());
      const problem = expectProblem(await putKyc(compliance, user.id, { status: 'verified' }), 400, 'validation_failed');
      expect(problem.errors?.map((e) => e.field)).to.deep.equal(['submission_id']);
      expect(await statusOf(user.id)).to.equal('pending');
    });
  });

  describe('when the submission or decision is invalid', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['an unknown id_type', { id_type: 'driving_licence' }, 'id_type'],
      ['a national ID with letters', { id_number: '12AB5678' }, 'id_number'],
      ['no id_number', { id_number: undefined }, 'id_number'],
      ['a date that is not a date', { date_of_birth: '1990-02-30' }, 'date_of_birth'],
      ['a minor', { date_of_birth: new Date(Date.now() - 10 * 365 * 86400_000).toISOString().slice(0, 10) }, 'date_of_birth'],
      ['a KRA PIN of the wrong shape', { kra_pin: '123' }, 'kra_pin'],
      ['an address of one letter', { address: 'x' }, 'address'],
    ];
    for (const [what, overrides, field] of cases) {
      it(`then ${what} is a 400 naming ${field}`, async () => {
        const user = await newUser();
        const problem = expectProblem(await putKyc(user, user.id, submission(overrides)), 400, 'validation_failed');
        expect(problem.errors?.map((e) => e.field)).to.include(field);
        expect(await statusOf(user.id)).to.equal('unverified');
      });
    }

    it('then a decision other than verified or rejected is a 400 naming status', async () => {
      const user = await newUser();
      await putKyc(user, user.id, submission());
      const problem = expectProblem(await decideKyc(compliance, user.id, { status: 'approved' }), 400, 'validation_failed');
      expect(problem.errors?.map((e) => e.field)).to.deep.equal(['status']);
    });
  });

  describe('when the submitted document or the user’s name is blocklisted', () => {
    it('then the submission is 422 blocked_by_compliance, KYC stays unverified and the hit is recorded', async () => {
      const user = await newUser();
      const document = nationalId();
      const entry = await blocklist(compliance, { type: 'national_id', value: document, reason: 'stolen document' });
      const res = await putKyc(user, user.id, submission({ id_number: document }));
      expectProblem(res, 422, 'blocked_by_compliance');
      expect(await statusOf(user.id)).to.equal('unverified');
      const hits = await rows<{ context: string; user_id: string; field: string }>(
        'SELECT context, user_id, field FROM screening_hits WHERE entry_id = :id',
        { id: entry.entry_id },
      );
      expect(hits).to.deep.equal([{ context: 'kyc', user_id: user.id, field: 'kyc.id_number' }]);
    });

    it('then a name listed after registration is caught at submission', async () => {
      const user = await newNamedUser('Nyokabi Wanjala Muthoni');
      await blocklist(compliance, { type: 'name', value: 'Nyokabi Wanjala Muthoni' });
      expectProblem(await putKyc(user, user.id, submission()), 422, 'blocked_by_compliance');
    });
  });

  describe('when the payment tier limits read the KYC status', () => {
    it('then a payment above the unverified tier needs KYC, and is accepted once compliance verifies', async () => {
      const user = await newUser();
      const big = mpesaPayment({ amount: '20000.00' });
      expectProblem(await initiate(user, big), 422, 'kyc_required');
      await putKyc(user, user.id, submission());
      expectProblem(await initiate(user, big), 422, 'kyc_required');
      await decideKyc(compliance, user.id, { status: 'verified' });
      const accepted = await initiate(user, big);
      expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
    });
  });

  describe('when the status is changed outside the KYC service', () => {
    it('then the database records it in the audit trail anyway, without an actor', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      const res = await api().get(`/api/v1/users/${user.id}`).set(compliance.auth);
      const history = (res.body as UserDetailBody).kyc.history!;
      expect(history.map(({ from, to, by }) => ({ from, to, by }))).to.deep.equal([{ from: 'unverified', to: 'verified', by: null }]);
      expect(history[0].reason).to.equal('changed outside the KYC service');
    });

    it('then the audit trail cannot be rewritten', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      let refused: unknown;
      try {
        await database().query('UPDATE kyc_audit SET to_status = :to WHERE user_id = :id', {
          replacements: { to: 'rejected', id: user.id },
        });
      } catch (err) {
        refused = err;
      }
      expect(String(refused)).to.match(/append-only/);
    });
  });
});
