import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { creditIncoming } from '../services/money-in';
import { api, kesAvailable, newUser, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { rows } from './support/db';
import { fundWallets } from './support/funding';
import { expectProblem } from './support/problems';

/**
 * Assigning unmatched money (docs/wallets.md#unmatched-deposits) and four eyes (docs/access.md#four-eyes): never
 * to oneself, never past the wallet's cap, and above FOUR_EYES_ABOVE_KES only once a second, different staff
 * member approves it.
 */

interface ApprovalBody {
  request_id: string;
  kind: string;
  subject_id: string;
  currency: string;
  amount: string;
  kes_equivalent: string;
  payload: { user_id?: string };
  status: string;
  requested_by: string;
  decided_by: string | null;
  result: { deposit?: { deposit_id: string; status: string } } | null;
}

/** Money that quotes a reference nobody has: it waits unmatched. */
async function unmatched(amountMinor: bigint): Promise<string> {
  const { deposit } = await creditIncoming({
    channel: 'bank_transfer',
    rail: 'sandbox',
    providerReference: `FOUR-EYES-${randomUUID()}`,
    currency: 'KES',
    amountMinor,
    quotedReference: 'PGNOBODYHASTHIS',
    payer: {},
  });
  expect(deposit.status).to.equal('unmatched');
  return deposit.deposit_id;
}

const assign = (staff: TestUser, depositId: string, userId: string) =>
  api().post(`/api/v1/wallets/unmatched-deposits/${depositId}/assign`).set(staff.auth).send({ user_id: userId });
const decide = (staff: TestUser, requestId: string, decision: 'approve' | 'reject', note = 'checked with the payer') =>
  api().post(`/api/v1/compliance/approvals/${requestId}/${decision}`).set(staff.auth).send({ note });

const depositState = async (depositId: string) =>
  (await rows<{ status: string; user_id: string | null }>('SELECT status, user_id FROM deposits WHERE id = :depositId', { depositId }))[0];
const unmatchedSuspense = async () =>
  (
    await rows<{ balance: string }>(
      `SELECT balance_minor::text AS balance FROM accounts WHERE account = 'suspense:unmatched' AND currency = 'KES'`,
    )
  )[0]?.balance;

describe('assigning unmatched money', () => {
  let compliance: TestUser;
  let admin: TestUser;
  before(async () => {
    compliance = await newUser({ roles: ['compliance'], funded: false });
    admin = await newUser({ roles: ['admin'], funded: false });
  });

  describe('when a staff member assigns it to themselves', () => {
    it('then it is 403 and the money stays unmatched', async () => {
      const depositId = await unmatched(75_000n);
      expectProblem(await assign(compliance, depositId, compliance.id), 403, 'forbidden');
      expect(await depositState(depositId)).to.deep.equal({ status: 'unmatched', user_id: null });
      expect(await kesAvailable(compliance)).to.equal('0.00');
      // Another staff member may assign it to them.
      const res = await assign(admin, depositId, compliance.id);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await kesAvailable(compliance)).to.equal('750.00');
    });
  });

  describe("when the credit would take the wallet past its KYC tier's cap", () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ LIMIT_UNVERIFIED_BALANCE_KES: '1000', LIMIT_VERIFIED_BALANCE_KES: '3000' });
    });
    after(() => restore());

    it("then it is refused with the cap's code, and the money stays unmatched", async () => {
      const unverified = await newUser({ funded: false });
      const verified = await newUser({ funded: false, kycStatus: 'verified' });
      const depositId = await unmatched(150_000n);
      const suspenseBefore = await unmatchedSuspense();
      expectProblem(await assign(compliance, depositId, unverified.id), 422, 'kyc_required');
      expect(await depositState(depositId)).to.deep.equal({ status: 'unmatched', user_id: null });
      expect(await kesAvailable(unverified)).to.equal('0.00');

      await fundWallets(verified.id, { KES: 200_000n });
      expectProblem(await assign(compliance, depositId, verified.id), 422, 'limit_exceeded');
      expect(await depositState(depositId)).to.deep.equal({ status: 'unmatched', user_id: null });
      expect(await kesAvailable(verified)).to.equal('2000.00');
      expect(await unmatchedSuspense()).to.equal(suspenseBefore);
    });
  });

  describe('when the amount is above FOUR_EYES_ABOVE_KES', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ FOUR_EYES_ABOVE_KES: '1000' });
    });
    after(() => restore());

    it('then the first staff member makes a pending request (202), and only a second one moves the money', async () => {
      const user = await newUser({ funded: false });
      const depositId = await unmatched(250_000n);

      const asked = await assign(compliance, depositId, user.id);
      expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
      const request = asked.body as ApprovalBody;
      expect(request).to.include({
        kind: 'assign_unmatched_deposit',
        subject_id: depositId,
        currency: 'KES',
        amount: '2500.00',
        kes_equivalent: '2500.00',
        status: 'pending',
        requested_by: compliance.id,
        decided_by: null,
      });
      expect(request.payload).to.deep.equal({ user_id: user.id });
      expect(asked.headers.location).to.equal(`/api/v1/compliance/approvals/${request.request_id}`);
      expect(await depositState(depositId)).to.deep.equal({ status: 'unmatched', user_id: null });
      expect(await kesAvailable(user)).to.equal('0.00');

      const pending = await api().get('/api/v1/compliance/approvals?status=pending&limit=100').set(admin.auth);
      expect(pending.status).to.equal(200);
      expect((pending.body as { data: ApprovalBody[] }).data.map((r) => r.request_id)).to.include(request.request_id);
      expect((await api().get('/api/v1/compliance/approvals').set(user.auth)).status).to.equal(403);

      // Asking again while it waits, or approving one's own request, moves nothing.
      expectProblem(await assign(compliance, depositId, user.id), 409, 'conflict');
      expectProblem(await decide(compliance, request.request_id, 'approve'), 403, 'forbidden');
      expect(await kesAvailable(user)).to.equal('0.00');

      const approved = await decide(admin, request.request_id, 'approve');
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      expect(approved.body as ApprovalBody).to.include({ status: 'approved', decided_by: admin.id });
      expect((approved.body as ApprovalBody).result?.deposit).to.include({ deposit_id: depositId, status: 'completed' });
      expect(await depositState(depositId)).to.deep.equal({ status: 'completed', user_id: user.id });
      expect(await kesAvailable(user)).to.equal('2500.00');

      expectProblem(await decide(admin, request.request_id, 'approve'), 409, 'conflict');
      expect(await kesAvailable(user)).to.equal('2500.00');
    });

    it('then the approver may not be the one the money goes to', async () => {
      const other = await newUser({ roles: ['compliance'], funded: false });
      const depositId = await unmatched(250_000n);
      const asked = await assign(compliance, depositId, other.id);
      expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
      expectProblem(await decide(other, (asked.body as ApprovalBody).request_id, 'approve'), 403, 'forbidden');
      expect(await depositState(depositId)).to.deep.equal({ status: 'unmatched', user_id: null });
    });

    it('then an approval that would pass the cap is refused and the request stays pending, for a rejection', async () => {
      const user = await newUser({ funded: false });
      const depositId = await unmatched(250_000n);
      const asked = await assign(compliance, depositId, user.id);
      expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
      const requestId = (asked.body as ApprovalBody).request_id;

      const restoreCap = withEnv({ LIMIT_UNVERIFIED_BALANCE_KES: '2000' });
      try {
        expectProblem(await decide(admin, requestId, 'approve'), 422, 'kyc_required');
      } finally {
        restoreCap();
      }
      expect(await depositState(depositId)).to.deep.equal({ status: 'unmatched', user_id: null });
      expect(await kesAvailable(user)).to.equal('0.00');

      const rejected = await decide(admin, requestId, 'reject', 'payer could not be reached');
      expect(rejected.status, JSON.stringify(rejected.body)).to.equal(200);
      expect(rejected.body as ApprovalBody).to.include({ status: 'rejected', decided_by: admin.id, result: null });
      expect(await depositState(depositId)).to.deep.equal({ status: 'unmatched', user_id: null });
    });
  });

  describe('when the amount is at or below FOUR_EYES_ABOVE_KES', () => {
    it('then one staff member assigns it at once', async () => {
      const user = await newUser({ funded: false });
      const depositId = await unmatched(10_000_000n); // KES 100,000: the default threshold itself
      const res = await assign(compliance, depositId, user.id);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await kesAvailable(user)).to.equal('100000.00');
    });
  });
});
