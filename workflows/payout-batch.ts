import {
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  condition,
  continueAsNew,
  executeChild,
  log,
  proxyLocalActivities,
  sleep,
} from '@temporalio/workflow';
import type { PayoutBatchActivities } from './activities/payout-batches';
import { LOCAL_DB_STEP } from './presets';
import {
  PAYMENT_WORKFLOW,
  paymentWorkflowId,
  type PaymentResult,
  type PayoutBatchResult,
  type PayoutBatchWorkflowInput,
  type PayoutMethod,
} from './shared';

/** Each step reads or writes one or two rows of our own Postgres, keyed on (batch, row): local activities. */
const db = proxyLocalActivities<PayoutBatchActivities>(LOCAL_DB_STEP);

/** How often an item whose payment was started elsewhere is looked at until it has an outcome. */
const OUTCOME_CHECK_INTERVAL = '5s';

/**
 * A bulk payout (docs/payments.md#bulk-payouts). The items run a page at a time: each becomes its order (once,
 * keyed on the batch and row) and is paid by the same `payment` workflow as a single payout, as a child whose
 * id is the order's (`payment-<order_id>`), so it runs once whatever retries or replays happen. At most
 * `concurrency[rail]` items are in flight per rail. Once a page's items all have an outcome the run continues
 * as new with the next page, so its history stays a few thousand events at any batch size. When no item is
 * left, or a cancel was asked for, the batch ends: unsent items are cancelled and what is left of its hold goes
 * back to the wallet.
 */
export async function payoutBatch(input: PayoutBatchWorkflowInput): Promise<PayoutBatchResult> {
  const { batchId } = input;
  const next = await db.nextBatchItems({ batchId, afterRow: input.afterRow, limit: input.pageSize });
  if (next.items.length > 0) {
    const busy: Record<PayoutMethod, number> = { bank_transfer: 0, mobile_money: 0, crypto: 0 };
    let stopped = false;
    const send = async (item: { row: number; method: PayoutMethod; orderId: string | null }) => {
      await condition(() => busy[item.method] < input.concurrency[item.method]);
      busy[item.method] += 1;
      try {
        if (stopped) return;
        const { orderId } = await db.openBatchItem({ batchId, row: item.row });
        // Nothing to send: the batch is being cancelled (the item with it), so the items after it are not sent.
        if (!orderId) {
          stopped = true;
          return;
        }
        await payItem(input, item.row, orderId);
      } finally {
        busy[item.method] -= 1;
      }
    };
    await Promise.all(next.items.map(send));
  }
  if (next.lastRow !== null && !next.cancelRequested) {
    await continueAsNew<typeof payoutBatch>({ ...input, afterRow: next.lastRow });
  }
  const status = await db.finishBatch({ batchId });
  log.info('payout batch ended', { batchId, status });
  return { batchId, status: status === 'cancelled' ? 'cancelled' : 'completed' };
}

/** Pay one item through its order's `payment` workflow, then record its outcome. */
async function payItem(input: PayoutBatchWorkflowInput, row: number, orderId: string): Promise<void> {
  const { batchId } = input;
  try {
    (await executeChild(PAYMENT_WORKFLOW, {
      workflowId: paymentWorkflowId(orderId),
      args: [{ orderId, ...input.payment }],
      // A payment runs to its end whatever becomes of the batch's run: money is never left half-moved.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    })) satisfies Promise<PaymentResult>;
  } catch (err) {
    // Started already (by an earlier attempt, or by hand): its outcome is read from the order below.
    log.warn('the item’s payment did not run as this batch’s child; reading its outcome from the order', {
      batchId,
      orderId,
      error: (err as Error).message,
    });
  }
  while (!(await db.concludeBatchItem({ batchId, row, orderId }))) await sleep(OUTCOME_CHECK_INTERVAL);
}
