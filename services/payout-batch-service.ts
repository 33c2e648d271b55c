import type { Caller } from '../domain/caller';
import { isStaff } from '../domain/caller';
import { AppError, validationError, type FieldError } from '../platform/errors';
import { isUuid, uuidv7 } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { formatAmount, type Currency } from '../domain/money';
import { payerWallet } from '../domain/ledger';
import { BATCH_RESULTS_COLUMNS, csvLine, textCell } from '../domain/payout-batch-csv';
import { validatePaymentRequest, type PaymentRequestInput, type ValidPaymentRequest } from '../domain/payment-request';
import { InsufficientFunds, balanceOf } from '../repositories/ledger';
import { latestApprovalFor, type ApprovalRecord } from '../repositories/approvals';
import {
  approvePayoutBatch,
  cancelAwaitingPayoutBatch,
  createPayoutBatch as recordPayoutBatch,
  findPayoutBatch,
  findPayoutBatchByKey,
  listPayoutBatchItems,
  listUserPayoutBatches,
  payoutBatchReturned,
  payoutBatchTally,
  requestPayoutBatchCancel,
  type BatchItemBody,
  type NewPayoutBatchItem,
  type PayoutBatchItemStatus,
  type PayoutBatchStatus,
  type PayoutBatchItemRow,
  type PayoutBatchRow,
} from '../repositories/payout-batches';
import { inTransaction, isDuplicate, type Tx } from '../repositories/transaction';
import { payoutBatchWorkflowId } from '../workflows/shared';
import { startPayoutBatchWorkflow } from '../workflows/client';
import { decodeCursorKey, encodeCursor, filterOneOf, keysetPage, keysetQuery, pageLimit, type Page } from './paging';
import { preparePayout, type PreparedPayout } from './payment-service';
import { reachesFourEyes, requestApproval } from './approvals';
import { monitorMovement, type MonitoringVerdict } from './monitoring-holds';
import { refuseOwnInterest } from './own-interest';

/**
 * Bulk payouts (docs/payments.md#bulk-payouts): up to 10,000 items, each an initiate body with the client's own
 * reference, validated all before anything moves, held from the wallet in one posting, then paid one order each
 * by the `payout-batch` workflow.
 */

const log = componentLogger('payout-batches');

export const MAX_BATCH_ITEMS = 10_000;
/** Items checked at once (a bank transfer's destination is read from the catalogue). */
const CHECK_CHUNK = 50;

export const BATCH_ITEM_STATUSES = [
  'pending',
  'sent',
  'completed',
  'failed',
  'rejected',
  'cancelled',
] as const satisfies readonly PayoutBatchItemStatus[];

export interface PayoutBatchInput {
  items: unknown;
  skip_invalid?: unknown;
}

/** An item left out of an accepted batch (`skip_invalid`), or one that refused the batch: its row and what is wrong. */
export interface InvalidBatchItem {
  /** 1-based: the item's place in `items`, or its line in the CSV after the header. */
  row: number;
  reference: string | null;
  errors: FieldError[];
}

export interface PayoutBatchCounts {
  pending: number;
  sent: number;
  completed: number;
  failed: number;
  rejected: number;
  cancelled: number;
}

export interface PayoutBatchView {
  batch_id: string;
  status: PayoutBatchStatus;
  currency: string;
  item_count: number;
  /** Invalid items left out when the batch was accepted with `skip_invalid`. */
  skipped_count: number;
  /** What the batch held from the wallet: the items' amounts, and their fees. */
  total_amount: string;
  total_fee: string;
  counts: PayoutBatchCounts;
  /** The amounts of completed items. */
  sent_amount: string;
  /** The amounts of failed and rejected items. */
  failed_amount: string;
  /** The amounts of items cancelled before they were sent. */
  cancelled_amount: string;
  /** What went back to the wallet when the batch ended (failed and cancelled items with their fees). */
  returned_amount: string;
  /** Items at an outcome (completed, failed, rejected, cancelled) over all items, 0 to 1. */
  progress: number;
  cancel_requested: boolean;
  /**
   * The approval request of a batch that waits for a staff member (its status `awaiting_approval` until one
   * decides it): a batch at or above `FOUR_EYES_ABOVE_KES` (four eyes), or one a compliance check holds; null for
   * a batch that needed none.
   */
  approval_request_id: string | null;
  workflow_id: string;
  created_at: string;
  finished_at: string | null;
  links: { self: string; items: string };
}

