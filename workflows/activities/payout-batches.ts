import { ApplicationFailure } from '@temporalio/activity';
import { isTerminal, type OrderStatus } from '../../domain/orders';
import { uuidv7 } from '../../platform/ids';
import { createOrder, createOrders, findOrder, findOrderByIdempotencyKey, orderOutcomes, type NewOrder } from '../../repositories/orders';
import {
  concludePayoutBatchItem,
  concludePayoutBatchItems,
  finishPayoutBatch,
  findPayoutBatch,
  listPayoutBatchItems,
  lockPayoutBatchItem,
  lockPayoutBatchItems,
  markPayoutBatchItemsSent,
  recordPayoutBatchItem,
  type BatchItemBody,
  type PayoutBatchItemRow,
} from '../../repositories/payout-batches';
import { inTransaction, isDuplicate } from '../../repositories/transaction';
import { itemsToStart, type PerRail } from '../batch-window';
import { paymentWorkflowId, type PayoutBatchInFlightItem, type PayoutMethod } from '../shared';

/**
 * The `payout-batch` workflow's steps (docs/payments.md#bulk-payouts). Each is idempotent on (batch, row): an
 * item's order is created once, under the idempotency key `batch <batch_id> <row>`, so a retry or a replay
 * after a worker died finds the order it made. The key holds spaces, which no client's Idempotency-Key may
 * (printable ASCII without spaces, docs/conventions.md), so no payment a client starts can take an item's key.
 */

interface BatchRef {
  batchId: string;
}
interface ItemRef extends BatchRef {
  row: number;
}

const itemKey = (batchId: string, row: number): string => `batch ${batchId} ${row}`;

/** The order an item becomes: its accepted body, under the key `batch <batch_id> <row>`, paid from the batch. */
function newItemOrder(userId: string, batchId: string, item: PayoutBatchItemRow): NewOrder {
  const body = item.body as unknown as BatchItemBody;
  const id = uuidv7();
  return {
    id,
    userId,
    idempotencyKey: itemKey(batchId, item.row_number),
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
  };
}

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
    const order = newItemOrder(batch.user_id, batchId, item);
    let orderId: string;
    try {
      orderId = (await createOrder(order, tx)).id;
    } catch (err) {
      if (!isDuplicate(err)) throw err;
      const existing = await findOrderByIdempotencyKey(batch.user_id, order.idempotencyKey);
      if (!existing) throw err;
      orderId = existing.id;
    }
    await recordPayoutBatchItem(batchId, row, { status: 'sent', orderId }, tx);
    return { orderId };
  });
}

/** What an item's order's final status makes of the item. A reversed order was sent (and refunded afterwards, on appeal, to the wallet). */
const itemOutcome = (order: { status: OrderStatus; failureCode: string | null }) => ({
  status:
    order.status === 'completed' || order.status === 'reversed'
      ? ('completed' as const)
      : order.status === 'rejected'
        ? ('rejected' as const)
        : ('failed' as const),
  failureCode: order.failureCode,
});

/**
 * Record the item's outcome from its order, once the order has one; returns whether it has. A failed or
 * rejected item's share goes back to the wallet in the same transaction, once.
 */
async function concludeItem({ batchId, row, orderId }: ItemRef & { orderId: string }): Promise<boolean> {
  const order = await findOrder(orderId);
  if (!order || !isTerminal(order.status)) return false;
  await inTransaction((tx) => concludePayoutBatchItem(batchId, row, itemOutcome(order), tx));
  return true;
}

/** `concludeItem` for many items: their orders read in one statement, the outcomes recorded in one transaction. */
async function concludeItems({
  batchId,
  items,
}: BatchRef & { items: { row: number; orderId: string }[] }): Promise<{ concluded: number[] }> {
  const orders = await orderOutcomes(items.map((i) => i.orderId));
  const ended = items.flatMap(({ row, orderId }) => {
    const order = orders.get(orderId);
    return order && isTerminal(order.status) ? [{ row, ...itemOutcome(order) }] : [];
  });
  if (ended.length > 0) await inTransaction((tx) => concludePayoutBatchItems(batchId, ended, tx));
  return { concluded: ended.map((e) => e.row) };
}

