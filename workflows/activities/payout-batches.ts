import { ApplicationFailure } from '@temporalio/activity';
import { isTerminal } from '../../domain/orders';
import { uuidv7 } from '../../platform/ids';
import { createOrder, findOrder, findOrderByIdempotencyKey } from '../../repositories/orders';
import {
  concludePayoutBatchItem,
  finishPayoutBatch,
  findPayoutBatch,
  listPayoutBatchItems,
  lockPayoutBatchItem,
  recordPayoutBatchItem,
  type BatchItemBody,
} from '../../repositories/payout-batches';
import { inTransaction, isDuplicate } from '../../repositories/transaction';
import { paymentWorkflowId, type PayoutMethod } from '../shared';

/**
 * The `payout-batch` workflow's steps (docs/payments.md#bulk-payouts). Each is idempotent on (batch, row): an
 * item's order is created once, under the idempotency key `batch:<batch_id>:<row>`, so a retry or a replay
 * after a worker died finds the order it made.
 */

interface BatchRef {
  batchId: string;
}
interface ItemRef extends BatchRef {
  row: number;
}

const itemKey = (batchId: string, row: number): string => `batch:${batchId}:${row}`;

/**
 * Make the item's order, once, and mark the item `sent`; nothing when the batch is being cancelled (the item
 * is cancelled) or the item was already sent (its order is returned).
 */
async function openItem({ batchId, row }: ItemRef): Promise<{ orderId: string | null }> {
  return inTransaction(async (tx) => {
    const batch = await findPayoutBatch(batchId, tx);
    const item = await lockPayoutBatchItem(batchId, row, tx);
    if (!batch || !item) throw ApplicationFailure.nonRetryable(`payout batch item ${batchId}/${row} not found`, 'NotFound');
    if (item.order_id) return { orderId: item.order_id };
    if (item.status !== 'pending') return { orderId: null };
    if (batch.cancel_requested_at) {
      await recordPayoutBatchItem(batchId, row, { status: 'cancelled' }, tx);
      return { orderId: null };
    }
    const body = item.body as unknown as BatchItemBody;
    const key = itemKey(batchId, row);
    const id = uuidv7();
    let orderId: string;
    try {
      const order = await createOrder(
        {
          id,
          userId: batch.user_id,
          idempotencyKey: key,
          amountMinor: body.amount_minor,
          feeMinor: item.fee_minor,
          kesEquivalentMinor: body.kes_equivalent_minor,
          currency: body.currency,
          method: body.method,
          destination: body.destination,
          description: body.description,
          reference: item.reference,
          route: body.route,
          workflowId: paymentWorkflowId(id),
          payoutBatchId: batchId,
        },
        tx,
      );
      orderId = order.id;
    } catch (err) {
      if (!isDuplicate(err)) throw err;
      const existing = await findOrderByIdempotencyKey(batch.user_id, key);
      if (!existing) throw err;
      orderId = existing.id;
    }
    await recordPayoutBatchItem(batchId, row, { status: 'sent', orderId }, tx);
    return { orderId };
  });
}

/**
 * Record the item's outcome from its order, once the order has one; returns whether it has. A failed or
 * rejected item's share goes back to the wallet in the same transaction, once.
 */
async function concludeItem({ batchId, row, orderId }: ItemRef & { orderId: string }): Promise<boolean> {
  const order = await findOrder(orderId);
  if (!order || !isTerminal(order.status)) return false;
  // A reversed order was sent (and refunded afterwards, on appeal, to the wallet).
  const status =
    order.status === 'completed' || order.status === 'reversed' ? 'completed' : order.status === 'rejected' ? 'rejected' : 'failed';
  await inTransaction((tx) => concludePayoutBatchItem(batchId, row, { status, failureCode: order.failureCode }, tx));
  return true;
}

export function createPayoutBatchActivities() {
  return {
    /** The next items to send, after `afterRow`, and whether a cancel was asked for. */
    async nextBatchItems({ batchId, afterRow, limit }: BatchRef & { afterRow: number; limit: number }) {
      const batch = await findPayoutBatch(batchId);
      if (!batch) throw ApplicationFailure.nonRetryable(`payout batch ${batchId} not found`, 'NotFound');
      const rows = batch.cancel_requested_at || batch.status !== 'running' ? [] : await listPayoutBatchItems(batchId, { afterRow }, limit);
      return {
        cancelRequested: batch.cancel_requested_at !== null,
        items: rows
          .filter((r) => r.status === 'pending' || r.status === 'sent')
          .map((r) => ({ row: r.row_number, method: r.method as PayoutMethod, orderId: r.order_id })),
        lastRow: rows.at(-1)?.row_number ?? null,
      };
    },

    /**
     * Make the item's order, once, and mark the item `sent`; nothing when the batch is being cancelled (the item
     * is cancelled) or the item was already sent (its order is returned).
     */
    openBatchItem: openItem,

    /** `openBatchItem` for each row, in order, each in its own transaction: the order id by row (null: not sent). */
    async openBatchItems({ batchId, rows }: BatchRef & { rows: number[] }): Promise<{ opened: Record<number, string | null> }> {
      const opened: Record<number, string | null> = {};
      for (const row of rows) opened[row] = (await openItem({ batchId, row })).orderId;
      return { opened };
    },

    /** Record the item's outcome from its order, once the order has one; returns whether it has. */
    concludeBatchItem: concludeItem,

    /** `concludeBatchItem` for each item: the rows that now have their outcome recorded. */
    async concludeBatchItems({
      batchId,
      items,
    }: BatchRef & { items: { row: number; orderId: string }[] }): Promise<{ concluded: number[] }> {
      const concluded: number[] = [];
      for (const { row, orderId } of items) if (await concludeItem({ batchId, row, orderId })) concluded.push(row);
      return { concluded };
    },

    /** End the batch: unsent items cancelled, what is left of its hold back to the wallet, its status final. */
    async finishBatch({ batchId }: BatchRef): Promise<'completed' | 'cancelled' | 'running'> {
      return inTransaction((tx) => finishPayoutBatch(batchId, tx));
    },
  };
}

export type PayoutBatchActivities = ReturnType<typeof createPayoutBatchActivities>;
