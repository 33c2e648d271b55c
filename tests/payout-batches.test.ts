import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { api, kesAvailable, mpesaPayment, newUser, uniqueKenyanPhone, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { ledgerKindsOf, rows } from './support/db';
import { fundWallets } from './support/funding';
import { until } from './support/wait';
import { insufficientFunds, realRails } from './support/rails';
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
        `SELECT count(o.id)::int AS n FROM payout_batch_items i LEFT JOIN orders o ON o.idempotency_key = 'batch:' || i.batch_id || ':' || i.row_number
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

  describe('when the owner cancels a running batch', () => {
    let restore: () => void;
    beforeEach(() => {
      restore = withEnv({ BATCH_CONCURRENCY_MOBILE_MONEY: '1' });
    });
    afterEach(() => restore());

    it('then items not yet sent are cancelled and their money returns, and each sent item was paid once', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postBatch(payer, { items: items(15, 'C') });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const id = (res.body as BatchBody).batch_id;
      const cancel = await api().post(`/api/v1/payouts/batches/${id}/cancel`).set(payer.auth).set('Idempotency-Key', randomUUID());
      expect(cancel.status, JSON.stringify(cancel.body)).to.equal(200);
      const done = await ended(payer, id);
      expect(done.status).to.equal('cancelled');
      expect(done.counts.cancelled).to.be.greaterThan(0);
      expect(done.counts.completed + done.counts.cancelled).to.equal(15);
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
});
