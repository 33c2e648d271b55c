import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { Op, QueryTypes, UniqueConstraintError, type Transaction } from 'sequelize';
import type { Caller } from '../auth/authentication';
import { isStaff } from '../auth/authentication';
import { config } from '../../platform/config';
import { database } from '../../platform/database';
import { AppError, validationError } from '../../platform/errors';
import { isUuid, uuidv7 } from '../../platform/ids';
import { componentLogger } from '../../platform/logger';
import {
  deferStartWhileBackingOff,
  ensureTemporalConnected,
  noteStartFailed,
  startWithSearchAttributes,
  temporalClient,
} from '../../platform/temporal';
import { Order } from '../../models';
import type { KycStatus } from '../../models/user';
import { ORDER_STATUSES, PAYMENT_METHODS, type OrderEventKind, type OrderStatus, type PaymentMethod } from '../../models/order';
import { evaluateTierLimits } from '../../domain/limits';
import { CURRENCIES, formatAmount, toKesMinor, type Currency } from '../../domain/money';
import { validatePaymentRequest, type PaymentRequestInput } from '../../domain/payment-request';
import { checkDestination } from '../../domain/discovery/destinations';
import type { BankRoute } from '../../domain/discovery/routing';
import { PAYMENT_WORKFLOW, paymentWorkflowId, type PaymentWorkflowInput } from '../../workflows/shared';
import { orderSearchAttributes } from '../../workflows/search-attributes';
import { decodeCursor, encodeCursor, pageLimit, type Page } from './paging';
import { quoteTrade, recordTrade } from './p2p-service';

const log = componentLogger('payments');

export interface PaymentAccepted {
  order_id: string;
  status: OrderStatus;
  workflow_id: string;
  links: { self: string };
}