export interface PayoutBatchAccepted extends PayoutBatchView {
  /** With `skip_invalid`: the items left out, by row. */
  skipped: InvalidBatchItem[];
}

export interface PayoutBatchItemView {
  row: number;
  reference: string;
  status: PayoutBatchItemStatus;
  method: string;
  amount: string;
  fee: string;
  destination: Record<string, string>;
  order_id: string | null;
  failure_code: string | null;
  updated_at: string;
  links: { order: string | null };
}

const batchLink = (id: string) => `/api/v1/payouts/batches/${id}`;

interface CheckedItem {
  row: number;
  reference: string;
  request: ValidPaymentRequest;
  fee: bigint;
  body: BatchItemBody;
}

/** Field errors of a failed check, each field named within its row. */
function errorsOf(err: unknown): FieldError[] {
  if (!(err instanceof AppError)) throw err;
  return err.options.errors?.length ? err.options.errors : [{ field: '(item)', message: err.detail ?? err.title }];
}

const REFERENCE = /^[\x20-\x7e]{1,100}$/;

/** One item checked as a single payout is, plus what a batch asks of it; its errors, or the item. */
async function checkItem(caller: Caller, raw: unknown, row: number, seen: Set<string>, currency: () => string | undefined) {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { row, reference: null, errors: [{ field: '(item)', message: 'must be an object' }] } satisfies InvalidBatchItem;
  }
  const item = raw as Record<string, unknown>;
  const errors: FieldError[] = [];
  const reference = typeof item.reference === 'string' ? item.reference.trim() : null;
  if (reference === null || !REFERENCE.test(reference)) {
    errors.push({ field: 'reference', message: 'is required: 1 to 100 printable characters, unique within the batch' });
  } else if (seen.has(reference)) {
    errors.push({ field: 'reference', message: `"${reference}" is used by an earlier item of this batch` });
  } else {
    seen.add(reference);
  }
  let request: ValidPaymentRequest | undefined;
  try {
    request = validatePaymentRequest(item as unknown as PaymentRequestInput);
  } catch (err) {
    errors.push(...errorsOf(err));
  }
  let prepared: PreparedPayout | undefined;
  if (request) {
    const batchCurrency = currency();
    if (request.method === 'p2p') errors.push({ field: 'method', message: 'a batch pays out: bank_transfer, mobile_money or crypto' });
    else if (batchCurrency !== undefined && request.currency !== batchCurrency)
      errors.push({ field: 'currency', message: `must be the batch's currency, ${batchCurrency} (its first item's)` });
    else {
      try {
        prepared = await preparePayout(caller, request);
      } catch (err) {
        errors.push(...errorsOf(err));
      }
    }
  }
  if (errors.length > 0 || !request || !prepared || reference === null) return { row, reference, errors } satisfies InvalidBatchItem;
  const body: BatchItemBody = {
    amount_minor: request.amountMinor.toString(),
    currency: request.currency,
    method: request.method,
    destination: request.destination,
    description: request.description,
    route: prepared.route,
    kes_equivalent_minor: prepared.kes.toString(),
  };
  return { row, reference, request, fee: prepared.fee, body } satisfies CheckedItem;
}