/**
 * `openItem` for a window of rows, in one transaction of a few statements whatever its size: the items locked,
 * their orders made in one insert, the items marked `sent` in one update. A row whose order key is taken
 * already (an earlier attempt's order, not recorded on the item) goes through `openItem` on its own.
 */
async function openItems({ batchId, rows }: BatchRef & { rows: number[] }): Promise<{ opened: Record<number, string | null> }> {
  const opened: Record<number, string | null> = {};
  const taken: number[] = [];
  await inTransaction(async (tx) => {
    const batch = await findPayoutBatch(batchId, tx);
    if (!batch) throw ApplicationFailure.nonRetryable(`payout batch ${batchId} not found`, 'NotFound');
    const items = await lockPayoutBatchItems(batchId, rows, tx);
    if (items.length !== rows.length)
      throw ApplicationFailure.nonRetryable(`payout batch ${batchId} is missing items of ${rows.join(',')}`, 'NotFound');
    const toMake: NewOrder[] = [];
    const rowOf = new Map<string, number>();
    for (const item of items) {
      if (item.order_id || item.status !== 'pending') opened[item.row_number] = item.order_id;
      else if (batch.cancel_requested_at) {
        await recordPayoutBatchItem(batchId, item.row_number, { status: 'cancelled' }, tx);
        opened[item.row_number] = null;
      } else {
        const order = newItemOrder(batch.user_id, batchId, item);
        rowOf.set(order.id, item.row_number);
        toMake.push(order);
      }
    }
    const made = await createOrders(toMake, tx);
    const sent = toMake.filter((o) => made.has(o.id)).map((o) => ({ row: rowOf.get(o.id) as number, orderId: o.id }));
    await markPayoutBatchItemsSent(batchId, sent, tx);
    for (const s of sent) opened[s.row] = s.orderId;
    for (const o of toMake) if (!made.has(o.id)) taken.push(rowOf.get(o.id) as number);
  });
  for (const row of taken) opened[row] = (await openItem({ batchId, row })).orderId;
  return { opened };
}

/**
 * `concludeItems`, then `openItems` for the queued items that may start once those have ended: the places each
 * rail has free after the conclusions (`busy` is counted before them), as `itemsToStart` picks them from
 * `candidates`. One local activity where the workflow would take two. Idempotent as both are.
 */
async function concludeAndOpenItems({
  batchId,
  items,
  busy,
  concurrency,
  candidates,
  budget,
}: BatchRef & {
  items: PayoutBatchInFlightItem[];
  busy: PerRail;
  concurrency: PerRail;
  candidates: { row: number; method: PayoutMethod }[];
  budget: number;
}): Promise<{ concluded: number[]; picked: number[]; opened: Record<number, string | null> }> {
  const { concluded } = await concludeItems({ batchId, items });
  const done = new Set(concluded);
  const stillBusy = { ...busy };
  for (const item of items) if (done.has(item.row)) stillBusy[item.method] -= 1;
  const picked = itemsToStart(candidates, stillBusy, concurrency, budget).map((item) => item.row);
  const { opened } = picked.length > 0 ? await openItems({ batchId, rows: picked }) : { opened: {} };
  return { concluded, picked, opened };
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

    /** `openBatchItem` for each row, in one transaction: the order id by row (null: not sent). */
    openBatchItems: openItems,

    /** Record the item's outcome from its order, once the order has one; returns whether it has. */
    concludeBatchItem: concludeItem,

    /** `concludeBatchItem` for each item, in one read and one transaction: the rows that now have their outcome recorded. */
    concludeBatchItems: concludeItems,

    /** `concludeBatchItems`, then `openBatchItems` for the items that may start after them: the rows picked, and what each opened. */
    concludeAndOpenBatchItems: concludeAndOpenItems,

    /** End the batch: unsent items cancelled, what is left of its hold back to the wallet, its status final. */
    async finishBatch({ batchId }: BatchRef): Promise<'completed' | 'cancelled' | 'running'> {
      return inTransaction((tx) => finishPayoutBatch(batchId, tx));
    },
  };
}

export type PayoutBatchActivities = ReturnType<typeof createPayoutBatchActivities>;
