import type { Caller } from '../domain/caller';
import { isStaff } from '../domain/caller';
import { config } from '../platform/config';
import { AppError, validationError } from '../platform/errors';
import { isUuid, uuidv7 } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { deferStartWhileBackingOff, noteStartFailed } from '../platform/temporal';
import { ORDER_STATUSES, PAYMENT_METHODS, type OrderEventKind, type OrderStatus, type PaymentMethod } from '../domain/orders';
import { evaluateTierLimits, tierLimitsMinor } from '../domain/limits';
import { feeFor } from '../domain/fees';
import { CURRENCIES, formatAmount, toKesMinor, type Currency } from '../domain/money';
import { validatePaymentRequest, type PaymentRequestInput, type ValidPaymentRequest } from '../domain/payment-request';
import { checkDestination } from './destinations';
import type { BankRoute } from '../domain/discovery/routing';
import {
  acceptOrder,
  findOrderByIdempotencyKey,
  type Acceptance,
  type AcceptanceClaim,
  listOrders,
  orderWithEvents,
  type OrderWithEvents,
  type NewOrder,
  type OrderFilter,
  type OrderRecord,
  type OrderRow,
} from '../repositories/orders';
import { inTransaction, isDuplicate } from '../repositories/transaction';
import type { KeyClaim, StoredAnswer } from '../repositories/idempotency';
import { kycStatusOf } from '../repositories/users';
import { orderWorkflowId } from '../workflows/shared';
import { payerWallet } from '../domain/ledger';
import { startOrderWorkflow } from '../workflows/client';
import { decodeCursor, encodeCursor, pageLimit, type Page } from './paging';
import { quoteTrade, recordTrade } from './p2p-service';
import { assertKeyReachesRail } from './api-key-service';

const log = componentLogger('payments');

export interface PaymentAccepted {
  order_id: string;
  status: OrderStatus;
  workflow_id: string;
  links: { self: string };
}

export interface OrderEventView {
  /**
   * The status the order moved to, or `overdue` (no definite answer from the rail by the settle deadline),
   * or `outcome_unknown` (the rail's answer to the transfer was lost: the hold is kept and the rail asked).
   */
  status: OrderEventKind;
  at: string;
  detail: string | null;
}

/** An order as lists show it. (An interface of its own: tsoa drops `| null` from the fields of an `Omit<>`.) */
export interface OrderSummary {
  order_id: string;
  user_id: string;
  status: OrderStatus;
  amount: string;
  /** What the payment costs on top of its amount, in its currency ("0.00" when the method charges none). */
  fee: string;
  /** What the payer's wallet gives: amount + fee. */
  total_debited: string;
  currency: string;
  method: PaymentMethod;
  destination: Record<string, string>;
  description: string | null;
  reference: string | null;
  failure_code: string | null;
  failure_reason: string | null;
  rail_reference: string | null;
  /**
   * Bank transfers: how the money leaves the primary bank — `internal` (the destination is the primary
   * bank), `pesalink` (a participating bank, KES up to 999,999.00) or `rtgs`. Null for other methods.
   */
  route: BankRoute | null;
  workflow_id: string;
  created_at: string;
  updated_at: string;
  links: { self: string };
}

/** One order, with its events. */
export interface OrderView extends OrderSummary {
  events: OrderEventView[];
}

const orderLink = (id: string) => `/api/v1/payments/orders/${id}`;

export interface PreparedPayout {
  /** Bank transfers: the route out of the primary bank. */
  route: BankRoute | null;
  /** The amount in KES minor units, as the tier limits count it. */
  kes: bigint;
  /** What the payment costs on top of its amount (minor units, its currency). */
  fee: bigint;
}

/**
 * What a single payment and each item of a bulk payout check alike before any money moves, once the body is
 * valid: the caller's key reaches the rail, the destination is one Paygate can pay; and what it will cost.
 */
export async function preparePayout(caller: Caller, request: ValidPaymentRequest): Promise<PreparedPayout> {
  if (request.method !== 'p2p') assertKeyReachesRail(caller, config().rails[request.method], `a ${request.method} payment`);
  const cfg = config();
  const { route } = await checkDestination(request, cfg.discovery.primaryBankCode);
  const kes = toKesMinor(request.amountMinor, request.currency, cfg.limits.fxToKes);
  const fee = feeFor(request.method, request.amountMinor, request.currency, cfg.fees, cfg.limits.fxToKes);
  return { route, kes, fee };
}

/** What a payment's acceptance answers: the order, as recorded. */
const acceptedView = (order: Pick<OrderRecord, 'id' | 'status' | 'workflowId'>): PaymentAccepted => ({
  order_id: order.id,
  status: order.status,
  workflow_id: order.workflowId,
  links: { self: orderLink(order.id) },
});

