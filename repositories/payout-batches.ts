import { QueryTypes } from 'sequelize';
import { models } from '../models';
import type { PayoutBatchItemStatus, PayoutBatchStatus } from '../models/payout-batch';
import type { Destination, PaymentMethod } from '../domain/orders';
import type { BankRoute } from '../domain/discovery/routing';

export type { PayoutBatchItemStatus, PayoutBatchStatus };
import { BATCH_HOLD, BATCH_RELEASE, BATCH_RETURN, batchHoldAccount, payerWallet, transfer } from '../domain/ledger';
import { balanceOf, postLines } from './ledger';
import { queryRows, type Tx } from './transaction';

/**
 * Bulk payouts (`payout_batches`, `payout_batch_items`; docs/payments.md#bulk-payouts): a batch, its items, and
 * the batch's own postings — its total and fees held from the payer's wallet at once (`batch_hold`), each failed
 * or rejected item's share given back as its outcome is recorded (`batch_return`, once per item's order), and
 * what is left of that hold given back when the batch ends (`batch_release`).
 */

/** What an item was accepted as (`payout_batch_items.body`): the checked request, ready to become an order. */
export interface BatchItemBody {
  amount_minor: string;
  currency: string;
  method: PaymentMethod;
  destination: Destination;
  description: string | null;
  route: BankRoute | null;
  kes_equivalent_minor: string;
}

export interface NewPayoutBatch {
  id: string;
  userId: string;
  idempotencyKey: string;
  currency: string;
  skippedCount: number;
  totalAmountMinor: bigint;
  totalFeeMinor: bigint;
  workflowId: string;
  /** True when the batch waits for a second staff member's approval before its workflow starts (four eyes). */
  awaitingApproval?: boolean;
}

export interface NewPayoutBatchItem {
  rowNumber: number;
  reference: string;
  method: string;
  amountMinor: bigint;
  feeMinor: bigint;
  body: Record<string, unknown>;
}