export interface OrderEventView {
  /** The status the order moved to, or `overdue`: no definite answer from the rail by the settle deadline. */
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

/** The caller's KYC status and what they paid (KES minor units) in the last 24 hours, in one query. */
async function tierStanding(userId: string): Promise<{ kycStatus: KycStatus; usedKesMinor: bigint } | null> {
  const [row] = await database().query<{ kyc_status: KycStatus; used: string }>(
    `SELECT u.kyc_status,
            (SELECT coalesce(sum(o.kes_equivalent_minor), 0) FROM orders o
              WHERE o.user_id = u.id AND o.created_at > now() - interval '24 hours'
                AND o.status NOT IN ('rejected', 'failed'))::text AS used
       FROM users u WHERE u.id = :userId`,
    { replacements: { userId }, type: QueryTypes.SELECT },
  );
  return row ? { kycStatus: row.kyc_status, usedKesMinor: BigInt(row.used) } : null;
}

/** What the start of a payment workflow shows operators: its search attributes and its one-line summary. */
type OrderFacts = Pick<Order, 'id' | 'userId' | 'method' | 'status' | 'amountMinor' | 'currency' | 'destination'>;

const maskIdentifier = (id: string): string => (id.length > 8 ? `${id.slice(0, 5)}…${id.slice(-4)}` : id);

/** "KES 1500.00 mobile_money to +2547…5678": where the money goes, phones and accounts cut short. */
export function paymentSummary(order: OrderFacts): string {
  const d = order.destination;
  const to = d.phone
    ? maskIdentifier(d.phone)
    : d.account_number
      ? `bank ${d.bank_code ?? '?'} account ${maskIdentifier(d.account_number)}`
      : d.exchange_id
        ? `exchange ${d.exchange_id}`
        : d.ad_id
          ? `P2P ad ${d.ad_id}`
          : undefined;
  return `${order.currency} ${formatAmount(order.amountMinor, order.currency as Currency)} ${order.method}${to ? ` to ${to}` : ''}`;
}

/**
 * Start the payment workflow for an order; starting it twice is harmless (same workflow id). The
 * workflow's first activity records `workflow_started_at`, so the api spends no extra round trip on it.
 * The start carries the order's search attributes (when the namespace knows them) and a summary.
 */
export async function startPaymentWorkflow(
  orderId: string,
  taskQueue = config().temporal.taskQueue,
  options: { p2p?: boolean; order?: OrderFacts } = {},
): Promise<void> {
  const cfg = config();
  const client = temporalClient();
  const order =
    options.order ??
    (await Order.findByPk(orderId, { attributes: ['id', 'userId', 'method', 'status', 'amountMinor', 'currency', 'destination'] }));
  const input: PaymentWorkflowInput = {
    orderId,
    pollAfterMs: cfg.payments.pollAfterMs,
    settleTimeoutMs: cfg.payments.settleTimeoutMs,
    maxPollIntervalMs: cfg.payments.maxPollIntervalMs,
    ...(options.p2p ? { p2p: true } : {}),
  };
  const start = (withAttributes: boolean) =>
    client.connection.withDeadline(Date.now() + 5000, () =>
      client.workflow.start(PAYMENT_WORKFLOW, {
        workflowId: paymentWorkflowId(orderId),
        taskQueue,
        args: [input],
        // Even after the first run has closed, the same order never gets a second run.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        ...(order ? { staticSummary: paymentSummary(order), memo: { orderId, userId: order.userId, method: order.method } } : {}),
        ...(order && withAttributes
          ? { typedSearchAttributes: orderSearchAttributes({ orderId, userId: order.userId, method: order.method, status: order.status }) }
          : {}),
      }),
    );
  try {
    await ensureTemporalConnected(client);
    await startWithSearchAttributes(start);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * Accept a payment: validate, check the KYC tier, record the order, start its workflow. When Temporal
 * cannot be reached the order is still accepted; the reconciler starts its workflow later.
 */
export async function initiatePayment(caller: Caller, body: PaymentRequestInput, idempotencyKey: string): Promise<PaymentAccepted> {
  const request = validatePaymentRequest(body);
  // A trade against a P2P ad: priced now, its escrow locked by the workflow.
  const trade = request.method === 'p2p' ? await quoteTrade(caller, request.destination, request.amountMinor) : null;
  const cfg = config();
  const { route } = await checkDestination(request, cfg.discovery.primaryBankCode);
  const kes = toKesMinor(request.amountMinor, request.currency, cfg.limits.fxToKes);
  const standing = await tierStanding(caller.id);
  if (!standing) throw new AppError('unauthenticated', 'the account no longer exists');
  const breach = evaluateTierLimits(standing.kycStatus, kes, standing.usedKesMinor, cfg.limits);
  if (breach) throw new AppError(breach.code, breach.reason);

  const id = uuidv7();
  let order: Order;
  try {
    const create = (transaction?: Transaction) =>
      Order.create(
        {
          id,
          userId: caller.id,
          idempotencyKey,
          amountMinor: request.amountMinor.toString(),
          kesEquivalentMinor: kes.toString(),
          currency: request.currency,
          method: request.method,
          destination: request.destination,
          description: request.description,
          reference: request.reference,
          route,
          workflowId: paymentWorkflowId(id),
        },
        { transaction },
      );
    order = trade
      ? await database().transaction(async (transaction) => {
          const created = await create(transaction);
          await recordTrade(created.id, trade, transaction);
          return created;
        })
      : await create();
  } catch (err) {
    if (!(err instanceof UniqueConstraintError)) throw err;
    // The same key was accepted before (a retry after a lost response): answer with that order.
    const existing = await Order.findOne({ where: { userId: caller.id, idempotencyKey } });
    if (!existing) throw err;
    order = existing;
  }

  if (!order.workflowStartedAt) {
    if (deferStartWhileBackingOff()) {
      log.warn({ orderId: order.id }, 'a workflow start failed moments ago; the reconciler will start this one');
    } else {
      try {
        await startPaymentWorkflow(order.id, undefined, { p2p: order.method === 'p2p', order });
      } catch (err) {
        noteStartFailed();
        log.warn({ orderId: order.id, err }, 'workflow start failed; the reconciler will start it');
      }
    }
  }
  return { order_id: order.id, status: order.status, workflow_id: order.workflowId, links: { self: orderLink(order.id) } };
}

interface OrderRow {
  id: string;
  user_id: string;
  status: OrderStatus;
  amount_minor: string;
  currency: Currency;
  method: PaymentMethod;
  destination: Record<string, string>;
  description: string | null;
  reference: string | null;
  failure_code: string | null;
  failure_reason: string | null;
  rail_reference: string | null;
  route: BankRoute | null;
  workflow_id: string;
  created_at: Date;
  updated_at: Date;
}

const ORDER_COLUMNS = `o.id, o.user_id, o.status, o.amount_minor, o.currency, o.method, o.destination, o.description,
  o.reference, o.failure_code, o.failure_reason, o.rail_reference, o.route, o.workflow_id, o.created_at, o.updated_at`;

function toSummary(row: OrderRow): OrderSummary {
  return {
    order_id: row.id,
    user_id: row.user_id,
    status: row.status,
    amount: formatAmount(row.amount_minor, row.currency),
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

/** One order with its events, in one query. Another user's order is a 404, never a 403. */
export async function getOrder(caller: Caller, orderId: string): Promise<OrderView> {
  if (!isUuid(orderId)) throw validationError('order_id', 'must be a UUID');
  const [row] = await database().query<OrderRow & { events: OrderEventView[] }>(
    `SELECT ${ORDER_COLUMNS},
            coalesce((SELECT json_agg(json_build_object('status', e.status, 'at', e.at, 'detail', e.detail) ORDER BY e.id)
                        FROM order_events e WHERE e.order_id = o.id), '[]'::json) AS events
       FROM orders o WHERE o.id = :orderId`,
    { replacements: { orderId }, type: QueryTypes.SELECT },
  );
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
  const where: string[] = [];
  const replacements: Record<string, unknown> = { limit: limit + 1 };
  if (isStaff(caller)) {
    if (q.user_id !== undefined) {
      if (!isUuid(q.user_id)) throw validationError('user_id', 'must be a UUID');
      where.push('o.user_id = :userId');
      replacements.userId = q.user_id;
    }
  } else {
    where.push('o.user_id = :userId');
    replacements.userId = caller.id;
  }
  if (q.status !== undefined) {
    if (!(ORDER_STATUSES as readonly string[]).includes(q.status))
      throw validationError('status', `must be one of ${ORDER_STATUSES.join(', ')}`);
    where.push('o.status = :status');
    replacements.status = q.status;
  }
  if (q.method !== undefined) {
    if (!(PAYMENT_METHODS as readonly string[]).includes(q.method))
      throw validationError('method', `must be one of ${PAYMENT_METHODS.join(', ')}`);
    where.push('o.method = :method');
    replacements.method = q.method;
  }
  if (q.currency !== undefined) {
    if (!(CURRENCIES as string[]).includes(q.currency)) throw validationError('currency', `must be one of ${CURRENCIES.join(', ')}`);
    where.push('o.currency = :currency');
    replacements.currency = q.currency;
  }
  if (q.from !== undefined) {
    where.push('o.created_at >= :from');
    replacements.from = parseTime(q.from, 'from');
  }
  if (q.to !== undefined) {
    where.push('o.created_at < :to');
    replacements.to = parseTime(q.to, 'to');
  }
  if (q.cursor !== undefined) {
    where.push('o.id < :after');
    replacements.after = decodeCursor(q.cursor);
  }
  const rows = await database().query<OrderRow>(
    `SELECT ${ORDER_COLUMNS} FROM orders o ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY o.id DESC LIMIT :limit`,
    { replacements, type: QueryTypes.SELECT },
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(toSummary), next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}

/** Start the workflow of every accepted order whose start failed (Temporal was down, the api crashed). */
export async function reconcileUnstartedOrders(graceMs = config().reconciler.graceMs, batch = 200): Promise<number> {
  const orders = await Order.findAll({
    attributes: ['id', 'userId', 'method', 'status', 'amountMinor', 'currency', 'destination'],
    where: { workflowStartedAt: null, createdAt: { [Op.lt]: new Date(Date.now() - graceMs) } },
    order: [['createdAt', 'ASC']],
    limit: batch,
  });
  let started = 0;
  for (const order of orders) {
    try {
      await startPaymentWorkflow(order.id, undefined, { p2p: order.method === 'p2p', order });
      // Also covers a workflow that was started but has not run yet: it is marked now, not restarted.
      await Order.update({ workflowStartedAt: new Date() }, { where: { id: order.id, workflowStartedAt: null } });
      started += 1;
    } catch (err) {
      log.warn({ orderId: order.id, err: (err as Error).message }, 'reconciler could not start the workflow yet');
      break;
    }
  }
  if (started > 0) log.info({ started }, 'reconciler started workflows');
  return started;
}