/**
 * The request's Idempotency-Key, claimed by the statement that records the order (docs/conventions.md#idempotency),
 * and how the route sends an acceptance: the answer stored with the order is the one sent, byte for byte.
 */
export interface InitiateIdempotency {
  claim: KeyClaim;
  answer: (accepted: PaymentAccepted) => StoredAnswer;
}

const accountGone = () => new AppError('unauthenticated', 'the account no longer exists');

/**
 * Accept a payment: validate, check the KYC tier, record the order, start its workflow. When Temporal
 * cannot be reached the order is still accepted; the reconciler starts its workflow later.
 *
 * With `idempotency`, the key is claimed, and the answer stored, by the statement that records the order: its
 * `claim.outcome` says what became of the key. When another request holds the key, nothing is recorded and
 * this throws `idempotency_in_progress` for the route to answer from the key as stored.
 */
export async function initiatePayment(
  caller: Caller,
  body: PaymentRequestInput,
  idempotencyKey: string,
  idempotency?: InitiateIdempotency,
): Promise<PaymentAccepted> {
  const request = validatePaymentRequest(body);
  // A trade reads another user's ad: not for an account that is gone. (Otherwise the statement recording the
  // order reads the account, when authentication left it to it.)
  if (request.method === 'p2p' && caller.standingInStatement && !(await kycStatusOf(caller.id))) throw accountGone();
  // A trade against a P2P ad: priced now, settled between wallets by its `trade` workflow.
  const trade = request.method === 'p2p' ? await quoteTrade(caller, request.destination, request.amountMinor) : null;
  const { route, kes, fee } = await preparePayout(caller, request);
  const cfg = config();
  // A trade is paid from the taker's wallet: KES against a sell ad, the asset against a buy ad.
  // The hold takes the amount and its fee (none for a trade).
  const funding = trade?.funding ?? { currency: request.currency, amountMinor: request.amountMinor + fee };
  const fundingCurrency = funding.currency;
  // Over the tier on its own (per payment, or alone past the 24-hour limit), by the status this request's
  // authentication read: refused before anything is written. (The statement recording the order judges the
  // tier again, by the status it reads itself.)
  const alone = caller.kycStatus && evaluateTierLimits(caller.kycStatus, kes, 0n, cfg.limits);
  if (alone) throw new AppError(alone.code, alone.reason);

  const id = uuidv7();
  const newOrder = {
    id,
    userId: caller.id,
    idempotencyKey,
    amountMinor: request.amountMinor.toString(),
    feeMinor: fee.toString(),
    kesEquivalentMinor: kes.toString(),
    currency: request.currency,
    method: request.method,
    destination: request.destination,
    description: request.description,
    reference: request.reference,
    route,
    workflowId: orderWorkflowId(request.method, id),
  } satisfies NewOrder;
  const check = {
    limits: tierLimitsMinor(cfg.limits),
    fundingAccount: payerWallet({ userId: caller.id, currency: fundingCurrency }),
    fundingCurrency,
    fundingMinor: funding.amountMinor,
  };
  // An order is recorded `pending`: what its acceptance answers is known before it is recorded, and is stored with it.
  const answered = acceptedView({ id, status: 'pending', workflowId: newOrder.workflowId });
  const claimed: AcceptanceClaim | undefined = idempotency && { claim: idempotency.claim, answer: idempotency.answer(answered) };
  // The payer's KYC status, the key's claim, the 24-hour usage, the wallet, the order and its answer in one
  // statement: the order is recorded only when the payer exists, the key is this request's and the tier's limits
  // and the wallet leave room for it.
  const accept = (claim = claimed) =>
    trade
      ? inTransaction(async (tx) => {
          const judged = await acceptOrder(newOrder, check, claim, tx);
          if (judged.created) await recordTrade(judged.created.id, trade, tx);
          return judged;
        })
      : acceptOrder(newOrder, check, claim);
  let accepted: Acceptance;
  try {
    accepted = await accept();
  } catch (err) {
    // An order holds this key already (another credential of the same user, or the key claimed again once it
    // expired): nothing of this statement was kept, and running it again, looking for that order, judges it.
    if (!claimed || !isDuplicate(err)) throw err;
    accepted = await accept({ ...claimed, orderMayExist: true });
  }
  // No such payer: nothing was recorded nor claimed (the key is then claimed, and let go, as for any refusal).
  if (!accepted.kycStatus) throw accountGone();
  const kycStatus = accepted.kycStatus;
  // Set once committed: a trade's transaction undone leaves nothing claimed.
  if (idempotency) idempotency.claim.outcome = accepted.claim;
  if (accepted.claim === 'taken') throw new AppError('idempotency_in_progress', 'retry the request');
  let order: OrderRecord;
  if (accepted.created) order = accepted.created;
  else {
    const breach = evaluateTierLimits(kycStatus, kes, accepted.usedKesMinor, cfg.limits);
    // A retry of a payment already accepted under this key is answered with that order.
    const existing = await findOrderByIdempotencyKey(caller.id, idempotencyKey);
    if (existing) order = existing;
    else if (breach) throw new AppError(breach.code, breach.reason);
    else if (accepted.availableMinor >= funding.amountMinor) {
      throw new AppError('conflict', 'another request took this Idempotency-Key at the same moment; retry it');
    } else {
      // Visibly short: refused now. (Under a race the database refuses the hold itself, and the order fails.)
      const available = accepted.availableMinor;
      throw new AppError(
        'insufficient_funds',
        `the ${fundingCurrency} wallet holds ${formatAmount(available, fundingCurrency)}, less than this payment` +
          (fee > 0n ? ` and its fee (${formatAmount(funding.amountMinor, fundingCurrency)} in all)` : ''),
      );
    }
  }

  if (!order.workflowStartedAt) {
    if (deferStartWhileBackingOff()) {
      log.warn({ orderId: order.id }, 'a workflow start failed moments ago; the reconciler will start this one');
    } else {
      try {
        await startOrderWorkflow(order);
      } catch (err) {
        noteStartFailed();
        log.warn({ orderId: order.id, err }, 'workflow start failed; the reconciler will start it');
      }
    }
  }
  // The order this request recorded is answered as its stored answer was rendered.
  return order === accepted.created ? answered : acceptedView(order);
}

