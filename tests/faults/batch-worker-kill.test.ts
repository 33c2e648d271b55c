import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { newCustomer, type Customer } from './support/client';
import { query } from './support/db';
import { Deployment, type PaygateProcess } from './support/paygate';
import { score } from './support/scoreboard';
import { sleep, until } from './support/wait';
import { faultStack } from './setup';

const ITEMS = 200;
/** The worker dies once this many items have an outcome, and again at the second figure. */
const KILL_AT = [40, 120];
const ITEM_AMOUNT_MINOR = 10_000n;

/** POST /payouts/batches, sent again with the same key until the api answers for good (as a careful client does). */
async function postBatch(
  baseUrl: string,
  customer: Customer,
  body: unknown,
  key: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const res = await fetch(`${baseUrl}/api/v1/payouts/batches`, {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/json',
          authorization: `Bearer ${customer.token}`,
          'idempotency-key': key,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const answer = { status: res.status, body: (await res.json()) as Record<string, unknown> };
      if (![409, 429, 500, 502, 503, 504].includes(answer.status) || attempt >= 20) return answer;
    } catch (err) {
      if (attempt >= 20) throw err;
    }
    await sleep(500);
  }
}

const outcomes = async (batchId: string): Promise<number> => {
  const [row] = await query<{ n: number }>(
    `SELECT count(*)::int AS n FROM payout_batch_items WHERE batch_id = $1 AND status NOT IN ('pending', 'sent')`,
    [batchId],
  );
  return row.n;
};

describe('faults: the Temporal worker is SIGKILLed in the middle of a bulk payout', () => {
  let deployment: Deployment;
  let api: PaygateProcess;
  let worker: PaygateProcess;

  before(async function () {
    this.timeout(120_000);
    // Small runs, so that the kills land while items are handed from one run of the batch to the next.
    deployment = new Deployment('batch-kills', faultStack.infra, { BATCH_PAGE_SIZE: '25', BATCH_CONCURRENCY_MOBILE_MONEY: '10' });
    api = await deployment.startApi();
    worker = await deployment.startWorker(api);
  });
  after(async function () {
    this.timeout(60_000);
    await deployment?.stopAll();
  });

  it(`when the worker is killed ${KILL_AT.length} times during a batch of ${ITEMS} payouts and restarted each time, then every item is paid exactly once and the batch hold ends at zero`, async function () {
    this.timeout(300_000);
    const customer = await newCustomer(api.baseUrl);
    const items = Array.from({ length: ITEMS }, (_, i) => ({
      reference: `KILL-${i + 1}`,
      amount: (ITEM_AMOUNT_MINOR / 100n).toString() + '.00',
      currency: 'KES',
      method: 'mobile_money',
      destination: { provider: 'mpesa', phone: '+254712345678' },
    }));
    const key = randomUUID();
    const accepted = await postBatch(api.baseUrl, customer, { items }, key);
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
    const batchId = accepted.body.batch_id as string;

    const doneAtKill: number[] = [];
    for (const at of KILL_AT) {
      await until(`${at} items to have an outcome`, async () => ((await outcomes(batchId)) >= at ? true : undefined), 120_000, 50);
      await worker.kill();
      doneAtKill.push(await outcomes(batchId));
      await worker.start();
    }
    // The client retries the same batch: it is answered with the same batch, and nothing new is created.
    const again = await postBatch(api.baseUrl, customer, { items }, key);
    expect(again.body.batch_id).to.equal(batchId);

    await until(
      'the batch to end',
      async () => {
        const [batch] = await query<{ status: string }>('SELECT status FROM payout_batches WHERE id = $1', [batchId]);
        return batch.status === 'running' ? undefined : batch.status;
      },
      180_000,
      250,
    );

    const perItem = await query<{ row_number: number; status: string; orders: number; transfers: number; settles: number; holds: number }>(
      `SELECT i.row_number, i.status,
              (SELECT count(*) FROM orders o WHERE o.user_id = $2 AND o.idempotency_key = 'batch ' || i.batch_id || ' ' || i.row_number)::int AS orders,
              (SELECT count(*) FROM sandbox_transfers s WHERE s.idempotency_key = i.order_id::text)::int AS transfers,
              (SELECT count(*) FROM ledger_transactions t WHERE t.order_id = i.order_id AND t.kind = 'settle')::int AS settles,
              (SELECT count(*) FROM ledger_transactions t WHERE t.order_id = i.order_id AND t.kind = 'hold')::int AS holds
         FROM payout_batch_items i WHERE i.batch_id = $1 ORDER BY i.row_number`,
      [batchId, customer.userId],
    );
    const [hold] = await query<{ balance: string }>(
      `SELECT coalesce((SELECT balance_minor::text FROM accounts WHERE account = $1 AND currency = 'KES'), '0') AS balance`,
      [`hold:batch:${batchId}`],
    );
    const [wallet] = await query<{ balance: string }>(
      `SELECT balance_minor::text AS balance FROM accounts WHERE account = $1 AND currency = 'KES'`,
      [`wallet:${customer.userId}:KES`],
    );
    const [batches] = await query<{ n: number }>('SELECT count(*)::int AS n FROM payout_batches WHERE user_id = $1', [customer.userId]);
    const completed = perItem.filter((i) => i.status === 'completed').length;
    const duplicates = perItem.reduce(
      (sum, i) => sum + Math.max(0, i.orders - 1) + Math.max(0, i.transfers - 1) + Math.max(0, i.settles - 1),
      0,
    );
    score({
      scenario: 'worker SIGKILL mid-batch',
      injected: KILL_AT.length,
      recovered: completed === ITEMS ? KILL_AT.length : 0,
      requests: ITEMS,
      lost: ITEMS - completed,
      duplicates,
      note: `${ITEMS} items; items with an outcome at each kill: ${doneAtKill.join(', ')}`,
    });

    expect(perItem.filter((i) => i.status !== 'completed').map((i) => [i.row_number, i.status])).to.deep.equal([]);
    for (const i of perItem) {
      expect({ orders: i.orders, transfers: i.transfers, holds: i.holds, settles: i.settles }, `item ${i.row_number}`).to.deep.equal({
        orders: 1,
        transfers: 1,
        holds: 1,
        settles: 1,
      });
    }
    expect(batches.n, 'batches of the customer').to.equal(1);
    expect(hold.balance, 'the batch hold').to.equal('0');
    expect(BigInt(wallet.balance)).to.equal(1_000_000_000n - BigInt(ITEMS) * ITEM_AMOUNT_MINOR);
    expect(worker.unexpectedExits + api.unexpectedExits, 'processes that died on their own').to.equal(0);
  });
});
