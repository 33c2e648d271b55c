import { randomInt, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { secondApproveAppealUpdate } from '../../workflows/appeal-messages';
import {
  api,
  blocklist,
  completedPayment,
  initiate,
  mpesaPayment,
  newUser,
  postAppeal,
  registerWithPassword,
  uniqueKenyanPhone,
  type TestUser,
} from '../support/api';
import { withEnv } from '../support/config-env';
import { ledgerKindsOf, rows } from '../support/db';
import { expectSafeProblem as expectProblem } from '../support/problems';
import { temporalClient } from '../support/stack';

/**
 * Staff never act alone on money, nor on themselves (docs/compliance.md#own-interest,
 * docs/appeals.md#four-eyes-on-large-refunds): OWASP API5:2023 (broken function level authorisation) read as
 * an insider would, and API1:2023 for a decision that would otherwise reach other customers' objects.
 */

/** A made-up surname no other run lists. */
const surname = () => {
  const letters = Array.from({ length: 7 }, () => 'bcdfghjklmnprstvwz'[randomInt(18)]).join('');
  return letters[0].toUpperCase() + letters.slice(1);
};

const decideReview = (staff: TestUser, reviewId: string, decision: 'clear' | 'confirm') =>
  api().post(`/api/v1/compliance/reviews/${reviewId}/decision`).set(staff.auth).send({ decision, note: 'checked' });

async function reviewOf(where: string, replacements: Record<string, unknown>): Promise<{ id: string; user_id: string | null }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [hit] = await rows<{ id: string; user_id: string | null }>(
      `SELECT h.id, h.user_id FROM screening_hits h LEFT JOIN orders o ON o.id = h.order_id
        WHERE h.status = 'needs_review' AND ${where}`,
      replacements,
    );
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`no review recorded where ${where}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('four eyes and own interest (OWASP API1, API5)', () => {
  let otherStaff: TestUser;
  before(async () => {
    otherStaff = await newUser({ roles: ['compliance'] });
  });

  it('API5:2023 an officer whose own name is under review cannot clear it on a second account opened under that name: 403, and a decision by someone else counts for that account only', async () => {
    const family = surname();
    await blocklist(otherStaff, { type: 'name', value: `Neema Wairimu ${family}` });
    const officer = await newUser({ roles: ['compliance'], fullName: `N. W. ${family}`, funded: false });
    const second = await registerWithPassword({ email: `second-${randomUUID().slice(0, 8)}@example.com`, full_name: `N. W. ${family}` });
    expect(second.status, JSON.stringify(second.body)).to.equal(201);
    const secondId = (second.body as { user_id: string }).user_id;
    const review = await reviewOf('h.user_id = :userId', { userId: secondId });

    expectProblem(await decideReview(officer, review.id, 'clear'), 403, 'forbidden');
    const [still] = await rows<{ status: string }>('SELECT status FROM screening_hits WHERE id = :id', { id: review.id });
    expect(still.status).to.equal('needs_review');

    expect((await decideReview(otherStaff, review.id, 'clear')).status).to.equal(200);
    const remembered = await rows<{ customer_id: string }>(
      `SELECT d.customer_id FROM screening_decisions d JOIN screening_hits h ON h.id = d.hit_id WHERE h.id = :id`,
      { id: review.id },
    );
    expect(remembered).to.deep.equal([{ customer_id: secondId }]);
    // The officer's own review is untouched by the clearance of the second account.
    const own = await rows<{ status: string }>(`SELECT status FROM screening_hits WHERE user_id = :id AND context = 'registration'`, {
      id: officer.id,
    });
    expect(own).to.deep.equal([{ status: 'needs_review' }]);
  });

  it('API1:2023 a cleared pair passes only the customer it was decided for: another customer paying the same name is reviewed afresh', async function () {
    this.timeout(45_000);
    const family = surname();
    await blocklist(otherStaff, { type: 'name', value: `Zawadi Nyokabi ${family}` });
    const transfer = mpesaPayment({
      method: 'bank_transfer',
      destination: { bank_code: '01', account_number: '1234567893', account_name: `Zawadi ${family}` },
    });
    const first = await newUser();
    const firstOrder = (await initiate(first, transfer)).body as { order_id: string };
    const firstReview = await reviewOf('h.order_id = :orderId', { orderId: firstOrder.order_id });
    expect((await decideReview(otherStaff, firstReview.id, 'clear')).status).to.equal(200);

    const stranger = await newUser();
    const strangerOrder = (await initiate(stranger, transfer)).body as { order_id: string };
    const strangerReview = await reviewOf('h.order_id = :orderId', { orderId: strangerOrder.order_id });
    expect(strangerReview.id).to.not.equal(firstReview.id);
  });

  it('API5:2023 a payee who is staff cannot decide the review of a payment made to them: 403', async function () {
    this.timeout(30_000);
    const family = surname();
    await blocklist(otherStaff, { type: 'name', value: `Tumaini Achieng ${family}` });
    const payeeStaff = await newUser({ roles: ['compliance'], fullName: `Tumaini ${family}`, funded: false });
    const payer = await newUser();
    const res = await initiate(
      payer,
      mpesaPayment({
        method: 'bank_transfer',
        destination: { bank_code: '01', account_number: '1234567893', account_name: `Tumaini ${family}` },
      }),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const review = await reviewOf('h.order_id = :orderId', { orderId: (res.body as { order_id: string }).order_id });
    expectProblem(await decideReview(payeeStaff, review.id, 'clear'), 403, 'forbidden');
    expect((await decideReview(otherStaff, review.id, 'confirm')).status).to.equal(200);
  });

  it('API5:2023 an officer cannot decide the KYC of a person who shares their phone: 403', async () => {
    const phone = uniqueKenyanPhone();
    const customer = await newUser({ phone, funded: false });
    const submitted = await api()
      .put(`/api/v1/users/${customer.id}/kyc`)
      .set(customer.auth)
      .send({ id_type: 'national_id', id_number: String(randomInt(10_000_000, 100_000_000)), date_of_birth: '1990-04-12' });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
    const submissionId = (submitted.body as { kyc: { submission_id: string } }).kyc.submission_id;
    const officer = await newUser({ roles: ['compliance'], phone, funded: false });
    const decide = (who: TestUser) =>
      api().put(`/api/v1/users/${customer.id}/kyc`).set(who.auth).send({ status: 'verified', submission_id: submissionId });
    expectProblem(await decide(officer), 403, 'forbidden');
    expect((await decide(otherStaff)).status).to.equal(200);
  });

  describe('when a refund is at or above FOUR_EYES_ABOVE_KES', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ FOUR_EYES_ABOVE_KES: '1000' });
    });
    after(() => restore());

    it('API5:2023 its first approver cannot approve it a second time, through the API (403) nor through the workflow’s own Update', async () => {
      const owner = await newUser();
      const order = await completedPayment(owner);
      const opened = await postAppeal(owner, { order_id: order.order_id, reason: 'unauthorized', description: 'not me' });
      expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
      const appeal = opened.body as { appeal_id: string; workflow_id: string };
      const approve = () =>
        api().put(`/api/v1/appeals/${appeal.appeal_id}/approve`).set(otherStaff.auth).send({ note: 'checked the statement' });
      expect((await approve()).status).to.equal(202);
      expectProblem(await approve(), 403, 'forbidden');

      let refused: unknown;
      try {
        await temporalClient()
          .workflow.getHandle(appeal.workflow_id)
          .executeUpdate(secondApproveAppealUpdate, {
            args: [{ deciderId: otherStaff.id, deciderRoles: ['compliance'], note: 'me again' }],
          });
      } catch (err) {
        refused = err;
      }
      expect(refused).to.be.instanceOf(WorkflowUpdateFailedError);
      expect(String((refused as WorkflowUpdateFailedError).cause?.message)).to.match(/different staff member/);
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'settle']);
    });
  });
});