/** Every item checked, in row order: the valid ones and the invalid ones. */
async function checkItems(caller: Caller, items: unknown[]): Promise<{ valid: CheckedItem[]; invalid: InvalidBatchItem[] }> {
  const seen = new Set<string>();
  // The batch's currency is its first item's; every item must share it (one hold, one wallet).
  const first = items[0] as { currency?: unknown } | null | undefined;
  const firstCurrency = typeof first?.currency === 'string' ? first.currency : undefined;
  const valid: CheckedItem[] = [];
  const invalid: InvalidBatchItem[] = [];
  for (let i = 0; i < items.length; i += CHECK_CHUNK) {
    // References are claimed in row order, so "used by an earlier item" names the later duplicate.
    const chunk = items.slice(i, i + CHECK_CHUNK);
    const checked = await Promise.all(chunk.map((raw, j) => checkItem(caller, raw, i + j + 1, seen, () => firstCurrency)));
    for (const c of checked) {
      if (c.errors) invalid.push(c);
      else valid.push(c);
    }
  }
  return { valid, invalid };
}

/** The refusal of a batch with invalid items: each named by row, and field. */
function refusal(invalid: InvalidBatchItem[], total: number): AppError {
  const errors = invalid.flatMap((it) => it.errors.map((e) => ({ field: `rows[${it.row}].${e.field}`, message: e.message })));
  return new AppError(
    'validation_failed',
    `${invalid.length} of ${total} items are invalid (rows ${invalid
      .slice(0, 20)
      .map((it) => it.row)
      .join(', ')}${invalid.length > 20 ? ', …' : ''}); nothing was held or sent`,
    { errors },
  );
}

/**
 * Accept a bulk payout: check every item, hold the total and fees from the wallet in one posting, have
 * transaction monitoring judge the batch as a whole, and start the `payout-batch` workflow (or wait for approval,
 * or, refused, cancel it and return the hold). A retry under the same Idempotency-Key is answered with the batch
 * it made.
 */