function toSummary(row: OrderRow): OrderSummary {
  return {
    order_id: row.id,
    user_id: row.user_id,
    status: row.status,
    amount: formatAmount(row.amount_minor, row.currency as Currency),
    fee: formatAmount(row.fee_minor, row.currency as Currency),
    total_debited: formatAmount(BigInt(row.amount_minor) + BigInt(row.fee_minor), row.currency as Currency),
    currency: row.currency,
    method: row.method,
    destination: row.destination,
    description: row.description,
    reference: row.reference,
    failure_code: row.failure_code,
    failure_reason: row.failure_reason,
    rail_reference: row.rail_reference,
    route: row.route,
    workflow_id: row.workflow_id,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    links: { self: orderLink(row.id) },
  };
}

/**
 * One order with its events, in one query (or as read already with the caller's standing: `readAhead`). Another
 * user's order is a 404, never a 403.
 */
export async function getOrder(caller: Caller, orderId: string, readAhead?: OrderWithEvents | null): Promise<OrderView> {
  if (!isUuid(orderId)) throw validationError('order_id', 'must be a UUID');
  const row = readAhead === undefined ? await orderWithEvents(orderId) : readAhead;
  if (!row || (row.user_id !== caller.id && !isStaff(caller))) throw new AppError('not_found', `order ${orderId} not found`);
  return {
    ...toSummary(row),
    events: row.events.map((e) => ({ status: e.status, at: new Date(e.at).toISOString(), detail: e.detail })),
  };
}

export interface HistoryQuery {
  limit?: number;
  cursor?: string;
  status?: string;
  method?: string;
  currency?: string;
  from?: string;
  to?: string;
  user_id?: string;
}

const parseTime = (value: string, field: string): Date => {
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value) || Number.isNaN(date.getTime())) {
    throw validationError(field, 'must be an RFC 3339 timestamp, e.g. 2026-01-31T00:00:00Z');
  }
  return date;
};

/** The caller's orders (staff: everyone's, or one user's with `user_id`), newest first, keyset-paged. */
export async function paymentHistory(caller: Caller, q: HistoryQuery): Promise<Page<OrderSummary>> {
  const limit = pageLimit(q.limit);
  const filter: OrderFilter = {};
  if (isStaff(caller)) {
    if (q.user_id !== undefined) {
      if (!isUuid(q.user_id)) throw validationError('user_id', 'must be a UUID');
      filter.userId = q.user_id;
    }
  } else {
    filter.userId = caller.id;
  }
  if (q.status !== undefined) {
    if (!(ORDER_STATUSES as readonly string[]).includes(q.status))
      throw validationError('status', `must be one of ${ORDER_STATUSES.join(', ')}`);
    filter.status = q.status as OrderStatus;
  }
  if (q.method !== undefined) {
    if (!(PAYMENT_METHODS as readonly string[]).includes(q.method))
      throw validationError('method', `must be one of ${PAYMENT_METHODS.join(', ')}`);
    filter.method = q.method as PaymentMethod;
  }
  if (q.currency !== undefined) {
    if (!(CURRENCIES as string[]).includes(q.currency)) throw validationError('currency', `must be one of ${CURRENCIES.join(', ')}`);
    filter.currency = q.currency;
  }
  if (q.from !== undefined) filter.from = parseTime(q.from, 'from');
  if (q.to !== undefined) filter.to = parseTime(q.to, 'to');
  if (q.cursor !== undefined) filter.before = decodeCursor(q.cursor);
  const rows = await listOrders(filter, limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(toSummary), next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}