export interface PayoutBatchRow {
  id: string;
  user_id: string;
  currency: string;
  status: PayoutBatchStatus;
  item_count: number;
  skipped_count: number;
  total_amount_minor: string;
  total_fee_minor: string;
  workflow_id: string;
  workflow_started_at: Date | null;
  cancel_requested_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface PayoutBatchItemRow {
  row_number: number;
  reference: string;
  method: string;
  amount_minor: string;
  fee_minor: string;
  body: Record<string, unknown>;
  status: PayoutBatchItemStatus;
  order_id: string | null;
  failure_code: string | null;
  updated_at: Date;
}

const BATCH_COLUMNS = `id, user_id, currency, status, item_count, skipped_count, total_amount_minor::text AS total_amount_minor,
  total_fee_minor::text AS total_fee_minor, workflow_id, workflow_started_at, cancel_requested_at, finished_at, created_at, updated_at`;
const ITEM_COLUMNS = `row_number, reference, method, amount_minor::text AS amount_minor, fee_minor::text AS fee_minor, body, status,
  order_id, failure_code, updated_at`;
/** Items are written this many to a statement. */
const INSERT_CHUNK = 1000;

/**
 * Record a batch and its items, and hold its total and fees from the payer's wallet, inside `tx`: one
 * posting, refused by the database when the wallet cannot cover it (`InsufficientFunds`, nothing recorded
 * once the transaction rolls back). A second batch under the same (user, key) is refused (`isDuplicate`).
 */
export async function createPayoutBatch(batch: NewPayoutBatch, items: NewPayoutBatchItem[], tx: Tx): Promise<void> {
  await queryRows(
    `INSERT INTO payout_batches (id, user_id, idempotency_key, currency, item_count, skipped_count, total_amount_minor,
                                 total_fee_minor, workflow_id, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      batch.id,
      batch.userId,
      batch.idempotencyKey,
      batch.currency,
      items.length,
      batch.skippedCount,
      batch.totalAmountMinor.toString(),
      batch.totalFeeMinor.toString(),
      batch.workflowId,
      batch.awaitingApproval ? 'awaiting_approval' : 'running',
    ],
    tx,
  );
  for (let i = 0; i < items.length; i += INSERT_CHUNK) {
    const chunk = items.slice(i, i + INSERT_CHUNK);
    await queryRows(
      `INSERT INTO payout_batch_items (batch_id, row_number, reference, method, amount_minor, fee_minor, body)
       SELECT $1, r, ref, m, a, f, b
         FROM unnest($2::int[], $3::text[], $4::text[], $5::numeric[], $6::numeric[], $7::jsonb[]) AS i (r, ref, m, a, f, b)`,
      [
        batch.id,
        chunk.map((it) => it.rowNumber),
        chunk.map((it) => it.reference),
        chunk.map((it) => it.method),
        chunk.map((it) => it.amountMinor.toString()),
        chunk.map((it) => it.feeMinor.toString()),
        chunk.map((it) => JSON.stringify(it.body)),
      ],
      tx,
    );
  }
  const total = (batch.totalAmountMinor + batch.totalFeeMinor).toString();
  await postLines(tx, {
    payoutBatchId: batch.id,
    kind: BATCH_HOLD,
    currency: batch.currency,
    lines: transfer(payerWallet({ userId: batch.userId, currency: batch.currency }), batchHoldAccount(batch.id), total),
  });
}

export async function findPayoutBatch(batchId: string, tx?: Tx): Promise<PayoutBatchRow | null> {
  const [row] = await queryRows<PayoutBatchRow>(`SELECT ${BATCH_COLUMNS} FROM payout_batches WHERE id = $1`, [batchId], tx);
  return row ?? null;
}

export async function findPayoutBatchByKey(userId: string, idempotencyKey: string): Promise<PayoutBatchRow | null> {
  const [row] = await queryRows<PayoutBatchRow>(`SELECT ${BATCH_COLUMNS} FROM payout_batches WHERE user_id = $1 AND idempotency_key = $2`, [
    userId,
    idempotencyKey,
  ]);
  return row ?? null;
}

/** A user's batches (in one status, or any when null), newest first, keyset-paged on the time-ordered id. */
export async function listUserPayoutBatches(
  userId: string,
  status: PayoutBatchStatus | null,
  before: string | null,
  take: number,
): Promise<PayoutBatchRow[]> {
  return queryRows<PayoutBatchRow>(
    `SELECT ${BATCH_COLUMNS} FROM payout_batches
      WHERE user_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [userId, status, before, take],
  );
}

export async function markPayoutBatchStarted(batchId: string): Promise<void> {
  await queryRows('UPDATE payout_batches SET workflow_started_at = coalesce(workflow_started_at, now()) WHERE id = $1', [batchId]);
}

/** Ask a running batch to stop sending; returns the batch as it now stands (null when there is none). */
export async function requestPayoutBatchCancel(batchId: string): Promise<PayoutBatchRow | null> {
  await queryRows(
    `UPDATE payout_batches SET cancel_requested_at = now(), updated_at = now()
      WHERE id = $1 AND status = 'running' AND cancel_requested_at IS NULL`,
    [batchId],
  );
  return findPayoutBatch(batchId);
}

export interface PayoutBatchTally {
  status: PayoutBatchItemStatus;
  n: number;
  amount_minor: string;
  fee_minor: string;
}

/** The batch's items counted and summed by status. */
export async function payoutBatchTally(batchId: string): Promise<PayoutBatchTally[]> {
  return queryRows<PayoutBatchTally>(
    `SELECT status, count(*)::int AS n, sum(amount_minor)::text AS amount_minor, sum(fee_minor)::text AS fee_minor
       FROM payout_batch_items WHERE batch_id = $1 GROUP BY status`,
    [batchId],
  );
}

/**
 * What the batch has given back to the wallet (minor units): each failed or rejected item's `batch_return`, and
 * the `batch_release` of what was left when the batch ended.
 */
export async function payoutBatchReturned(batchId: string): Promise<string> {
  const [row] = await queryRows<{ returned: string }>(
    `SELECT (coalesce((SELECT sum(e.amount_minor)
                         FROM payout_batch_items i
                         JOIN ledger_transactions t ON t.order_id = i.order_id AND t.kind = $3
                         JOIN ledger_entries e ON e.transaction_id = t.id AND e.direction = 'credit'
                        WHERE i.batch_id = $1 AND i.status IN ('failed', 'rejected')), 0)
           + coalesce((SELECT sum(e.amount_minor)
                         FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id AND e.direction = 'credit'
                        WHERE t.payout_batch_id = $1 AND t.kind = $2), 0))::text AS returned`,
    [batchId, BATCH_RELEASE, BATCH_RETURN],
  );
  return row.returned;
}

export interface PayoutBatchItemFilter {
  status?: PayoutBatchItemStatus;
  reference?: string;
  /** Keyset: only rows after this row number. */
  afterRow?: number;
}

/** A batch's items in row order, keyset-paged on the row number. */
export async function listPayoutBatchItems(batchId: string, filter: PayoutBatchItemFilter, limit: number): Promise<PayoutBatchItemRow[]> {
  return queryRows<PayoutBatchItemRow>(
    `SELECT ${ITEM_COLUMNS} FROM payout_batch_items
      WHERE batch_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR reference = $3) AND row_number > $4
      ORDER BY row_number LIMIT $5`,
    [batchId, filter.status ?? null, filter.reference ?? null, filter.afterRow ?? 0, limit],
  );
}

export async function lockPayoutBatchItem(batchId: string, rowNumber: number, tx: Tx): Promise<PayoutBatchItemRow | null> {
  const [row] = await queryRows<PayoutBatchItemRow>(
    `SELECT ${ITEM_COLUMNS} FROM payout_batch_items WHERE batch_id = $1 AND row_number = $2 FOR UPDATE`,
    [batchId, rowNumber],
    tx,
  );
  return row ?? null;
}

/** These items of the batch, locked (`FOR UPDATE`) for the rest of `tx`, in row order. */
export async function lockPayoutBatchItems(batchId: string, rowNumbers: number[], tx: Tx): Promise<PayoutBatchItemRow[]> {
  return queryRows<PayoutBatchItemRow>(
    `SELECT ${ITEM_COLUMNS} FROM payout_batch_items WHERE batch_id = $1 AND row_number = ANY($2::int[]) ORDER BY row_number FOR UPDATE`,
    [batchId, rowNumbers],
    tx,
  );
}

/** Move items on, in one statement: to `sent`, each with its order (only items not yet at an outcome move). */
export async function markPayoutBatchItemsSent(batchId: string, sent: { row: number; orderId: string }[], tx: Tx): Promise<void> {
  if (sent.length === 0) return;
  await queryRows(
    `UPDATE payout_batch_items i SET status = 'sent', order_id = s.order_id, updated_at = now()
       FROM unnest($2::int[], $3::uuid[]) AS s (row_number, order_id)
      WHERE i.batch_id = $1 AND i.row_number = s.row_number AND i.status IN ('pending', 'sent')`,
    [batchId, sent.map((s) => s.row), sent.map((s) => s.orderId)],
    tx,
  );
}

/** Move an item on: to `sent` with its order, or to `cancelled`. Only an item not yet at an outcome moves. */
export async function recordPayoutBatchItem(
  batchId: string,
  rowNumber: number,
  change: { status: PayoutBatchItemStatus; orderId?: string; failureCode?: string | null },
  tx?: Tx,
): Promise<void> {
  await queryRows(
    `UPDATE payout_batch_items SET status = $3, order_id = coalesce($4, order_id), failure_code = $5, updated_at = now()
      WHERE batch_id = $1 AND row_number = $2 AND status IN ('pending', 'sent')`,
    [batchId, rowNumber, change.status, change.orderId ?? null, change.failureCode ?? null],
    tx,
  );
}

/** What is left of the batch hold goes back to the payer's wallet, in one `batch_release` posting. */
async function releaseBatchHold(batch: PayoutBatchRow, tx: Tx): Promise<void> {
  const left = await balanceOf(batchHoldAccount(batch.id), batch.currency, tx);
  if (BigInt(left) > 0n) {
    await postLines(tx, {
      payoutBatchId: batch.id,
      kind: BATCH_RELEASE,
      currency: batch.currency,
      lines: transfer(batchHoldAccount(batch.id), payerWallet({ userId: batch.user_id, currency: batch.currency }), left),
    });
  }
}

const lockPayoutBatch = async (batchId: string, tx: Tx): Promise<PayoutBatchRow | null> =>
  (await queryRows<PayoutBatchRow>(`SELECT ${BATCH_COLUMNS} FROM payout_batches WHERE id = $1 FOR UPDATE`, [batchId], tx))[0] ?? null;

/**
 * Record a sent item's outcome inside `tx`, once: the item moves to `completed`, `failed` or `rejected` (only
 * from `pending` or `sent`), and a failed or rejected item's share — its amount and fee, back in the batch hold
 * since its order's own failure path released it there, or never held it — goes to the payer's wallet in one
 * `batch_return` posting whose subject is the item's order: at most once per item (the database's
 * once-per-(order, kind) index), and never more than the batch hold has (the database refuses an overdraft).
 */
export async function concludePayoutBatchItem(
  batchId: string,
  rowNumber: number,
  outcome: { status: 'completed' | 'failed' | 'rejected'; failureCode: string | null },
  tx: Tx,
): Promise<void> {
  const [item] = await queryRows<{
    order_id: string | null;
    status: PayoutBatchItemStatus;
    share: string;
    user_id: string;
    currency: string;
  }>(
    `SELECT i.order_id, i.status, (i.amount_minor + i.fee_minor)::text AS share, b.user_id, b.currency
       FROM payout_batch_items i JOIN payout_batches b ON b.id = i.batch_id
      WHERE i.batch_id = $1 AND i.row_number = $2
        FOR UPDATE OF i`,
    [batchId, rowNumber],
    tx,
  );
  if (!item?.order_id) throw new Error(`payout batch item ${batchId}/${rowNumber} has no order`);
  const status = item.status === 'pending' || item.status === 'sent' ? outcome.status : item.status;
  if (status !== item.status) await recordPayoutBatchItem(batchId, rowNumber, outcome, tx);
  if (status !== 'failed' && status !== 'rejected') return;
  await postLines(tx, {
    orderId: item.order_id,
    kind: BATCH_RETURN,
    currency: item.currency,
    lines: transfer(batchHoldAccount(batchId), payerWallet({ userId: item.user_id, currency: item.currency }), item.share),
  });
}

/**
 * `concludePayoutBatchItem` for many items inside `tx`: their outcomes recorded in one statement (only items
 * from `pending` or `sent` move), then each of those that failed or was rejected gives its share back in its
 * own `batch_return` posting, once.
 */
export async function concludePayoutBatchItems(
  batchId: string,
  outcomes: { row: number; status: 'completed' | 'failed' | 'rejected'; failureCode: string | null }[],
  tx: Tx,
): Promise<void> {
  if (outcomes.length === 0) return;
  const moved = await queryRows<{ order_id: string; status: PayoutBatchItemStatus; share: string; user_id: string; currency: string }>(
    `WITH moved AS (
       UPDATE payout_batch_items i SET status = o.status, failure_code = o.failure_code, updated_at = now()
         FROM unnest($2::int[], $3::text[], $4::text[]) AS o (row_number, status, failure_code)
        WHERE i.batch_id = $1 AND i.row_number = o.row_number AND i.status IN ('pending', 'sent') AND i.order_id IS NOT NULL
        RETURNING i.order_id, i.status, (i.amount_minor + i.fee_minor)::text AS share)
     SELECT m.order_id, m.status, m.share, b.user_id, b.currency FROM moved m, payout_batches b WHERE b.id = $1`,
    [batchId, outcomes.map((o) => o.row), outcomes.map((o) => o.status), outcomes.map((o) => o.failureCode)],
    tx,
  );
  for (const item of moved) {
    if (item.status !== 'failed' && item.status !== 'rejected') continue;
    await postLines(tx, {
      orderId: item.order_id,
      kind: BATCH_RETURN,
      currency: item.currency,
      lines: transfer(batchHoldAccount(batchId), payerWallet({ userId: item.user_id, currency: item.currency }), item.share),
    });
  }
}

/**
 * End the batch inside `tx`, once: the items never sent are cancelled, what is left of the batch hold (the
 * cancelled items' shares; the failed ones' went back as each failed) goes back to the payer's wallet in one posting, and the batch is `completed`, or
 * `cancelled` when a cancel was asked for.
 */
export async function finishPayoutBatch(batchId: string, tx: Tx): Promise<Exclude<PayoutBatchStatus, 'awaiting_approval'>> {
  const batch = await lockPayoutBatch(batchId, tx);
  if (!batch) throw new Error(`payout batch ${batchId} not found`);
  if (batch.status === 'awaiting_approval') return 'running';
  if (batch.status !== 'running') return batch.status;
  await queryRows(
    `UPDATE payout_batch_items SET status = 'cancelled', updated_at = now() WHERE batch_id = $1 AND status = 'pending'`,
    [batchId],
    tx,
  );
  await releaseBatchHold(batch, tx);
  const status = batch.cancel_requested_at ? 'cancelled' : 'completed';
  await queryRows(`UPDATE payout_batches SET status = $2, finished_at = now(), updated_at = now() WHERE id = $1`, [batchId, status], tx);
  return status;
}

/**
 * Approve a batch awaiting approval, inside `tx`: it becomes `running` (the event `payout_batch.approved`), for
 * its workflow to be started once `tx` commits. Returns the batch as it stood before, locked; only a batch
 * still awaiting approval changes.
 */
export async function approvePayoutBatch(batchId: string, tx: Tx): Promise<PayoutBatchRow | null> {
  const batch = await lockPayoutBatch(batchId, tx);
  if (batch?.status === 'awaiting_approval') {
    await queryRows(`UPDATE payout_batches SET status = 'running', updated_at = now() WHERE id = $1`, [batchId], tx);
  }
  return batch;
}

/**
 * Cancel a batch awaiting approval, inside `tx` (rejected, or cancelled by its owner): no item was sent, so every
 * item is cancelled and the whole hold goes back to the wallet in one `batch_release`; the batch is `cancelled`.
 * Returns the batch as it stood before, locked; only a batch still awaiting approval changes.
 */
export async function cancelAwaitingPayoutBatch(batchId: string, tx: Tx): Promise<PayoutBatchRow | null> {
  const batch = await lockPayoutBatch(batchId, tx);
  if (batch?.status !== 'awaiting_approval') return batch;
  await queryRows(
    `UPDATE payout_batch_items SET status = 'cancelled', updated_at = now() WHERE batch_id = $1 AND status = 'pending'`,
    [batchId],
    tx,
  );
  await releaseBatchHold(batch, tx);
  await queryRows(
    `UPDATE payout_batches SET status = 'cancelled', cancel_requested_at = now(), finished_at = now(), updated_at = now()
      WHERE id = $1`,
    [batchId],
    tx,
  );
  return batch;
}

/** Batches still running whose workflow never started (Temporal was down when they were accepted). */
export async function unstartedPayoutBatches(graceMs: number, limit: number): Promise<{ id: string }[]> {
  return models().query<{ id: string }>(
    `SELECT id FROM payout_batches WHERE status = 'running' AND workflow_started_at IS NULL
        AND created_at < now() - make_interval(secs => :grace) ORDER BY created_at LIMIT :limit`,
    { replacements: { grace: graceMs / 1000, limit }, type: QueryTypes.SELECT },
  );
}
