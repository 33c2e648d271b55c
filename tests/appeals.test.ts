import { expect } from 'chai';
import { Worker } from '@temporalio/worker';
import { reloadConfig } from '../platform/config';
import { ledgerImbalanceByCurrency } from '../repositories/ledger';
import {
  api,
  blocklist,
  completedPayment,
  initiate,
  mpesaPayment,
  newUser,
  p2pTrade,
  postAd,
  postAppeal,
  sellAd,
  uniqueKenyanPhone,
  waitForOrder,
  type OrderBody,
  type TestUser,
} from './support/api';
import { ledgerKindsOf, rows } from './support/db';
import { SELLER_PHONE } from './support/rails';
import { temporalClient } from './support/stack';
import { expectProblem } from './support/problems';
import { withEnv } from './support/config-env';

interface Appeal {
  appeal_id: string;
  order_id: string;
  reason: string;
  description: string;
  evidence: { url: string; sha256?: string }[];
  status: string;
  created_by: string;
  decided_by?: string | null;
  decided_at: string | null;
  decision_note: string | null;
  resolution: { action: string | null; summary: string; order_status: string; resubmitted_order_id?: string } | null;
  awaiting_second_approval?: {
    action: string;
    amount: string;
    currency: string;
    kes_equivalent: string;
    approved_by: string;
    note: string | null;
  } | null;
  workflow_id: string;
}

const SHA = 'a'.repeat(64);
const appealBody = (orderId: string, overrides: Record<string, unknown> = {}) => ({
  order_id: orderId,
  reason: 'unauthorized',
  description: 'I did not make this payment.',
  evidence: [{ url: 'https://files.example.com/statement.pdf', sha256: SHA }, { url: 'https://files.example.com/screenshot.png' }],
  ...overrides,
});

const decide = (who: TestUser, appealId: string, decision: 'approve' | 'reject', body: Record<string, unknown>) =>
  api().put(`/api/v1/appeals/${appealId}/${decision}`).set(who.auth).send(body);

async function openAppeal(owner: TestUser, orderId: string, overrides: Record<string, unknown> = {}): Promise<Appeal> {
  const res = await postAppeal(owner, appealBody(orderId, overrides));
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body as Appeal;
}