export async function createPayoutBatch(caller: Caller, body: PayoutBatchInput, idempotencyKey: string): Promise<PayoutBatchAccepted> {
  if (!Array.isArray(body.items) || body.items.length < 1 || body.items.length > MAX_BATCH_ITEMS)
    throw validationError('items', `must be an array of 1 to ${MAX_BATCH_ITEMS} items`);
  if (body.skip_invalid !== undefined && typeof body.skip_invalid !== 'boolean') throw validationError('skip_invalid', 'must be a boolean');
  const existing = await findPayoutBatchByKey(caller.id, idempotencyKey);
  if (existing) return { ...(await batchView(existing)), skipped: [] };

  const { valid, invalid } = await checkItems(caller, body.items);
  if (valid.length === 0 || (invalid.length > 0 && body.skip_invalid !== true)) throw refusal(invalid, body.items.length);

  const currency = valid[0].request.currency;
  const totalAmount = valid.reduce((sum, it) => sum + it.request.amountMinor, 0n);
  const totalFee = valid.reduce((sum, it) => sum + it.fee, 0n);
  const wallet = payerWallet({ userId: caller.id, currency });
  const short = () =>
    new AppError(
      'insufficient_funds',
      `the ${currency} wallet holds ${formatAmount(available, currency)}, less than this batch's ${formatAmount(totalAmount, currency)}` +
        (totalFee > 0n ? ` and its fees (${formatAmount(totalAmount + totalFee, currency)} in all)` : '') +
        '; nothing was held',
    );
  // Visibly short: refused now (under a race the database refuses the hold itself).
  const available = BigInt(await balanceOf(wallet, currency));
  if (available < totalAmount + totalFee) throw short();

  const id = uuidv7();
  const fourEyes = reachesFourEyes(totalAmount + totalFee, currency);
  const totalKes = valid.reduce((sum, it) => sum + BigInt(it.body.kes_equivalent_minor), 0n);
  const items: NewPayoutBatchItem[] = valid.map((it) => ({
    rowNumber: it.row,
    reference: it.reference,
    method: it.request.method,
    amountMinor: it.request.amountMinor,
    feeMinor: it.fee,
    body: { ...it.body },
  }));
  let batch: PayoutBatchRow | null;
  try {
    await inTransaction(async (tx) => {
      // Transaction monitoring judges the batch once, as one movement, before it can start
      // (docs/monitoring.md#bulk-payouts). In this transaction: a retry racing this request keeps only one batch,
      // and one evaluation.
      const monitoring = await monitorMovement(
        { kind: 'payout_batch', id, customerId: caller.id, amountMinor: totalKes, at: new Date(), counterparty: null },
        tx,
      );
      const awaitingApproval = fourEyes || monitoring.decision !== 'pass';
      await recordPayoutBatch(
        {
          id,
          userId: caller.id,
          idempotencyKey,
          currency,
          skippedCount: invalid.length,
          totalAmountMinor: totalAmount,
          totalFeeMinor: totalFee,
          workflowId: payoutBatchWorkflowId(id),
          awaitingApproval,
        },
        items,
        tx,
      );
      if (monitoring.decision === 'refuse') {
        // Refused: nothing is sent, and the whole hold goes back at once. The owner reads a cancelled batch, as
        // after any other compliance refusal; nothing tells them which check it was.
        await cancelAwaitingPayoutBatch(id, tx);
        log.info({ batchId: id, userId: caller.id }, 'payout batch refused by a compliance check; its hold returned');
      } else if (awaitingApproval) {
        await askBatchApproval(caller, id, currency, totalAmount, totalFee, items.length, monitoring, tx);
      }
    });
    batch = await findPayoutBatch(id);
  } catch (err) {
    if (err instanceof InsufficientFunds) throw short();
    if (!isDuplicate(err)) throw err;
    // The same key was accepted meanwhile (a retry racing its first request): answer with that batch.
    batch = await findPayoutBatchByKey(caller.id, idempotencyKey);
  }
  if (!batch) throw new AppError('internal', 'the batch was recorded but cannot be read back');
  if (batch.status === 'running') await startBatch(batch.id);
  return { ...(await batchView(batch)), skipped: invalid };
}

/** Start the batch's workflow; when Temporal cannot be reached the batch stays accepted and is started later. */
export async function startBatch(batchId: string): Promise<void> {
  try {
    await startPayoutBatchWorkflow(batchId);
  } catch (err) {
    log.warn({ batchId, err }, 'payout batch workflow start failed; the reconciler will start it');
  }
}

async function ownBatch(caller: Caller, batchId: string): Promise<PayoutBatchRow> {
  if (!isUuid(batchId)) throw validationError('batch_id', 'must be a UUID');
  const batch = await findPayoutBatch(batchId);
  if (!batch || (batch.user_id !== caller.id && !isStaff(caller))) throw new AppError('not_found', `payout batch ${batchId} not found`);
  return batch;
}

async function batchView(batch: PayoutBatchRow): Promise<PayoutBatchView> {
  const [tally, returned, approval] = await Promise.all([
    payoutBatchTally(batch.id),
    payoutBatchReturned(batch.id),
    latestApprovalFor(BATCH_APPROVAL, batch.id),
  ]);
  const counts: PayoutBatchCounts = { pending: 0, sent: 0, completed: 0, failed: 0, rejected: 0, cancelled: 0 };
  const amount = (statuses: PayoutBatchItemStatus[]) =>
    tally.filter((t) => statuses.includes(t.status)).reduce((sum, t) => sum + BigInt(t.amount_minor), 0n);
  for (const t of tally) counts[t.status] = t.n;
  const done = counts.completed + counts.failed + counts.rejected + counts.cancelled;
  const currency = batch.currency as Currency;
  return {
    batch_id: batch.id,
    status: batch.status,
    currency: batch.currency,
    item_count: batch.item_count,
    skipped_count: batch.skipped_count,
    total_amount: formatAmount(batch.total_amount_minor, currency),
    total_fee: formatAmount(batch.total_fee_minor, currency),
    counts,
    sent_amount: formatAmount(amount(['completed']), currency),
    failed_amount: formatAmount(amount(['failed', 'rejected']), currency),
    cancelled_amount: formatAmount(amount(['cancelled']), currency),
    returned_amount: formatAmount(returned, currency),
    progress: batch.item_count > 0 ? Math.round((done / batch.item_count) * 10_000) / 10_000 : 1,
    cancel_requested: batch.cancel_requested_at !== null,
    approval_request_id: approval?.id ?? null,
    workflow_id: batch.workflow_id,
    created_at: new Date(batch.created_at).toISOString(),
    finished_at: batch.finished_at ? new Date(batch.finished_at).toISOString() : null,
    links: { self: batchLink(batch.id), items: `${batchLink(batch.id)}/items` },
  };
}

