import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { api, kesAvailable, mpesaPayment, newNamedUser, newUser, uniqueKenyanPhone, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { ledgerKindsOf, rows } from './support/db';
import { fundWallets } from './support/funding';
import { until } from './support/wait';
import { insufficientFunds, realRails } from './support/rails';
import { expectProblem } from './support/problems';
import { ledgerImbalanceByCurrency } from '../repositories/ledger';
import { SANDBOX_SLOW_PHONE } from '../connectors/sandbox';
import { database } from '../platform/database';
import { temporalClient } from '../platform/temporal';
import { payoutBatchWorkflowId } from '../workflows/shared';

/**
 * Bulk payouts (docs/payments.md#bulk-payouts): every item checked before anything moves, the total held from the
 * wallet in one posting, each item paid once as its own order by the `payout-batch` workflow, and the batch hold
 * at zero when the batch ends.
 */

interface BatchBody {
  batch_id: string;
  status: string;
  item_count: number;
  skipped_count: number;
  counts: Record<string, number>;
  sent_amount: string;
  failed_amount: string;
  cancelled_amount: string;
  returned_amount: string;
  progress: number;
  approval_request_id: string | null;
  skipped?: { row: number; reference: string | null; errors: { field: string; message: string }[] }[];
}

interface ItemsBody {
  data: { row: number; reference: string; status: string; order_id: string | null; failure_code: string | null }[];
  next_cursor: string | null;
}

const item = (reference: string, overrides: Record<string, unknown> = {}) => ({
  ...mpesaPayment({ amount: '100.00', destination: { provider: 'mpesa', phone: uniqueKenyanPhone() } }),
  reference,
  ...overrides,
});

const items = (n: number, prefix = 'PAY') => Array.from({ length: n }, (_, i) => item(`${prefix}-${i + 1}`));

async function payerWith(kes: bigint): Promise<TestUser> {
  const payer = await newUser({ funded: false });
  await fundWallets(payer.id, { KES: kes });
  return payer;
}

const postBatch = (user: TestUser, body: Record<string, unknown>, key: string = randomUUID()) =>
  api().post('/api/v1/payouts/batches').set(user.auth).set('Idempotency-Key', key).send(body);

const getBatch = async (user: TestUser, id: string) => (await api().get(`/api/v1/payouts/batches/${id}`).set(user.auth)).body as BatchBody;

const ended = (user: TestUser, id: string, timeoutMs = 40_000) =>
  until(
    `batch ${id} to end`,
    async () => {
      const batch = await getBatch(user, id);
      return batch.status === 'running' ? undefined : batch;
    },
    timeoutMs,
    200,
  );

/** The batch hold's balance (minor units): what the batch still holds from the wallet. */
async function batchHold(batchId: string): Promise<string> {
  const [row] = await rows<{ balance: string }>(
    `SELECT coalesce((SELECT balance_minor::text FROM accounts WHERE account = :account AND currency = 'KES'), '0') AS balance`,
    { account: `hold:batch:${batchId}` },
  );
  return row.balance;
}

const batchesOf = async (user: TestUser) =>
  rows<{ id: string }>('SELECT id FROM payout_batches WHERE user_id = :userId', { userId: user.id });

describe('bulk payouts', () => {
  describe('when one item of a batch is invalid', () => {
    it('then the batch is refused whole, naming the row and field, and nothing is held', async () => {
      const payer = await payerWith(1_000_000n);
      const body = { items: [item('A-1'), item('A-2', { amount: 'ten' }), item('A-3')] };
      const res = await postBatch(payer, body);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      const errors = (res.body as { errors: { field: string }[] }).errors;
      expect(errors.map((e) => e.field)).to.deep.equal(['rows[2].amount']);
      expect(await kesAvailable(payer)).to.equal('10000.00');
      expect(await batchesOf(payer)).to.have.length(0);
    });

    it('then a duplicate reference is named on the later row', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postBatch(payer, { items: [item('DUP'), item('DUP')] });
      expect(res.status).to.equal(400);
      expect((res.body as { errors: { field: string }[] }).errors.map((e) => e.field)).to.deep.equal(['rows[2].reference']);
    });

    it('then with skip_invalid the rest are sent and the invalid one is listed as skipped', async () => {
      const payer = await payerWith(1_000_000n);
      const body = {
        items: [item('B-1'), item('B-2', { destination: { provider: 'mpesa', phone: '12' } }), item('B-3')],
        skip_invalid: true,
      };
      const res = await postBatch(payer, body);
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const accepted = res.body as BatchBody;
      expect(accepted).to.include({ item_count: 2, skipped_count: 1 });
      expect(accepted.skipped?.map((s) => [s.row, s.reference, s.errors[0].field])).to.deep.equal([[2, 'B-2', 'destination.phone']]);
      const done = await ended(payer, accepted.batch_id);
      expect(done).to.include({ status: 'completed', sent_amount: '200.00', progress: 1 });
      expect(done.counts.completed).to.equal(2);
      expect(await kesAvailable(payer)).to.equal('9800.00');
      expect(await batchHold(accepted.batch_id)).to.equal('0');
    });
  });

  describe('when the wallet cannot cover the batch', () => {
    it('then it is 422 insufficient_funds and nothing is held', async () => {
      const payer = await payerWith(25_000n);
      const res = await postBatch(payer, { items: items(3) });
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect((res.body as { code: string }).code).to.equal('insufficient_funds');
      expect(await kesAvailable(payer)).to.equal('250.00');
      expect(await batchesOf(payer)).to.have.length(0);
    });
  });

  describe('when the client retries a batch with the same Idempotency-Key', () => {
    it('then the same batch answers and nothing new is created or held', async () => {
      const payer = await payerWith(1_000_000n);
      const key = randomUUID();
      const body = { items: items(3, 'R') };
      const first = await postBatch(payer, body, key);
      expect(first.status, JSON.stringify(first.body)).to.equal(202);
      const again = await postBatch(payer, body, key);
      expect(again.status).to.equal(202);
      expect((again.body as BatchBody).batch_id).to.equal((first.body as BatchBody).batch_id);
      await ended(payer, (first.body as BatchBody).batch_id);
      expect(await batchesOf(payer)).to.have.length(1);
      const orders = await rows<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE user_id = :userId', { userId: payer.id });
      expect(orders[0].n).to.equal(3);
      expect(await kesAvailable(payer)).to.equal('9700.00');
    });
  });

  describe('when a client starts a payment under the key an item of its batch is paid under', () => {
    it('then the key is refused, so no payment of the client’s can stand in for the item', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postBatch(payer, { items: items(1, 'K') });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const id = (res.body as BatchBody).batch_id;
      expect(await ended(payer, id)).to.include({ status: 'completed', sent_amount: '100.00' });
      const [order] = await rows<{ idempotency_key: string }>('SELECT idempotency_key FROM orders WHERE payout_batch_id = :id', { id });
      const taken = await api()
        .post('/api/v1/payments/initiate')
        .set(payer.auth)
        .set('Idempotency-Key', order.idempotency_key)
        .send(mpesaPayment({ amount: '7.00' }));
      expect(taken.status).to.equal(400);
      const orders = await rows<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE user_id = :userId', { userId: payer.id });
      expect(orders[0].n).to.equal(1);
    });
  });

  describe('when an item fails at the rail', () => {
    it('then its money goes back to the wallet, the others are paid, and the batch hold ends at zero', async () => {
      const payer = await payerWith(1_000_000n);
      const failing = item('F-2', {
        amount: `100.${insufficientFunds.cents}`,
        destination: { provider: 'mpesa', phone: insufficientFunds.phone },
      });
      const res = await postBatch(payer, { items: [item('F-1'), failing, item('F-3')] });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const id = (res.body as BatchBody).batch_id;
      const done = await ended(payer, id);
      const lost = `100.${insufficientFunds.cents}`;
      expect(done).to.include({ status: 'completed', sent_amount: '200.00', failed_amount: lost, returned_amount: lost });
      expect(done.counts).to.include({ completed: 2, failed: 1 });
      const failed = (await api().get(`/api/v1/payouts/batches/${id}/items?status=failed`).set(payer.auth)).body as ItemsBody;
      expect(failed.data.map((i) => [i.reference, i.failure_code])).to.deep.equal([['F-2', 'insufficient_funds']]);
      expect(await kesAvailable(payer)).to.equal('9800.00');
      expect(await batchHold(id)).to.equal('0');
      expect(Object.values(await ledgerImbalanceByCurrency()).every((v) => v === '0')).to.equal(true);
    });
  });

  /**
   * The slow transfer is a sandbox magic value (the real connectors' fakes have none): this case is registered on
   * the sandbox rails only.
   */
  if (!realRails) {
    describe('when an item fails while another is still in flight', () => {
      let restore: () => void;
      beforeEach(() => {
        restore = withEnv({ PAYMENT_POLL_AFTER_MS: '100', PAYMENT_POLL_MAX_INTERVAL_MS: '300' });
      });
      afterEach(() => restore());

      it('then its money is back in the wallet while the batch still runs, once, and the hold ends at zero', async function () {
        this.timeout(90_000);
        const payer = await payerWith(1_000_000n);
        const failing = item('W-1', { amount: '100.13' });
        const slow = item('W-2', { destination: { provider: 'mpesa', phone: SANDBOX_SLOW_PHONE } });
        const res = await postBatch(payer, { items: [failing, slow] });
        expect(res.status, JSON.stringify(res.body)).to.equal(202);
        const id = (res.body as BatchBody).batch_id;

        const failed = await until(
          'the failing item to have its outcome',
          async () => {
            const page = (await api().get(`/api/v1/payouts/batches/${id}/items?status=failed`).set(payer.auth)).body as ItemsBody;
            return page.data[0];
          },
          40_000,
          100,
        );
        expect(failed.reference).to.equal('W-1');
        const running = await getBatch(payer, id);
        expect(running).to.include({ status: 'running', failed_amount: '100.13', returned_amount: '100.13' });
        expect(await kesAvailable(payer)).to.equal('9900.00');
        // The slow item's order holds its own share; the failed item's is no longer in the batch hold.
        expect(await batchHold(id)).to.equal('0');
        expect(Object.values(await ledgerImbalanceByCurrency()).every((v) => v === '0')).to.equal(true);

        const [slowItem] = ((await api().get(`/api/v1/payouts/batches/${id}/items?reference=W-2`).set(payer.auth)).body as ItemsBody).data;
        expect(slowItem.order_id).to.be.a('string');
        await database().query('UPDATE sandbox_transfers SET settles_at = now() WHERE idempotency_key = :orderId', {
          replacements: { orderId: slowItem.order_id },
        });
        const done = await ended(payer, id, 60_000);
        expect(done).to.include({ status: 'completed', sent_amount: '100.00', returned_amount: '100.13' });
        expect(await kesAvailable(payer)).to.equal('9900.00');
        expect(await batchHold(id)).to.equal('0');
        expect((await ledgerKindsOf(failed.order_id as string)).filter((k) => k === 'batch_return')).to.have.length(1);
        expect(Object.values(await ledgerImbalanceByCurrency()).every((v) => v === '0')).to.equal(true);
      });
    });
  }

  describe('when a batch has more items than one run starts', () => {
    let restore: () => void;
    beforeEach(() => {
      restore = withEnv({ BATCH_PAGE_SIZE: '4', BATCH_CONCURRENCY_MOBILE_MONEY: '3' });
    });
    afterEach(() => restore());

    it('then the runs that continue as new hand over the items in flight, and every item is paid once', async function () {
      this.timeout(90_000);
      const payer = await payerWith(1_000_000n);
      const res = await postBatch(payer, {
        items: [
          ...items(10, 'N'),
          item('N-F', { amount: `100.${insufficientFunds.cents}`, destination: { provider: 'mpesa', phone: insufficientFunds.phone } }),
        ],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const id = (res.body as BatchBody).batch_id;
      const done = await ended(payer, id, 60_000);
      expect(done.status).to.equal('completed');
      expect(done.counts).to.include({ completed: 10, failed: 1 });
      const perItem = await rows<{ n: number }>(
        `SELECT count(o.id)::int AS n FROM payout_batch_items i LEFT JOIN orders o ON o.idempotency_key = 'batch ' || i.batch_id || ' ' || i.row_number
          WHERE i.batch_id = :id GROUP BY i.row_number`,
        { id },
      );
      expect(perItem.map((r) => r.n)).to.deep.equal(Array.from({ length: 11 }, () => 1));
      const settles = await rows<{ n: number }>(
        `SELECT count(*)::int AS n FROM ledger_transactions t JOIN orders o ON o.id = t.order_id
          WHERE o.payout_batch_id = :id AND t.kind = 'settle'`,
        { id },
      );
      expect(settles[0].n).to.equal(10);
      expect(await kesAvailable(payer)).to.equal('9000.00');
      expect(await batchHold(id)).to.equal('0');
      const history = await temporalClient().workflow.getHandle(payoutBatchWorkflowId(id)).describe();
      expect(history.runId, 'the batch ended in a later run than its first').to.not.equal(history.raw.workflowExecutionInfo?.firstRunId);
    });
  });

  describe('when a batch runs with three places on its rail', () => {
    let restore: () => void;
    beforeEach(() => {
      restore = withEnv({ BATCH_PAGE_SIZE: '6', BATCH_CONCURRENCY_MOBILE_MONEY: '3' });
    });
    afterEach(() => restore());

    it('then never more than three of its items are in flight at once, and the window is filled', async function () {
      this.timeout(90_000);
      const payer = await payerWith(1_000_000n);
      const res = await postBatch(payer, { items: items(15, 'W') });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const id = (res.body as BatchBody).batch_id;
      const done = await ended(payer, id, 60_000);
      expect(done.counts).to.include({ completed: 15 });
      // An item is in flight from its order's making (the transaction that opens it) to its conclusion (the item's
      // last update): how many were, at the moment each was opened.
      const [{ most }] = await rows<{ most: number }>(
        `WITH flight AS (
           SELECT o.created_at AS opened, i.updated_at AS concluded
             FROM payout_batch_items i JOIN orders o ON o.id = i.order_id WHERE i.batch_id = :id)
         SELECT max((SELECT count(*) FROM flight b WHERE b.opened <= a.opened AND b.concluded > a.opened))::int AS most
           FROM flight a`,
        { id },
      );
      expect(most).to.equal(3);
    });
  });

  describe('when the owner cancels a running batch', () => {
    let restore: () => void;
    beforeEach(() => {
      restore = withEnv({ BATCH_CONCURRENCY_MOBILE_MONEY: '1' });
    });
    afterEach(() => restore());

    it('then items not yet sent are cancelled and their money returns, and each sent item was paid once', async () => {
      const payer = await payerWith(1_000_000n);
      // One in flight at a time and many items: the cancel arrives long before the last could have been sent.
      const res = await postBatch(payer, { items: items(60, 'C') });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const id = (res.body as BatchBody).batch_id;
      const cancel = await api().post(`/api/v1/payouts/batches/${id}/cancel`).set(payer.auth).set('Idempotency-Key', randomUUID());
      expect(cancel.status, JSON.stringify(cancel.body)).to.equal(200);
      const done = await ended(payer, id);
      expect(done.status).to.equal('cancelled');
      expect(done.counts.cancelled).to.be.greaterThan(0);
      expect(done.counts.completed + done.counts.cancelled).to.equal(60);
      const sent = done.counts.completed;
      expect(await kesAvailable(payer)).to.equal(`${(10000 - 100 * sent).toFixed(0)}.00`);
      expect(await batchHold(id)).to.equal('0');
      const orders = await rows<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE payout_batch_id = :id', { id });
      expect(orders[0].n).to.equal(sent);
    });

    it('then another user cannot see or cancel it', async () => {
      const payer = await payerWith(1_000_000n);
      const other = await newUser({ funded: false });
      const res = await postBatch(payer, { items: items(2, 'O') });
      const id = (res.body as BatchBody).batch_id;
      expect((await api().get(`/api/v1/payouts/batches/${id}`).set(other.auth)).status).to.equal(404);
      const cancel = await api().post(`/api/v1/payouts/batches/${id}/cancel`).set(other.auth).set('Idempotency-Key', randomUUID());
      expect(cancel.status).to.equal(404);
      await ended(payer, id);
    });
  });

  describe('when a batch has more items than a page of its items list', () => {
    it('then the items page in row order and filter by reference', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postBatch(payer, { items: items(5, 'P') });
      const id = (res.body as BatchBody).batch_id;
      const first = (await api().get(`/api/v1/payouts/batches/${id}/items?limit=3`).set(payer.auth)).body as ItemsBody;
      expect(first.data.map((i) => i.row)).to.deep.equal([1, 2, 3]);
      const second = (await api().get(`/api/v1/payouts/batches/${id}/items?limit=3&cursor=${first.next_cursor}`).set(payer.auth))
        .body as ItemsBody;
      expect(second.data.map((i) => i.row)).to.deep.equal([4, 5]);
      expect(second.next_cursor).to.equal(null);
      const one = (await api().get(`/api/v1/payouts/batches/${id}/items?reference=P-4`).set(payer.auth)).body as ItemsBody;
      expect(one.data.map((i) => i.row)).to.deep.equal([4]);
      const forged = await api().get(`/api/v1/payouts/batches/${id}/items?cursor=bm9wZQ`).set(payer.auth);
      expect(forged.status).to.equal(400);
      await ended(payer, id);
    });
  });

  describe('when a user lists their batches', () => {
    it('then they see their own only, newest first, paged and filtered by status', async () => {
      const restore = withEnv({ FOUR_EYES_ABOVE_KES: '300' });
      try {
        const payer = await payerWith(1_000_000n);
        const other = await payerWith(1_000_000n);
        const first = ((await postBatch(payer, { items: items(1, 'L1') })).body as BatchBody).batch_id;
        const waiting = ((await postBatch(payer, { items: items(3, 'L2') })).body as BatchBody).batch_id;
        const third = ((await postBatch(payer, { items: items(2, 'L3') })).body as BatchBody).batch_id;
        const theirs = ((await postBatch(other, { items: items(1, 'L4') })).body as BatchBody).batch_id;
        type ListBody = { data: { batch_id: string; status: string }[]; next_cursor: string | null };
        const list = async (user: TestUser, query: string) => {
          const res = await api().get(`/api/v1/payouts/batches${query}`).set(user.auth);
          expect(res.status, res.text).to.equal(200);
          return res.body as ListBody;
        };
        const page1 = await list(payer, '?limit=2');
        expect(page1.data.map((b) => b.batch_id)).to.deep.equal([third, waiting]);
        const page2 = await list(payer, `?limit=2&cursor=${page1.next_cursor}`);
        expect(page2.data.map((b) => b.batch_id)).to.deep.equal([first]);
        expect(page2.next_cursor).to.equal(null);
        const awaitingOnly = await list(payer, '?status=awaiting_approval');
        expect(awaitingOnly.data.map((b) => [b.batch_id, b.status])).to.deep.equal([[waiting, 'awaiting_approval']]);
        expect((await list(other, '')).data.map((b) => b.batch_id)).to.deep.equal([theirs]);
        expectProblem(await api().get('/api/v1/payouts/batches?status=paused').set(payer.auth), 400, 'validation_failed');
        expectProblem(await api().get('/api/v1/payouts/batches?cursor=bm9wZQ').set(payer.auth), 400, 'validation_failed');
      } finally {
        restore();
      }
    });
  });

  describe('when a batch reaches FOUR_EYES_ABOVE_KES (four eyes)', () => {
    let restore: () => void;
    // Three items of KES 100.00 (no fees on the sandbox M-Pesa rail): KES 300.00, exactly the threshold.
    beforeEach(() => {
      restore = withEnv({ FOUR_EYES_ABOVE_KES: '300' });
    });
    afterEach(() => restore());

    const decide = (staff: TestUser, requestId: string, decision: 'approve' | 'reject', note = 'payroll file checked with the payer') =>
      api().post(`/api/v1/compliance/approvals/${requestId}/${decision}`).set(staff.auth).send({ note });

    const staffMember = () => newUser({ roles: ['user', 'compliance'], funded: false });

    /** A batch of three KES 100.00 items that waits for approval: its view, once the wait is checked. */
    async function awaiting(payer: TestUser, prefix: string): Promise<BatchBody> {
      const res = await postBatch(payer, { items: items(3, prefix) });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const accepted = res.body as BatchBody;
      expect(accepted.status).to.equal('awaiting_approval');
      expect(accepted.approval_request_id).to.be.a('string');
      return accepted;
    }

    const eventTypes = async (user: TestUser) => {
      const page = await api().get('/api/v1/events?type=payout_batch.*&limit=100').set(user.auth);
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      return (page.body as { data: { type: string; data: { batch_id: string } }[] }).data;
    };

    it('then a batch at the threshold is held in one posting and waits: nothing is sent and its workflow never starts', async () => {
      const payer = await payerWith(1_000_000n);
      const batch = await awaiting(payer, 'W');
      expect(await batchHold(batch.batch_id)).to.equal('30000');
      expect(await kesAvailable(payer)).to.equal('9700.00');
      // Long enough for a started workflow to have sent its first items.
      await new Promise((r) => setTimeout(r, 1500));
      const still = await getBatch(payer, batch.batch_id);
      expect(still).to.include({ status: 'awaiting_approval', progress: 0 });
      expect(still.counts.pending).to.equal(3);
      const [row] = await rows<{ started: boolean }>(
        'SELECT workflow_started_at IS NOT NULL AS started FROM payout_batches WHERE id = :id',
        {
          id: batch.batch_id,
        },
      );
      expect(row.started).to.equal(false);
      const orders = await rows<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE payout_batch_id = :id', { id: batch.batch_id });
      expect(orders[0].n).to.equal(0);
      const [request] = await rows<{ kind: string; subject_id: string; amount_minor: string; requested_by: string; status: string }>(
        'SELECT kind, subject_id, amount_minor::text AS amount_minor, requested_by, status FROM approval_requests WHERE id = :id',
        { id: batch.approval_request_id },
      );
      expect(request).to.deep.equal({
        kind: 'approve_payout_batch',
        subject_id: batch.batch_id,
        amount_minor: '30000',
        requested_by: payer.id,
        status: 'pending',
      });
    });

    it('then a batch just below it runs at once, with no approval request', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postBatch(payer, { items: [item('U-1'), item('U-2'), item('U-3', { amount: '99.00' })] });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const accepted = res.body as BatchBody;
      expect(accepted).to.include({ status: 'running', approval_request_id: null });
      const done = await ended(payer, accepted.batch_id);
      expect(done).to.include({ status: 'completed', sent_amount: '299.00' });
    });

    it('then neither the owner (even when staff) nor a customer can approve it, and a second staff member’s approval runs it to completed', async () => {
      const owner = await staffMember();
      await fundWallets(owner.id, { KES: 1_000_000n });
      const batch = await awaiting(owner, 'A');
      const requestId = batch.approval_request_id ?? '';
      expectProblem(await decide(owner, requestId, 'approve'), 403, 'forbidden');
      expectProblem(await decide(owner, requestId, 'reject'), 403, 'forbidden');
      const customer = await newUser({ funded: false });
      expect((await decide(customer, requestId, 'approve')).status).to.equal(403);
      expect((await getBatch(owner, batch.batch_id)).status).to.equal('awaiting_approval');

      const checker = await staffMember();
      const approved = await decide(checker, requestId, 'approve');
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      expect(approved.body).to.deep.include({ status: 'approved', result: { batch_id: batch.batch_id, status: 'running' } });
      const done = await ended(owner, batch.batch_id);
      expect(done).to.include({ status: 'completed', sent_amount: '300.00', progress: 1, approval_request_id: requestId });
      expect(await kesAvailable(owner)).to.equal('9700.00');
      expect(await batchHold(batch.batch_id)).to.equal('0');
      const events = (await eventTypes(owner)).filter((e) => e.data.batch_id === batch.batch_id).map((e) => e.type);
      expect(events).to.have.members(['payout_batch.created', 'payout_batch.approved', 'payout_batch.completed']);
      // Decided once: a second approval is refused.
      expectProblem(await decide(await staffMember(), requestId, 'approve'), 409, 'conflict');
    });

    it('then a staff member who shares the owner’s name (a second account of theirs) can neither approve nor reject it', async () => {
      const name = `Achieng Otieno ${randomUUID()
        .replace(/[^a-f]/g, '')
        .slice(0, 6)}`;
      const owner = await newNamedUser(name);
      await fundWallets(owner.id, { KES: 1_000_000n });
      const batch = await awaiting(owner, 'N');
      const twin = await newNamedUser(name, { roles: ['user', 'compliance'] });
      expectProblem(await decide(twin, batch.approval_request_id ?? '', 'approve'), 403, 'forbidden');
      expectProblem(await decide(twin, batch.approval_request_id ?? '', 'reject'), 403, 'forbidden');
      expect((await getBatch(owner, batch.batch_id)).status).to.equal('awaiting_approval');
      expect(await batchHold(batch.batch_id)).to.equal('30000');
    });

    it('then a rejection cancels it and returns the whole hold, and the staff note stays off the customer’s view', async () => {
      const payer = await payerWith(1_000_000n);
      const batch = await awaiting(payer, 'X');
      const note = `refused-${randomUUID()}`;
      const rejected = await decide(await staffMember(), batch.approval_request_id ?? '', 'reject', note);
      expect(rejected.status, JSON.stringify(rejected.body)).to.equal(200);
      expect(rejected.body).to.deep.include({ status: 'rejected', result: { batch_id: batch.batch_id, status: 'cancelled' } });
      const res = await api().get(`/api/v1/payouts/batches/${batch.batch_id}`).set(payer.auth);
      const view = res.body as BatchBody;
      expect(view).to.include({ status: 'cancelled', cancelled_amount: '300.00', returned_amount: '300.00', sent_amount: '0.00' });
      expect(view.counts.cancelled).to.equal(3);
      expect(res.text).not.to.contain(note);
      expect(await kesAvailable(payer)).to.equal('10000.00');
      expect(await batchHold(batch.batch_id)).to.equal('0');
      const orders = await rows<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE payout_batch_id = :id', { id: batch.batch_id });
      expect(orders[0].n).to.equal(0);
      const events = await eventTypes(payer);
      expect(events.filter((e) => e.data.batch_id === batch.batch_id).map((e) => e.type)).to.have.members([
        'payout_batch.created',
        'payout_batch.cancelled',
      ]);
      expect(JSON.stringify(events)).not.to.contain(note);
      expect(Object.values(await ledgerImbalanceByCurrency()).every((v) => v === '0')).to.equal(true);
    });

    it('then its owner may cancel it while it waits: the hold returns at once, and an approval afterwards is refused', async () => {
      const payer = await payerWith(1_000_000n);
      const batch = await awaiting(payer, 'K');
      const cancel = await api()
        .post(`/api/v1/payouts/batches/${batch.batch_id}/cancel`)
        .set(payer.auth)
        .set('Idempotency-Key', randomUUID());
      expect(cancel.status, JSON.stringify(cancel.body)).to.equal(200);
      expect(cancel.body).to.include({ status: 'cancelled', cancel_requested: true, returned_amount: '300.00' });
      expect(await kesAvailable(payer)).to.equal('10000.00');
      expect(await batchHold(batch.batch_id)).to.equal('0');
      const requestId = batch.approval_request_id ?? '';
      expectProblem(await decide(await staffMember(), requestId, 'approve'), 409, 'conflict');
      expect((await getBatch(payer, batch.batch_id)).status).to.equal('cancelled');
      // The request is closed by rejecting it; the money is not returned twice.
      expect((await decide(await staffMember(), requestId, 'reject')).status).to.equal(200);
      expect(await kesAvailable(payer)).to.equal('10000.00');
    });

    it('then another customer can neither see nor cancel it', async () => {
      const payer = await payerWith(1_000_000n);
      const batch = await awaiting(payer, 'Q');
      const other = await newUser({ funded: false });
      expect((await api().get(`/api/v1/payouts/batches/${batch.batch_id}`).set(other.auth)).status).to.equal(404);
      const cancel = await api()
        .post(`/api/v1/payouts/batches/${batch.batch_id}/cancel`)
        .set(other.auth)
        .set('Idempotency-Key', randomUUID());
      expect(cancel.status).to.equal(404);
      expect((await getBatch(payer, batch.batch_id)).status).to.equal('awaiting_approval');
    });
  });
});
