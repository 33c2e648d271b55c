import {
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  condition,
  continueAsNew,
  executeChild,
  log,
  patched,
  proxyLocalActivities,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { PayoutBatchActivities } from './activities/payout-batches';
import { itemsToStart, startCandidates, type BatchItem } from './batch-window';
import { LOCAL_DB_STEP } from './presets';
import {
  PAYMENT_WORKFLOW,
  paymentWorkflowId,
  type PaymentResult,
  type PayoutBatchResult,
  type PayoutBatchInFlightItem,
  type PayoutBatchWorkflowInput,
  type PaymentWorkflowInput,
  type PayoutMethod,
} from './shared';

/** Each step reads or writes one or two rows of our own Postgres, keyed on (batch, row): local activities. */
const db = proxyLocalActivities<PayoutBatchActivities>(LOCAL_DB_STEP);

/** How often, at most, an item whose payment was started elsewhere is looked at until it has an outcome. */
const OUTCOME_CHECK_INTERVAL_MS = 5000;
/** The first look at such an item: then twice as long each time, up to `OUTCOME_CHECK_INTERVAL_MS`. */
const FIRST_OUTCOME_CHECK_MS = 250;
/** How many pages of items a run keeps fetched ahead, at most, for rails whose items wait on their concurrency. */
const QUEUED_PAGES = 5;

/** The `payment` workflow, as its children are started. */
type PaymentWorkflow = (input: PaymentWorkflowInput) => Promise<PaymentResult>;

/**
 * A bulk payout (docs/payments.md#bulk-payouts). Each item becomes its order (once, keyed on the batch and row)
 * and is paid by the same `payment` workflow as a single payout, as a child whose id is the order's
 * (`payment-<order_id>`), so it runs once whatever retries or replays happen. The items run through a sliding
 * window: up to `concurrency[rail]` items per rail are in flight all the time, the next one starting as soon as
 * one has an outcome. After `pageSize` items a run continues as new, handing the items still in flight to the
 * next run, which reads their outcomes from their orders: their payments (abandoned children) run on. So each
 * run's history stays a few thousand events at any batch size. When no item is left, or a cancel was asked for,
 * and nothing is in flight, the batch ends: unsent items are cancelled and what is left of its hold goes back
 * to the wallet.
 *
 * Only this loop calls the database, one step at a time and for many items at once: what it does next depends
 * on history events alone (children started and ended, timers fired), never on how fast a step ran, so every
 * replay takes the same steps. Runs begun before the sliding window (a page at a time, every item of a page
 * with an outcome before the next page started) replay as they were written (`pagedRun`); their next run slides.
 */
export async function payoutBatch(input: PayoutBatchWorkflowInput): Promise<PayoutBatchResult> {
  if (!patched('sliding-window')) return pagedRun(input);
  // Asked before any step, so that every task of the run replays it alike: a run from before concludes and opens in
  // two local activities to the end, and its next run in one.
  const inOneStep = patched('conclude-and-open');
  const { batchId } = input;
  const busy: Record<PayoutMethod, number> = { bank_transfer: 0, mobile_money: 0, crypto: 0 };
  /** Items whose order exists and whose payment was started (by this run or an earlier one), not yet concluded. */
  const inFlight = new Map<number, PayoutBatchInFlightItem>();
  /** Items whose outcome is to be read from their orders now: their payment ended, or it is time to look again. */
  const toCheck: PayoutBatchInFlightItem[] = [];
  const nextLook = new Map<number, number>();
  /** Items fetched, not yet started, in row order. */
  const queue: BatchItem[] = [];
  let cursor = input.afterRow;
  let exhausted = false;
  let stopped = false;
  let started = 0;
  /** Children asked for and not yet started: a run does not continue as new over them. */
  let starting = 0;
  let failure: unknown;
  const fail = (err: unknown) => {
    failure ??= err;
  };

  const watch = (item: PayoutBatchInFlightItem) => {
    starting += 1;
    startChild<PaymentWorkflow>(PAYMENT_WORKFLOW, {
      workflowId: paymentWorkflowId(item.orderId),
      args: [{ orderId: item.orderId, ...input.payment }],
      // A payment runs to its end whatever becomes of the batch's run: money is never left half-moved.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    })
      .then(
        (child) => {
          starting -= 1;
          return child.result().then(
            () => toCheck.push(item),
            (err: unknown) => {
              log.warn('the item’s payment did not end well; reading its outcome from the order', {
                batchId,
                orderId: item.orderId,
                error: (err as Error).message,
              });
              toCheck.push(item);
            },
          );
        },
        (err: unknown) => {
          starting -= 1;
          // Started already (by an earlier attempt, or by hand): its outcome is read from the order.
          log.warn('the item’s payment was started before; reading its outcome from the order', {
            batchId,
            orderId: item.orderId,
            error: (err as Error).message,
          });
          toCheck.push(item);
        },
      )
      .catch(fail);
  };
  const lookLater = (item: PayoutBatchInFlightItem) => {
    const wait = nextLook.get(item.row) ?? FIRST_OUTCOME_CHECK_MS;
    nextLook.set(item.row, Math.min(wait * 2, OUTCOME_CHECK_INTERVAL_MS));
    sleep(wait).then(() => toCheck.push(item), fail);
  };

  for (const item of input.inFlight ?? []) {
    inFlight.set(item.row, item);
    busy[item.method] += 1;
    toCheck.push(item);
  }
  /** Start the picked items' payments with the orders opened for them; none after one the batch's cancel refused. */
  const send = (picked: BatchItem[], opened: Record<number, string | null>) => {
    for (const item of picked) {
      const orderId = opened[item.row];
      // Nothing to send: the batch is being cancelled (the item with it), so no further item is sent.
      if (!orderId) {
        stopped = true;
        busy[item.method] -= 1;
        continue;
      }
      const sent = { row: item.row, method: item.method, orderId };
      inFlight.set(item.row, sent);
      watch(sent);
    }
  };
  /** Items looked at whose outcome is recorded leave the window; the others are looked at again later. */
  const conclude = (looked: PayoutBatchInFlightItem[], concluded: number[]) => {
    const done = new Set(concluded);
    for (const item of looked) {
      if (!done.has(item.row)) lookLater(item);
      else if (inFlight.delete(item.row)) {
        nextLook.delete(item.row);
        busy[item.method] -= 1;
      }
    }
  };
  /** Take the picked items off the queue: they count as in flight from now. */
  const take = (picked: BatchItem[]) => {
    for (const item of picked) {
      queue.splice(queue.indexOf(item), 1);
      busy[item.method] += 1;
      started += 1;
    }
  };

  for (;;) {
    if (failure) throw failure;
    if (toCheck.length > 0 && inOneStep) {
      // The items with an outcome concluded and the next ones opened in one step: the window refills without
      // waiting for a second local activity. An item looked at again after its conclusion has nothing left to do.
      const looked = [...new Map(toCheck.splice(0).map((item) => [item.row, item])).values()].filter((item) => inFlight.has(item.row));
      if (looked.length === 0) continue;
      const { concluded, picked, opened } = await db.concludeAndOpenBatchItems({
        batchId,
        items: looked,
        busy: { ...busy },
        concurrency: input.concurrency,
        candidates: startCandidates(queue, input.concurrency).map(({ row, method }) => ({ row, method })),
        budget: stopped ? 0 : input.pageSize - started,
      });
      conclude(looked, concluded);
      const rows = new Set(picked);
      const items = queue.filter((item) => rows.has(item.row));
      take(items);
      send(items, opened);
      continue;
    }
    if (toCheck.length > 0) {
      const looked = toCheck.splice(0);
      const { concluded } = await db.concludeBatchItems({ batchId, items: looked });
      conclude(looked, concluded);
      continue;
    }
    const waiting = queue.length > 0 && queue.every((item) => busy[item.method] >= input.concurrency[item.method]);
    if (!stopped && !exhausted && (queue.length < input.pageSize || (waiting && queue.length < QUEUED_PAGES * input.pageSize))) {
      const next = await db.nextBatchItems({ batchId, afterRow: cursor, limit: input.pageSize });
      if (next.cancelRequested) stopped = true;
      if (next.lastRow === null) exhausted = true;
      else cursor = next.lastRow;
      for (const item of next.items) if (!inFlight.has(item.row)) queue.push(item);
      continue;
    }
    const picked = stopped ? [] : itemsToStart(queue, busy, input.concurrency, input.pageSize - started);
    if (picked.length > 0) {
      take(picked);
      const { opened } = await db.openBatchItems({ batchId, rows: picked.map((item) => item.row) });
      send(picked, opened);
      continue;
    }
    const nothingToStart = stopped || (exhausted && queue.length === 0);
    if (nothingToStart && inFlight.size === 0) break;
    const timeForNewRun = () => !nothingToStart && starting === 0 && (started >= input.pageSize || workflowInfo().continueAsNewSuggested);
    if (timeForNewRun()) {
      // The items not yet started are read again by the next run from the first of them; those in flight go with it.
      await continueAsNew<typeof payoutBatch>({
        ...input,
        afterRow: queue.length > 0 ? queue[0].row - 1 : cursor,
        inFlight: [...inFlight.values()],
      });
    }
    await condition(() => toCheck.length > 0 || failure !== undefined || timeForNewRun());
  }
  const status = await db.finishBatch({ batchId });
  log.info('payout batch ended', { batchId, status });
  return { batchId, status: status === 'cancelled' ? 'cancelled' : 'completed' };
}

/** A run begun before the sliding window: one page, every item with an outcome, then the next page as new. */
async function pagedRun(input: PayoutBatchWorkflowInput): Promise<PayoutBatchResult> {
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
  while (!(await db.concludeBatchItem({ batchId, row, orderId }))) await sleep(OUTCOME_CHECK_INTERVAL_MS);
}