/** A batch with its counts by status, money sent, failed and returned, and progress. Another user's is a 404. */
export async function getPayoutBatch(caller: Caller, batchId: string): Promise<PayoutBatchView> {
  return batchView(await ownBatch(caller, batchId));
}

export const BATCH_STATUSES = ['awaiting_approval', 'running', 'completed', 'cancelled'] as const satisfies readonly PayoutBatchStatus[];

/** A batch in a list: what it is and where it stands; its counts and money are on the batch itself. */
export interface PayoutBatchSummary {
  batch_id: string;
  status: PayoutBatchStatus;
  currency: string;
  item_count: number;
  total_amount: string;
  total_fee: string;
  cancel_requested: boolean;
  created_at: string;
  finished_at: string | null;
  links: { self: string; items: string };
}

const batchSummary = (batch: PayoutBatchRow): PayoutBatchSummary => ({
  batch_id: batch.id,
  status: batch.status,
  currency: batch.currency,
  item_count: batch.item_count,
  total_amount: formatAmount(batch.total_amount_minor, batch.currency as Currency),
  total_fee: formatAmount(batch.total_fee_minor, batch.currency as Currency),
  cancel_requested: batch.cancel_requested_at !== null,
  created_at: new Date(batch.created_at).toISOString(),
  finished_at: batch.finished_at ? new Date(batch.finished_at).toISOString() : null,
  links: { self: batchLink(batch.id), items: `${batchLink(batch.id)}/items` },
});

/** The caller's own batches, newest first, keyset-paged; `status` filters (e.g. `awaiting_approval`). */
export async function listPayoutBatches(
  caller: Caller,
  q: { status?: string; limit?: number; cursor?: string },
): Promise<Page<PayoutBatchSummary>> {
  const status = filterOneOf('status', q.status, BATCH_STATUSES);
  const { limit, before } = keysetQuery(q);
  const rows = await listUserPayoutBatches(caller.id, status ?? null, before, limit + 1);
  return keysetPage(rows, limit, batchSummary);
}

export interface BatchItemsQuery {
  limit?: number;
  cursor?: string;
  status?: string;
  reference?: string;
}

function itemView(row: PayoutBatchItemRow, currency: Currency): PayoutBatchItemView {
  const destination = (row.body.destination ?? {}) as Record<string, string>;
  return {
    row: row.row_number,
    reference: row.reference,
    status: row.status,
    method: row.method,
    amount: formatAmount(row.amount_minor, currency),
    fee: formatAmount(row.fee_minor, currency),
    destination,
    order_id: row.order_id,
    failure_code: row.failure_code,
    updated_at: new Date(row.updated_at).toISOString(),
    links: { order: row.order_id ? `/api/v1/payments/orders/${row.order_id}` : null },
  };
}