async function waitForAppeal(who: TestUser, appealId: string, status: string, timeoutMs = 20_000): Promise<Appeal> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api().get(`/api/v1/appeals/${appealId}`).set(who.auth);
    expect(res.status).to.equal(200);
    if ((res.body as Appeal).status === status) return res.body as Appeal;
    if (Date.now() > deadline) throw new Error(`appeal ${appealId} still ${(res.body as Appeal).status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('appeals', () => {
  let compliance: TestUser;
  before(async () => {
    compliance = await newUser({ roles: ['compliance'] });
  });

  describe('when the owner appeals a completed payment', () => {
    let owner: TestUser;
    let order: OrderBody;
    let appeal: Appeal;

    before(async () => {
      owner = await newUser();
      order = await completedPayment(owner);
      appeal = await openAppeal(owner, order.order_id);
    });

    it('then the appeal is open, with its evidence, and its workflow is appeal-<appeal_id>', async () => {
      expect(appeal).to.include({
        order_id: order.order_id,
        reason: 'unauthorized',
        status: 'open',
        created_by: owner.id,
      });
      expect(appeal).to.not.have.property('decided_by');
      expect(appeal.evidence).to.deep.equal([
        { url: 'https://files.example.com/statement.pdf', sha256: SHA },
        { url: 'https://files.example.com/screenshot.png' },
      ]);
      expect(appeal.workflow_id).to.equal(`appeal-${appeal.appeal_id}`);
      const described = await temporalClient().workflow.getHandle(appeal.workflow_id).describe();
      expect(described.type).to.equal('appeal');
      expect(described.status.name).to.equal('RUNNING');
    });

    it('then a second appeal on the same order is a 409', async () => {
      expectProblem(await postAppeal(owner, appealBody(order.order_id)), 409, 'conflict');
    });

    it('then the owner reads it, and another user gets 404', async () => {
      const mine = await api().get(`/api/v1/appeals/${appeal.appeal_id}`).set(owner.auth);
      expect(mine.status).to.equal(200);
      expect((mine.body as Appeal).appeal_id).to.equal(appeal.appeal_id);
      const stranger = await newUser();
      expectProblem(await api().get(`/api/v1/appeals/${appeal.appeal_id}`).set(stranger.auth), 404, 'not_found');
    });

    it('then a plain user approving it gets 403, and the owner approving it (even as staff) gets 403', async () => {
      const plain = await newUser();
      expectProblem(await decide(plain, appeal.appeal_id, 'approve', { note: 'looks fine' }), 403, 'forbidden');
      expectProblem(await decide(owner, appeal.appeal_id, 'approve', { note: 'mine' }), 403, 'forbidden');
      const staffOwner = await newUser({ roles: ['compliance'] });
      const own = await completedPayment(staffOwner);
      const ownAppeal = await openAppeal(staffOwner, own.order_id);
      expectProblem(await decide(staffOwner, ownAppeal.appeal_id, 'approve', { note: 'self' }), 403, 'forbidden');
      expect((await waitForAppeal(staffOwner, ownAppeal.appeal_id, 'open')).status).to.equal('open');
    });

    it('then a compliance user approving with action refund gets 200, the order is reversed and the ledger balances', async () => {
      const res = await decide(compliance, appeal.appeal_id, 'approve', { note: 'confirmed fraud', action: 'refund' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const approved = res.body as Appeal;
      expect(approved).to.include({
        appeal_id: appeal.appeal_id,
        status: 'approved',
        decided_by: compliance.id,
        decision_note: 'confirmed fraud',
      });
      expect(approved.decided_at).to.be.a('string');
      expect(approved.resolution).to.deep.equal({
        action: 'refund',
        summary: 'the payment was refunded to the payer',
        order_status: 'reversed',
        refunded_minor: '150000',
        total_refunded_minor: '150000',
      });

      const after = await waitForOrder(owner, order.order_id);
      expect(after.status).to.equal('reversed');
      expect(after.events.map((e) => e.status)).to.deep.equal(['screening', 'processing', 'completed', 'reversed']);
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'settle', 'refund']);
      const reverse = await rows<{ account: string; direction: string; amount: string }>(
        `SELECT e.account, e.direction, e.amount_minor::text AS amount FROM ledger_entries e
           JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.order_id = :id AND t.kind = 'refund' ORDER BY e.id`,
        { id: order.order_id },
      );
      expect(reverse).to.deep.equal([
        { account: 'expense:refunds', direction: 'debit', amount: '150000' },
        { account: `wallet:${owner.id}:KES`, direction: 'credit', amount: '150000' },
      ]);
      const imbalance = await ledgerImbalanceByCurrency();
      for (const value of Object.values(imbalance)) expect(value).to.equal('0');
    });

    it('then approving it again is a 409, and the order can be appealed anew', async () => {
      expectProblem(await decide(compliance, appeal.appeal_id, 'approve', { note: 'again' }), 409, 'conflict');
      expect((await postAppeal(owner, appealBody(order.order_id, { reason: 'other' }))).status).to.equal(201);
    });
  });

  describe('when an appeal is malformed or aims at someone else’s order', () => {
    it('then bad fields are 400s naming them, and another user’s order is 404', async () => {
      const owner = await newUser();
      const order = await completedPayment(owner);
      const body = expectProblem(
        await postAppeal(owner, appealBody(order.order_id, { reason: 'bored', evidence: [{ url: 'ftp://x', sha256: 'zz' }] })),
        400,
        'validation_failed',
      );
      expect(body.errors!.map((e) => e.field)).to.have.members(['reason', 'evidence[0].url', 'evidence[0].sha256']);
      const other = await newUser();
      expectProblem(await postAppeal(other, appealBody(order.order_id)), 404, 'not_found');
      expectProblem(await api().post('/api/v1/appeals').send(appealBody(order.order_id)), 401, 'unauthenticated');
    });
  });

  describe('when compliance rejects an appeal', () => {
    it('then it is 200 rejected, the order is unchanged, and it cannot be approved afterwards', async () => {
      const owner = await newUser();
      const order = await completedPayment(owner);
      const appeal = await openAppeal(owner, order.order_id, { reason: 'wrong_amount' });
      expectProblem(await decide(compliance, appeal.appeal_id, 'reject', { note: 'x', action: 'refund' }), 400, 'validation_failed');
      const res = await decide(compliance, appeal.appeal_id, 'reject', { note: 'the amount matches the statement' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body as Appeal).to.include({ status: 'rejected', decided_by: compliance.id });
      expect((res.body as Appeal).resolution).to.deep.equal({
        action: null,
        summary: 'the appeal was rejected; the order is unchanged',
        order_status: 'completed',
      });
      expect((await waitForOrder(owner, order.order_id)).status).to.equal('completed');
      expectProblem(await decide(compliance, appeal.appeal_id, 'approve', { note: 'changed my mind' }), 409, 'conflict');
    });
  });

  describe('when the action does not fit the order', () => {
    it('then it is a 409 and the appeal stays open', async () => {
      const owner = await newUser();
      const order = await completedPayment(owner);
      const appeal = await openAppeal(owner, order.order_id);
      expectProblem(await decide(compliance, appeal.appeal_id, 'approve', { note: 'x', action: 'release' }), 409, 'conflict');
      expect((await waitForAppeal(owner, appeal.appeal_id, 'open')).status).to.equal('open');
    });
  });

  describe('when a compliance-rejected payment is appealed and approved for resubmission', () => {
    it('then a new order records the approver and completes', async () => {
      const phone = uniqueKenyanPhone();
      await blocklist(compliance, { type: 'phone', value: phone });
      const owner = await newUser();
      const res = await initiate(owner, mpesaPayment({ destination: { provider: 'mpesa', phone } }));
      const rejected = await waitForOrder(owner, (res.body as { order_id: string }).order_id);
      expect(rejected).to.include({ status: 'rejected', failure_code: 'blocked_by_compliance' });
      const appeal = await openAppeal(owner, rejected.order_id, {
        reason: 'compliance_rejection',
        description: 'That is my sister’s number.',
      });
      const approved = await decide(compliance, appeal.appeal_id, 'approve', { note: 'verified by phone', action: 'resubmit' });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      const resolution = (approved.body as Appeal).resolution!;
      expect(resolution.action).to.equal('resubmit');
      const resubmitted = await waitForOrder(owner, resolution.resubmitted_order_id!);
      expect(resubmitted.status).to.equal('completed');
      const [row] = await rows<{ resubmitted_from: string; approved_by: string }>(
        'SELECT resubmitted_from, approved_by FROM orders WHERE id = :id',
        { id: resubmitted.order_id },
      );
      expect(row).to.deep.equal({ resubmitted_from: rejected.order_id, approved_by: compliance.id });
    });
  });

  describe('when a resubmission is approved but its counterparty was blocklisted in the meantime', () => {
    it('then the new order is screened again and rejected by compliance for the new entry', async () => {
      const owner = await newUser();
      // The original order is stopped by the payer's e-mail: the match the approver clears.
      const cleared = await blocklist(compliance, { type: 'email', value: owner.email });
      const phone = uniqueKenyanPhone();
      const res = await initiate(owner, mpesaPayment({ destination: { provider: 'mpesa', phone } }));
      const rejected = await waitForOrder(owner, (res.body as { order_id: string }).order_id);
      expect(rejected).to.include({ status: 'rejected', failure_code: 'blocked_by_compliance' });
      const appeal = await openAppeal(owner, rejected.order_id, { reason: 'compliance_rejection', description: 'That e-mail is mine.' });

      // Meanwhile the recipient's phone is listed.
      const listed = await blocklist(compliance, { type: 'phone', value: phone });
      const approved = await decide(compliance, appeal.appeal_id, 'approve', {
        note: 'the e-mail match is a false positive',
        action: 'resubmit',
      });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      const resubmittedId = (approved.body as Appeal).resolution!.resubmitted_order_id!;

      const resubmitted = await waitForOrder(owner, resubmittedId);
      expect(resubmitted).to.include({ status: 'rejected', failure_code: 'blocked_by_compliance' });
      const [row] = await rows<{ screening_entry_id: string; approved_by: string }>(
        'SELECT screening_entry_id, approved_by FROM orders WHERE id = :id',
        { id: resubmittedId },
      );
      expect(row).to.deep.equal({ screening_entry_id: listed.entry_id, approved_by: compliance.id });
      expect(row.screening_entry_id).to.not.equal(cleared.entry_id);
      expect(await ledgerKindsOf(resubmittedId)).to.deep.equal([]);
    });
  });

  describe('when the customer reads their decided appeal and its resubmitted order', () => {
    it('then neither shows who approved it, while staff see the approver', async () => {
      const phone = uniqueKenyanPhone();
      await blocklist(compliance, { type: 'phone', value: phone });
      const owner = await newUser();
      const res = await initiate(owner, mpesaPayment({ destination: { provider: 'mpesa', phone } }));
      const rejected = await waitForOrder(owner, (res.body as { order_id: string }).order_id);
      const appeal = await openAppeal(owner, rejected.order_id, { reason: 'compliance_rejection', description: 'My own number.' });
      const approved = await decide(compliance, appeal.appeal_id, 'approve', { note: 'checked', action: 'resubmit' });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      expect((approved.body as Appeal).decided_by).to.equal(compliance.id);

      const seen = await api().get(`/api/v1/appeals/${appeal.appeal_id}`).set(owner.auth);
      expect(seen.status).to.equal(200);
      expect(seen.body as Appeal).to.include({ status: 'approved' });
      expect(seen.body).to.not.have.property('decided_by');
      expect(seen.text).to.not.include(compliance.id);

      const order = await api()
        .get(`/api/v1/payments/orders/${(approved.body as Appeal).resolution!.resubmitted_order_id!}`)
        .set(owner.auth);
      expect(order.status).to.equal(200);
      expect(order.text).to.not.include(compliance.id);

      const staffView = await api().get(`/api/v1/appeals/${appeal.appeal_id}`).set(compliance.auth);
      expect((staffView.body as Appeal).decided_by).to.equal(compliance.id);
    });
  });

  describe('when the counterparty of a P2P trade appeals it', () => {
    it('then the maker may appeal, and neither the maker nor the taker may decide it', async () => {
      const seller = await newUser({ kycStatus: 'verified', roles: ['compliance'], phone: SELLER_PHONE });
      const buyer = await newUser({ kycStatus: 'verified' });
      const ad = await postAd(seller, sellAd());
      const res = await initiate(buyer, p2pTrade((ad.body as { ad_id: string }).ad_id, '1300.00'));
      const order = await waitForOrder(buyer, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
      const appeal = await openAppeal(seller, order.order_id, { reason: 'payment_not_received' });
      expect((await api().get(`/api/v1/appeals/${appeal.appeal_id}`).set(buyer.auth)).status).to.equal(200);
      expectProblem(await decide(seller, appeal.appeal_id, 'approve', { note: 'self' }), 403, 'forbidden');
      const refunded = await decide(compliance, appeal.appeal_id, 'approve', { note: 'buyer charged back', action: 'refund' });
      expect(refunded.status, JSON.stringify(refunded.body)).to.equal(200);
      // Settled between wallets, the trade is mirrored between the same wallets.
      expect(await ledgerKindsOf(order.order_id)).to.have.members([
        'trade_fiat',
        'trade_asset',
        'trade_fiat_reverse',
        'trade_asset_reverse',
      ]);
    });
  });

  describe('when a refund’s KES equivalent is at or above FOUR_EYES_ABOVE_KES', () => {
    let restore: () => void;
    let second: TestUser;
    before(async () => {
      // The test payments are KES 1,500: exactly at the threshold.
      restore = withEnv({ FOUR_EYES_ABOVE_KES: '1500' });
      second = await newUser({ roles: ['admin'] });
    });
    after(() => restore());

    it('then the first approval answers 202 and pays nothing, the same staff member approving again is 403, and a second one pays it', async () => {
      const owner = await newUser();
      const order = await completedPayment(owner);
      const appeal = await openAppeal(owner, order.order_id);

      const first = await decide(compliance, appeal.appeal_id, 'approve', { note: 'the statement shows no such payment' });
      expect(first.status, JSON.stringify(first.body)).to.equal(202);
      const waiting = first.body as Appeal;
      expect(waiting.status).to.equal('open');
      expect(waiting.awaiting_second_approval).to.include({
        action: 'refund',
        amount: '1500.00',
        currency: 'KES',
        kes_equivalent: '1500.00',
        approved_by: compliance.id,
        note: 'the statement shows no such payment',
      });
      expect((await waitForOrder(owner, order.order_id)).status).to.equal('completed');
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'settle']);
      // The customer never sees who approved, nor the pending approval.
      const asOwner = (await api().get(`/api/v1/appeals/${appeal.appeal_id}`).set(owner.auth)).body as Appeal;
      expect(asOwner).to.not.have.property('awaiting_second_approval');

      expectProblem(await decide(compliance, appeal.appeal_id, 'approve', { note: 'approving twice' }), 403, 'forbidden');
      expectProblem(await decide(second, appeal.appeal_id, 'approve', { note: 'a smaller one', amount: '100.00' }), 409, 'conflict');
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'settle']);

      const paid = await decide(second, appeal.appeal_id, 'approve', { note: 'countersigned' });
      expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
      const approved = paid.body as Appeal;
      expect(approved).to.include({ status: 'approved', decided_by: second.id, awaiting_second_approval: null });
      expect(approved.resolution).to.include({ action: 'refund', order_status: 'reversed' });
      expect((await waitForOrder(owner, order.order_id)).status).to.equal('reversed');
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'settle', 'refund']);
      const [kept] = await rows<{ first_approved_by: string; decided_by: string }>(
        'SELECT first_approved_by, decided_by FROM appeals WHERE id = :id',
        { id: appeal.appeal_id },
      );
      expect(kept).to.deep.equal({ first_approved_by: compliance.id, decided_by: second.id });

      // Two approvals, two refusals: its history replays on this code without a nondeterminism error.
      const handle = temporalClient().workflow.getHandle(appeal.workflow_id);
      expect(await handle.result()).to.deep.include({ appealId: appeal.appeal_id, status: 'approved' });
      await Worker.runReplayHistory({ workflowsPath: require.resolve('../workflows') }, await handle.fetchHistory(), appeal.workflow_id);
    });

    it('then a partial refund below the threshold is paid on one approval, as before', async () => {
      const owner = await newUser();
      const order = await completedPayment(owner);
      const appeal = await openAppeal(owner, order.order_id, { reason: 'wrong_amount' });
      const res = await decide(compliance, appeal.appeal_id, 'approve', { note: 'overcharged', action: 'refund', amount: '400.00' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body as Appeal).to.include({ status: 'approved', decided_by: compliance.id });
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'settle', 'refund']);
    });

    it('then a refund waiting for its second approval can be rejected, and nothing is paid', async () => {
      const owner = await newUser();
      const order = await completedPayment(owner);
      const appeal = await openAppeal(owner, order.order_id);
      expect((await decide(compliance, appeal.appeal_id, 'approve', { note: 'looks right' })).status).to.equal(202);
      const res = await decide(second, appeal.appeal_id, 'reject', { note: 'the payer confirmed the payment' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body as Appeal).to.include({ status: 'rejected', decided_by: second.id });
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'settle']);
      expect((await waitForOrder(owner, order.order_id)).status).to.equal('completed');
    });
  });

  describe('when a staff member has an own interest in the appeal', () => {
    it('then a staff member sharing the payer’s phone, or named as the payee, is refused 403 and the appeal stays open', async () => {
      const phone = uniqueKenyanPhone();
      const owner = await newUser({ phone });
      const order = await completedPayment(owner);
      const appeal = await openAppeal(owner, order.order_id);
      const samePhone = await newUser({ roles: ['compliance'], phone });
      expectProblem(await decide(samePhone, appeal.appeal_id, 'approve', { note: 'fine' }), 403, 'forbidden');
      expectProblem(await decide(samePhone, appeal.appeal_id, 'reject', { note: 'fine' }), 403, 'forbidden');

      const payee = await newUser({ roles: ['compliance'], phone: '+254712345678' });
      expectProblem(await decide(payee, appeal.appeal_id, 'approve', { note: 'paid to me' }), 403, 'forbidden');
      expect((await api().get(`/api/v1/appeals/${appeal.appeal_id}`).set(compliance.auth)).body as Appeal).to.include({ status: 'open' });
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'settle']);
    });
  });

  describe('when the SLA is shortened in config and nobody decides', () => {
    it('then the appeal becomes expired', async function () {
      this.timeout(30_000);
      const owner = await newUser();
      const order = await completedPayment(owner);
      process.env.APPEAL_SLA_MS = '1500';
      reloadConfig();
      let appeal: Appeal;
      try {
        appeal = await openAppeal(owner, order.order_id);
      } finally {
        delete process.env.APPEAL_SLA_MS;
        reloadConfig();
      }
      expect(appeal.status).to.equal('open');
      const expired = await waitForAppeal(owner, appeal.appeal_id, 'expired', 15_000);
      expect(expired).to.include({ status: 'expired' });
      expect(expired).to.not.have.property('decided_by');
      const result: unknown = await temporalClient().workflow.getHandle(appeal.workflow_id).result();
      expect(result).to.deep.equal({ appealId: appeal.appeal_id, status: 'expired', resolution: null });
      expectProblem(await decide(compliance, appeal.appeal_id, 'approve', { note: 'too late' }), 409, 'conflict');
    });
  });
});