/** A batch's items in row order, keyset-paged, filterable by status and reference. */
export async function payoutBatchItems(caller: Caller, batchId: string, q: BatchItemsQuery): Promise<Page<PayoutBatchItemView>> {
  const limit = pageLimit(q.limit);
  const status = filterOneOf('status', q.status, BATCH_ITEM_STATUSES);
  const afterRow = q.cursor !== undefined ? Number(decodeCursorKey(q.cursor, [/^\d{1,5}$/])[0]) : undefined;
  const batch = await ownBatch(caller, batchId);
  const rows = await listPayoutBatchItems(batch.id, { status, reference: q.reference, afterRow }, limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map((row) => itemView(row, batch.currency as Currency)),
    next_cursor: rows.length > limit && last ? encodeCursor(String(last.row_number)) : null,
  };
}

/**
 * Stop a running batch: items not yet sent are cancelled and their money (with their fees) goes back to the
 * wallet when the workflow ends the batch; items in flight finish. A batch awaiting approval sent nothing: it is
 * cancelled at once and its whole hold goes back to the wallet. Asking again, or after the batch has ended, is
 * harmless: the batch answers as it stands.
 */
export async function cancelPayoutBatch(caller: Caller, batchId: string): Promise<PayoutBatchView> {
  let batch = await ownBatch(caller, batchId);
  if (batch.user_id !== caller.id) throw new AppError('forbidden', 'only the batch’s owner may cancel it');
  if (batch.status === 'awaiting_approval') {
    // Approved meanwhile (it is running now): stopped as a running batch is, below.
    batch = (await inTransaction((tx) => cancelAwaitingPayoutBatch(batch.id, tx))) ?? batch;
    if (batch.status === 'awaiting_approval') {
      log.info({ batchId, userId: caller.id }, 'payout batch cancelled by its owner before approval; its hold returned');
      return batchView((await findPayoutBatch(batch.id)) ?? batch);
    }
  }
  // A batch that has ended has nothing left to stop: it answers as it stands.
  if (batch.status !== 'running') return batchView(batch);
  const updated = (await requestPayoutBatchCancel(batch.id)) ?? batch;
  return batchView(updated);
}

// --- four eyes on large batches (docs/access.md#four-eyes) ----------------------------------------------

/**
 * The approval kind of a batch at or above `FOUR_EYES_ABOVE_KES`, or held by transaction monitoring: its subject the
 * batch, its amount the total and fees.
 */
export const BATCH_APPROVAL = 'approve_payout_batch';

/**
 * Record, in the batch's own transaction, the approval request its size or a monitoring alert asks for: the owner
 * is its requester, a staff member decides it. A request a monitoring alert raised says so in its payload
 * (`reason`, and the evaluation with the typologies that fired), which only staff read
 * (docs/monitoring.md#bulk-payouts); the owner sees a batch awaiting approval, as under four eyes.
 */
async function askBatchApproval(
  owner: Caller,
  batchId: string,
  currency: Currency,
  totalAmount: bigint,
  totalFee: bigint,
  itemCount: number,
  monitoring: MonitoringVerdict,
  tx: Tx,
): Promise<void> {
  const alert =
    monitoring.decision === 'pass'
      ? {}
      : {
          reason: `transaction monitoring alert (evaluation ${monitoring.evaluationId}): ${monitoring.summary}`,
          monitoring_evaluation_id: monitoring.evaluationId,
        };
  const request = await requestApproval(
    owner,
    {
      kind: BATCH_APPROVAL,
      subjectId: batchId,
      currency,
      amountMinor: totalAmount + totalFee,
      payload: {
        item_count: itemCount,
        total_amount: formatAmount(totalAmount, currency),
        total_fee: formatAmount(totalFee, currency),
        ...alert,
      },
    },
    tx,
  );
  log.info(
    { batchId, requestId: request.request_id, userId: owner.id, monitoringAlert: monitoring.decision !== 'pass' },
    'payout batch awaits a staff member’s approval',
  );
}

/**
 * Nobody decides on a bulk payout of their own (the own affairs rule), nor on one whose owner shares their name,
 * phone, e-mail or ID number (docs/compliance.md#own-interest).
 */
async function notOwnBatch(decider: Caller, batch: PayoutBatchRow): Promise<void> {
  if (decider.id === batch.user_id) throw new AppError('forbidden', 'no staff member decides on a bulk payout of their own');
  await refuseOwnInterest(decider, 'a bulk payout', [{ role: 'the batch’s owner', userId: batch.user_id }]);
}

/**
 * An approved `approve_payout_batch` request's action, in the approval's transaction: the batch becomes
 * `running` (`payout_batch.approved`). Its workflow is started once that commits (`startApprovedBatch`). A batch no
 * longer awaiting approval (its owner cancelled it) refuses the approval: the request is to be rejected.
 */
export async function performApprovedBatch(request: ApprovalRecord, approver: Caller, tx: Tx): Promise<Record<string, unknown>> {
  const found = await findPayoutBatch(request.subjectId, tx);
  if (!found) throw new AppError('not_found', `payout batch ${request.subjectId} not found`);
  await notOwnBatch(approver, found);
  const before = await approvePayoutBatch(found.id, tx);
  if (before?.status !== 'awaiting_approval') {
    throw new AppError(
      'conflict',
      `payout batch ${found.id} is ${before?.status ?? 'gone'}, no longer awaiting approval: reject this request`,
    );
  }
  return { batch_id: found.id, status: 'running' };
}

/** After an approval has committed: start the batch's workflow (or, Temporal being down, leave it to the reconciler). */
export async function startApprovedBatch(request: { subject_id: string }): Promise<void> {
  await startBatch(request.subject_id);
}

/**
 * A rejected `approve_payout_batch` request's undoing, in the rejection's transaction: the batch is cancelled and its
 * whole hold goes back to the wallet (`payout_batch.cancelled`). One its owner cancelled already stays as it is.
 */
export async function performRejectedBatch(request: ApprovalRecord, decider: Caller, tx: Tx): Promise<Record<string, unknown>> {
  const found = await findPayoutBatch(request.subjectId, tx);
  if (!found) throw new AppError('not_found', `payout batch ${request.subjectId} not found`);
  await notOwnBatch(decider, found);
  const before = await cancelAwaitingPayoutBatch(found.id, tx);
  return { batch_id: found.id, status: before?.status === 'awaiting_approval' ? 'cancelled' : (before?.status ?? found.status) };
}

/** Items read per query while writing a results CSV. */
const RESULTS_PAGE = 500;

/**
 * A batch's results as CSV (docs/payments.md#a-batch-as-csv): a header, then one line per item in row order —
 * row, reference, status, amount, fee, order_id, failure_code, updated_at. Read a page of items at a time, so
 * a 10,000-item batch is never held in memory whole. Another user's batch is a 404, before anything is written.
 */
export async function payoutBatchResultsCsv(caller: Caller, batchId: string): Promise<{ filename: string; lines: AsyncIterable<string> }> {
  const batch = await ownBatch(caller, batchId);
  const currency = batch.currency as Currency;
  async function* lines(): AsyncGenerator<string> {
    yield csvLine(BATCH_RESULTS_COLUMNS);
    let afterRow = 0;
    for (;;) {
      const rows = await listPayoutBatchItems(batch.id, { afterRow }, RESULTS_PAGE);
      yield rows
        .map((row) =>
          csvLine([
            row.row_number,
            textCell(row.reference),
            row.status,
            formatAmount(row.amount_minor, currency),
            formatAmount(row.fee_minor, currency),
            row.order_id,
            textCell(row.failure_code),
            new Date(row.updated_at).toISOString(),
          ]),
        )
        .join('');
      const last = rows.at(-1);
      if (rows.length < RESULTS_PAGE || !last) return;
      afterRow = last.row_number;
    }
  }
  return { filename: `payout-batch-${batch.id}-results.csv`, lines: lines() };
}
