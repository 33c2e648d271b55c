import { Op, QueryTypes, type InferAttributes, type Transaction } from 'sequelize';
import { Order, models } from '../models';
import { claimWithAnswer, type KeyClaim, type StoredAnswer } from './idempotency';
import { asInsufficientFunds, balanceExpression, paymentPosting, paymentPostingCtes } from './ledger';
import { queryPrepared, queryRows } from './transaction';
import { BLOCKLIST_VERSION_COLUMNS, BLOCKLIST_VERSION_JOIN } from './compliance';
import type { BankRoute } from '../domain/discovery/routing';
import type { OrderEventKind, OrderStatus, PaymentMethod } from '../domain/orders';
import type { PaymentAccounts } from '../domain/ledger';
import type { KycStatus } from '../domain/users';
import type { TierLimitsMinor } from '../domain/limits';

/**
 * Orders, their events and their refunds: every read and write of `orders`, `order_events` and `refunds` is
 * here. An order's status changes only through `transitionOrder`, a conditional update that also records
 * the event.
 */

/** An order as the rest of the code sees it: a plain object, never a model instance. */
export type OrderRecord = InferAttributes<Order>;

const plain = (order: Order | null): OrderRecord | null => (order ? order.get({ plain: true }) : null);

let recordColumns: string | undefined;
/** Every column of `orders` under its record name (`user_id AS "userId"`…): a raw row that is an `OrderRecord`. */
function orderRecordColumns(): string {
  recordColumns ??= Object.entries(Order.getAttributes())
    .map(([name, attribute]) => `o."${attribute.field ?? name}" AS "${name}"`)
    .join(', ');
  return recordColumns;
}

export async function findOrder(orderId: string, tx?: Transaction): Promise<OrderRecord | null> {
  // Read by every payment step: straight through pg (see queryRows).
  const [order] = await queryPrepared<OrderRecord>(`SELECT ${orderRecordColumns()} FROM orders o WHERE o.id = $1`, [orderId], tx);
  return order ?? null;
}

/** The order, locked (`FOR UPDATE`) for the rest of `tx`. */
export async function lockOrder(orderId: string, tx: Transaction): Promise<OrderRecord | null> {
  const [order] = await queryPrepared<OrderRecord>(
    `SELECT ${orderRecordColumns()} FROM orders o WHERE o.id = $1 FOR UPDATE`,
    [orderId],
    tx,
  );
  return order ?? null;
}

export interface Transition {
  /** The statuses the order may move from; when it is in none of them, nothing changes. */
  from: readonly OrderStatus[];
  to: OrderStatus;
  failureCode?: string;
  reason?: string;
  railReference?: string;
  /** The event's detail; by default `<failureCode>: <reason>` for a failure, else none. */
  note?: string;
  /** Screening rejected the order on this blocklist entry, with this score. */
  screening?: { entryId: string; score: string };
  /** The limits check passed with this change: the order now counts towards the user's 24-hour usage. */
  limitsChecked?: boolean;
}

/**
 * The one way an order's status changes: a conditional update (`WHERE status IN from`), its event recorded
 * once per status, and `workflow_started_at` stamped on the first change. Returns whether the order moved.
 */
export async function transitionOrder(
  orderId: string,
  t: Transition,
  tx?: Transaction,
  posting?: { kind: 'hold' | 'settle'; accounts: PaymentAccounts },
): Promise<boolean> {
  // One statement (the update and its event together, and with `posting` the ledger's posting made only when the
  // order moved), so it is atomic on its own; `tx` when it is one step of several. Every payment step runs it:
  // straight through pg (see queryRows).
  const detail = t.note ?? (t.failureCode ? `${t.failureCode}: ${t.reason ?? ''}`.trim() : null);
  const posted = posting && paymentPostingCtes(posting.kind, posting.accounts, 'moved', 11);
  try {
    return await moveOrder(orderId, t, detail, posted, tx);
  } catch (err) {
    throw (posted && asInsufficientFunds(err, posted.lines)) ?? err;
  }
}

async function moveOrder(
  orderId: string,
  t: Transition,
  detail: string | null,
  posted: { ctes: string; values: unknown[] } | undefined,
  tx: Transaction | undefined,
): Promise<boolean> {
  const [row] = await queryPrepared<{ moved: number }>(
    `WITH moved AS (
       UPDATE orders
          SET status = $2,
              failure_code = coalesce($3, failure_code),
              failure_reason = coalesce($4, failure_reason),
              rail_reference = coalesce($5, rail_reference),
              screening_entry_id = coalesce($6::uuid, screening_entry_id),
              screening_score = coalesce($7::numeric, screening_score),
              workflow_started_at = coalesce(workflow_started_at, now()),
              limits_checked_at = CASE WHEN $10::boolean THEN coalesce(limits_checked_at, now()) ELSE limits_checked_at END,
              updated_at = now()
        WHERE id = $1 AND status = ANY($8::text[])
       RETURNING id
     ), events AS (
       INSERT INTO order_events (order_id, status, detail)
       SELECT id, $2, $9 FROM moved
       ON CONFLICT (order_id, status) DO NOTHING
     )${posted ? `, ${posted.ctes}` : ''}
     SELECT count(*)::int AS moved FROM moved`,
    [
      orderId,
      t.to,
      t.failureCode ?? null,
      t.reason ?? null,
      t.railReference ?? null,
      t.screening?.entryId ?? null,
      t.screening?.score ?? null,
      [...t.from],
      detail,
      t.limitsChecked ?? false,
      ...(posted?.values ?? []),
    ],
    tx,
  );
  return row.moved > 0;
}

/** Record an order event that is not a status change (`overdue`); each kind is recorded once per order. */
export async function recordOrderEvent(orderId: string, kind: OrderEventKind, detail: string | null, tx: Transaction): Promise<void> {
  await models().query(
    'INSERT INTO order_events (order_id, status, detail) VALUES (:orderId, :status, :detail) ON CONFLICT (order_id, status) DO NOTHING',
    { replacements: { orderId, status: kind, detail }, transaction: tx },
  );
}

/**
 * What a user has committed in the last 24 hours, in KES minor units, against the KYC tier limits: every
 * order whose limits were checked (so two racing payments never count each other twice) and that was not
 * rejected or failed. The one definition is the database's `order_limit_usage`, which the api's early answer
 * (`acceptOrder`) and the admission's check under lock (`limitsAndHold`) use as well.
 */
export async function limitUsage(userId: string, options: { excludeOrderId?: string; tx?: Transaction } = {}): Promise<bigint> {
  const [row] = await queryPrepared<{ used: string }>(
    'SELECT order_limit_usage($1::uuid, $2::uuid)::text AS used',
    [userId, options.excludeOrderId ?? null],
    options.tx,
  );
  return BigInt(row.used);
}

/** What `limitsAndHold` found and did. */
export type LimitsAndHold =
  | { outcome: 'missing' }
  | { outcome: 'rejected' | 'failed'; failureCode: string | null }
  | { outcome: 'held' }
  | { outcome: 'over_limits'; kycStatus: KycStatus; usedKesMinor: bigint };

/** The tiers' limits as one `numeric[]` parameter: per payment and per 24 hours, unverified then verified. */
const tierLimitsParameter = (limits: TierLimitsMinor): string[] =>
  [limits.unverified.perPayment, limits.unverified.daily, limits.verified.perPayment, limits.verified.daily].map(String);

/**
 * A payment's KYC limits check and its hold in one statement (`payment_limits_and_hold`, one round trip where a
 * transaction of five statements was): under the order's and its payer's locks, an order not yet held whose limits
 * were not checked is checked against the payer's tier; within them, the hold is posted on `accounts` and the
 * order moves to `processing`, its event recorded. `over_limits` writes nothing: the caller says which limit
 * (`evaluateTierLimits`) and rejects the order. The database refuses a hold the wallet cannot cover
 * (`InsufficientFunds`), and then nothing was written.
 */
export async function limitsAndHold(orderId: string, limits: TierLimitsMinor, accounts: PaymentAccounts): Promise<LimitsAndHold> {
  const posting = paymentPosting('hold', accounts);
  try {
    const [row] = await queryPrepared<{
      outcome: LimitsAndHold['outcome'];
      failure_code: string | null;
      kyc_status: KycStatus;
      used: string | null;
    }>('SELECT * FROM payment_limits_and_hold($1::uuid, $2::numeric[], $3::uuid, $4::text, $5::text[], $6::text[], $7::numeric[])', [
      orderId,
      tierLimitsParameter(limits),
      ...posting.values,
    ]);
    switch (row.outcome) {
      case 'over_limits':
        return { outcome: 'over_limits', kycStatus: row.kyc_status, usedKesMinor: BigInt(row.used ?? '0') };
      case 'rejected':
      case 'failed':
        return { outcome: row.outcome, failureCode: row.failure_code };
      default:
        return { outcome: row.outcome };
    }
  } catch (err) {
    throw asInsufficientFunds(err, posting.lines) ?? err;
  }
}

/** The limits check passed: the order now counts towards the user's 24-hour usage. */
export async function markLimitsChecked(orderId: string, tx: Transaction): Promise<void> {
  await queryRows(
    'UPDATE orders SET limits_checked_at = now(), updated_at = now() WHERE id = $1 AND limits_checked_at IS NULL',
    [orderId],
    tx,
  );
}

/**
 * No definite answer from the rail by the settle deadline: a `processing` order is flagged overdue and an
 * `overdue` event recorded, once. Any other order is left as it is.
 */
export async function markOverdue(orderId: string, reason: string, tx: Transaction): Promise<void> {
  const [flagged] = await Order.update(
    { overdueAt: new Date(), updatedAt: new Date() },
    { where: { id: orderId, status: 'processing', overdueAt: null }, transaction: tx },
  );
  if (flagged > 0) await recordOrderEvent(orderId, 'overdue', reason, tx);
}

/** A `processing` order whose submission's outcome is unknown: an `outcome_unknown` event, once. */
export async function recordOutcomeUnknown(orderId: string, reason: string, tx: Transaction): Promise<void> {
  await recordOrderEvent(orderId, 'outcome_unknown', reason, tx);
}

/** The connector an order is submitted on, recorded before the rail can answer (a callback is taken only from it). */
export async function recordRail(orderId: string, rail: string): Promise<void> {
  await queryRows('UPDATE orders SET rail = $2, updated_at = now() WHERE id = $1', [orderId, rail]);
}

/** What became of the last request sent to a rail (see `Order.railSubmission`). */
export type RailSubmissionState = 'sending' | 'refused' | 'accepted';

/** The next number of the rails that take a reference of our choosing; never handed out twice. */
export async function nextRailSerial(): Promise<string> {
  const [row] = await queryRows<{ serial: string }>(`SELECT nextval('rail_reference_serials')::text AS serial`, []);
  return row.serial;
}

/**
 * Record that a request for the order is leaving for `rail`, before it leaves: the rail, the reference it
 * will see (`reference` is recorded only when none is yet, so a resubmission reuses the first), the time the
 * first one left, and `sending`. Returns the reference the request must carry and the state before this
 * request (`sending` when an earlier request's outcome is still unknown). A reference some other order
 * already holds on the rail is refused by the database (a unique violation the caller retries with another).
 */
export async function beginRailSubmission(
  orderId: string,
  rail: string,
  reference: string,
): Promise<{ reference: string; previous: RailSubmissionState | null }> {
  const [row] = await queryPrepared<{ reference: string; previous: RailSubmissionState | null }>(
    `WITH previous AS (SELECT rail_submission FROM orders WHERE id = $1 FOR UPDATE)
     UPDATE orders SET rail = $2, rail_client_reference = coalesce(rail_client_reference, $3), rail_submission = 'sending',
            rail_sent_at = coalesce(rail_sent_at, now()), updated_at = now()
      WHERE id = $1
     RETURNING rail_client_reference AS reference, (SELECT rail_submission FROM previous) AS previous`,
    [orderId, rail, reference],
  );
  // No such order (a request made outside a payment): nothing to record, and no earlier request.
  return row ?? { reference, previous: null };
}

/** What became of the request that left: `refused` only moves a `sending` request (an unknown is never downgraded by the caller's choice). */
export async function recordRailSubmission(orderId: string, state: RailSubmissionState, tx?: Transaction): Promise<void> {
  await queryRows('UPDATE orders SET rail_submission = $2, updated_at = now() WHERE id = $1', [orderId, state], tx);
}

/** A `processing` order with no definite answer from its rail, listed for operators. */
export interface UnresolvedPayoutRow {
  id: string;
  user_id: string;
  method: string;
  amount_minor: string;
  currency: string;
  rail: string;
  rail_client_reference: string | null;
  rail_reference: string | null;
  rail_submission: RailSubmissionState;
  rail_sent_at: Date;
  /** `rail_sent_at` in microseconds since the epoch: the exact keyset position. */
  sent_at_us: string;
  overdue_at: Date | null;
  created_at: Date;
}

/**
 * Orders still `processing` whose first request left for the rail before `sentBefore`, oldest first (keyset
 * on the microsecond it left and the id).
 */
export async function unresolvedPayouts(
  q: { sentBefore: Date; after: { sentAtUs: string; id: string } | null },
  limit: number,
): Promise<UnresolvedPayoutRow[]> {
  return queryRows<UnresolvedPayoutRow>(
    `SELECT id, user_id, method, amount_minor::text AS amount_minor, currency, rail, rail_client_reference, rail_reference,
            rail_submission, rail_sent_at, overdue_at, created_at,
            ((extract(epoch FROM rail_sent_at) * 1000000)::numeric(20, 0))::text AS sent_at_us
       FROM orders
      WHERE status = 'processing' AND rail_sent_at IS NOT NULL AND rail_sent_at < $1
        AND ($2::bigint IS NULL OR (rail_sent_at, id) > (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
      ORDER BY rail_sent_at, id
      LIMIT $4`,
    [q.sentBefore, q.after?.sentAtUs ?? null, q.after?.id ?? null, limit],
  );
}

/** The rail's reference for an accepted submission. */
/** The rail's answer to the order's request: its reference, and the request `accepted`, in one statement. */
export async function recordRailAcceptance(orderId: string, railReference: string, tx?: Transaction): Promise<void> {
  await queryPrepared(
    `UPDATE orders SET rail_reference = $2, rail_submission = 'accepted', updated_at = now() WHERE id = $1`,
    [orderId, railReference],
    tx,
  );
}

/** Recorded by the reconciler once it started an order's workflow (the workflow may not have run yet). */
export async function markWorkflowStarted(orderId: string): Promise<void> {
  await Order.update({ workflowStartedAt: new Date() }, { where: { id: orderId, workflowStartedAt: null } });
}

/** Orders accepted more than `graceMs` ago whose workflow never started, oldest first. */
export async function unstartedOrders(graceMs: number, limit: number): Promise<OrderRecord[]> {
  const orders = await Order.findAll({
    // A bulk payout's orders are started by their batch's workflow, as its children (docs/payments.md#bulk-payouts).
    where: { workflowStartedAt: null, payoutBatchId: null, createdAt: { [Op.lt]: new Date(Date.now() - graceMs) } },
    order: [['createdAt', 'ASC']],
    limit,
  });
  return orders.map((o) => o.get({ plain: true }));
}

export type NewOrder = Pick<
  OrderRecord,
  | 'id'
  | 'userId'
  | 'idempotencyKey'
  | 'amountMinor'
  | 'kesEquivalentMinor'
  | 'currency'
  | 'method'
  | 'destination'
  | 'description'
  | 'reference'
  | 'route'
  | 'workflowId'
> & { feeMinor?: string; payoutBatchId?: string };

/** A new order's columns as the order inserts take them, `$1` to `$14`, in their column order. */
const orderParameters = (order: NewOrder): unknown[] => [
  order.id,
  order.userId,
  order.idempotencyKey,
  order.amountMinor,
  order.feeMinor ?? null,
  order.kesEquivalentMinor,
  order.currency,
  order.method,
  JSON.stringify(order.destination),
  order.description,
  order.reference,
  order.route,
  order.workflowId,
  order.payoutBatchId ?? null,
];

/** Record an accepted order; a second order with the same (user, idempotency key) is refused (`isDuplicate`). */
export async function createOrder(order: NewOrder, tx?: Transaction): Promise<OrderRecord> {
  // Every accepted payment: straight through pg (see queryRows).
  const [created] = await queryRows<OrderRecord>(
    `INSERT INTO orders AS o (id, user_id, idempotency_key, amount_minor, fee_minor, kes_equivalent_minor, currency, method,
                              destination, description, reference, route, workflow_id, payout_batch_id)
     VALUES ($1, $2, $3, $4, coalesce($5::numeric, 0), $6, $7, $8, $9, $10, $11, $12, $13, $14)
     RETURNING ${orderRecordColumns()}`,
    orderParameters(order),
    tx,
  );
  return created;
}

/**
 * Record many accepted orders in one statement, inside `tx`: the ids of those recorded. An order whose (user,
 * idempotency key) is taken already is left out, not refused; its caller looks it up (`findOrderByIdempotencyKey`).
 */
export async function createOrders(orders: NewOrder[], tx: Transaction): Promise<Set<string>> {
  if (orders.length === 0) return new Set();
  const rows = await queryRows<{ id: string }>(
    `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, fee_minor, kes_equivalent_minor, currency, method,
                         destination, description, reference, route, workflow_id, payout_batch_id)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::numeric[], $5::numeric[], $6::numeric[], $7::text[], $8::text[],
                          $9::jsonb[], $10::text[], $11::text[], $12::text[], $13::text[], $14::uuid[])
     ON CONFLICT (user_id, idempotency_key) DO NOTHING
     RETURNING id`,
    [
      orders.map((o) => o.id),
      orders.map((o) => o.userId),
      orders.map((o) => o.idempotencyKey),
      orders.map((o) => o.amountMinor),
      orders.map((o) => o.feeMinor ?? '0'),
      orders.map((o) => o.kesEquivalentMinor),
      orders.map((o) => o.currency),
      orders.map((o) => o.method),
      orders.map((o) => JSON.stringify(o.destination)),
      orders.map((o) => o.description),
      orders.map((o) => o.reference),
      orders.map((o) => o.route),
      orders.map((o) => o.workflowId),
      orders.map((o) => o.payoutBatchId ?? null),
    ],
    tx,
  );
  return new Set(rows.map((r) => r.id));
}

/** The status and failure code of each of these orders that exists, by id, in one read. */
export async function orderOutcomes(orderIds: string[]): Promise<Map<string, { status: OrderStatus; failureCode: string | null }>> {
  const rows = await queryRows<{ id: string; status: OrderStatus; failure_code: string | null }>(
    'SELECT id, status, failure_code FROM orders WHERE id = ANY($1::uuid[])',
    [orderIds],
  );
  return new Map(rows.map((r) => [r.id, { status: r.status, failureCode: r.failure_code }]));
}

/** What `acceptOrder` checks the order against before it records it. */
export interface AcceptanceCheck {
  /**
   * The KYC tiers' limits (KES minor units). The payer's tier is the one of their KYC status as the statement reads
   * it: the order's KES equivalent may not pass its per-payment limit, nor, with what counts towards it
   * (`limitUsage`), its 24-hour limit (as `evaluateTierLimits` judges them).
   */
  limits: TierLimitsMinor;
  /** The wallet the order will be paid from, which must hold `fundingMinor`. */
  fundingAccount: string;
  fundingCurrency: string;
  fundingMinor: bigint;
}

/**
 * The Idempotency-Key claim `acceptOrder` makes in its own statement, and the answer it stores with the order
 * it records (docs/conventions.md#idempotency).
 */
export interface AcceptanceClaim {
  claim: KeyClaim;
  answer: StoredAnswer;
  /**
   * An order may already hold this (user, key): the statement looks for it first, and then records nothing and
   * holds the key. Set on the second try, after the first was refused by the key's uniqueness (`isDuplicate`);
   * unset, the unique index alone refuses a second order, and the first try costs no lookup.
   */
  orderMayExist?: boolean;
}

/** What `acceptOrder` judged, and what it did with the Idempotency-Key claim when it was given one. */
export interface Acceptance {
  /** The payer's KYC status as the statement read it; null when there is no such user: then nothing was recorded nor claimed. */
  kycStatus: KycStatus | null;
  created: OrderRecord | null;
  usedKesMinor: bigint;
  availableMinor: bigint;
  /**
   * `answered`: claimed, and the answer stored with the order; `held`: claimed, no order recorded (its answer is
   * the caller's to store); `taken`: another request holds the key, nothing recorded. Undefined without a claim,
   * and when there is no such user.
   */
  claim?: 'answered' | 'held' | 'taken';
}

/**
 * Record an accepted order only if its payer exists, their tier's limits leave room for it and the wallet covers
 * it, in one statement: the payer's KYC status, the usage, the balance and the insert in one round trip. Returns
 * the order when it was recorded, and in any case the KYC status, the usage and the balance it was judged on,
 * for the caller to say why it was not: no such payer (then nothing is claimed either), over a limit, short, or
 * (none of these) its (user, idempotency key) taken already (`findOrderByIdempotencyKey`).
 * Nothing is held here: the workflow checks the limits again under lock and holds the money, and the database
 * refuses a hold the wallet cannot cover.
 *
 * With `idempotency`, the same statement claims the request's Idempotency-Key first and records the order only
 * when it holds the key, storing the answer with it: when the order is recorded, so is its answer. An order
 * already under this (user, key) (another credential of the same user, or a key claimed again once it expired)
 * refuses the insert (`isDuplicate`), and the whole statement, claim and answer included, is undone. Running it
 * again with `orderMayExist` judges that order: it is seen before the claim, nothing is recorded and the key is
 * held.
 */
export async function acceptOrder(
  order: NewOrder,
  check: AcceptanceCheck,
  idempotency?: AcceptanceClaim,
  tx?: Transaction,
): Promise<Acceptance> {
  const values: unknown[] = [
    ...orderParameters(order),
    check.fundingAccount,
    check.fundingCurrency,
    tierLimitsParameter(check.limits),
    check.fundingMinor.toString(),
  ];
  const claim = idempotency
    ? claimWithAnswer(
        idempotency.claim,
        idempotency.answer,
        {
          answeredWhen: idempotency.orderMayExist
            ? 'judged.fits AND NOT EXISTS (SELECT 1 FROM orders WHERE user_id = $2::uuid AND idempotency_key = $3::text)'
            : 'judged.fits',
          from: 'judged',
        },
        values.length + 1,
      )
    : undefined;
  const [row] = await queryPrepared<
    OrderRecord & { kycStatus: KycStatus | null; usedKesMinor: string; availableMinor: string; created: boolean; claim: string | null }
  >(
    `WITH payer AS (
       -- $17: the tiers' limits (tierLimitsParameter).
       SELECT u.kyc_status, l.limits[CASE WHEN u.kyc_status = 'verified' THEN 3 ELSE 1 END] AS per_payment,
              l.limits[CASE WHEN u.kyc_status = 'verified' THEN 4 ELSE 2 END] AS daily
         FROM users u, (SELECT $17::numeric[] AS limits) AS l WHERE u.id = $2::uuid
     ), used AS (
       SELECT order_limit_usage($2::uuid, NULL) AS used
     ), funds AS (
       SELECT ${balanceExpression(15, 16)} AS available
     ), judged AS (
       -- No row without a payer: then neither the order nor the claim is written.
       SELECT $6::numeric <= payer.per_payment AND used.used + $6::numeric <= payer.daily AND funds.available >= $18::numeric AS fits
         FROM payer, used, funds
     ), ${claim ? `claim AS (${claim.sql}), ` : ''}made AS (
       INSERT INTO orders AS o (id, user_id, idempotency_key, amount_minor, fee_minor, kes_equivalent_minor, currency, method,
                                destination, description, reference, route, workflow_id, payout_batch_id)
       SELECT $1::uuid, $2::uuid, $3::text, $4::numeric, coalesce($5::numeric, 0), $6::numeric, $7::text, $8::text, $9::jsonb,
              $10::text, $11::text, $12::text, $13::text, $14::uuid
         ${claim ? `FROM claim WHERE claim.state = 'completed'` : 'FROM judged WHERE judged.fits ON CONFLICT (user_id, idempotency_key) DO NOTHING'}
       RETURNING ${orderRecordColumns()}
     )
     SELECT payer.kyc_status AS "kycStatus", used.used::text AS "usedKesMinor", funds.available::text AS "availableMinor",
            made.id IS NOT NULL AS created, ${claim ? '(SELECT state FROM claim)' : 'NULL::text'} AS claim, made.*
       FROM used CROSS JOIN funds LEFT JOIN payer ON true LEFT JOIN made ON true`,
    claim ? [...values, ...claim.values] : values,
    tx,
  );
  const { kycStatus, usedKesMinor, availableMinor, created, claim: state, ...record } = row;
  return {
    kycStatus,
    created: created ? record : null,
    usedKesMinor: BigInt(usedKesMinor),
    availableMinor: BigInt(availableMinor),
    claim: idempotency && kycStatus ? (state === 'completed' ? 'answered' : state === 'in_progress' ? 'held' : 'taken') : undefined,
  };
}

export async function findOrderByIdempotencyKey(userId: string, idempotencyKey: string): Promise<OrderRecord | null> {
  return plain(await Order.findOne({ where: { userId, idempotencyKey } }));
}

export async function statusOf(orderId: string, tx?: Transaction): Promise<OrderStatus | null> {
  const order = await Order.findByPk(orderId, { attributes: ['status'], transaction: tx });
  return order?.status ?? null;
}

/** An order as the API shows it: snake_case columns, read in one query. */
export interface OrderRow {
  id: string;
  user_id: string;
  status: OrderStatus;
  amount_minor: string;
  fee_minor: string;
  currency: string;
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

export interface OrderEventRow {
  status: OrderEventKind;
  at: string;
  detail: string | null;
}

// Amounts as text: as exact as numeric, and kept exact when a row is read as JSON (`orderWithEventsJson`).
const ORDER_COLUMNS = `o.id, o.user_id, o.status, o.amount_minor::text AS amount_minor, o.fee_minor::text AS fee_minor, o.currency, o.method, o.destination, o.description,
  o.reference, o.failure_code, o.failure_reason, o.rail_reference, o.route, o.workflow_id, o.created_at, o.updated_at`;

export type OrderWithEvents = OrderRow & { events: OrderEventRow[] };

/** The statement reading one order (its id the parameter `$<n>`) with its events, oldest first. */
const orderWithEventsQuery = (n: number): string => `SELECT ${ORDER_COLUMNS},
            coalesce((SELECT json_agg(json_build_object('status', e.status, 'at', e.at, 'detail', e.detail) ORDER BY e.id)
                        FROM order_events e WHERE e.order_id = o.id), '[]'::json) AS events
       FROM orders o WHERE o.id = $${n}`;

/**
 * The same read as one JSON value (null when there is no such order), for a statement of another table's
 * repository to carry (`standingWithOrder`): the order's columns as `orderWithEvents` returns them.
 */
export const orderWithEventsJson = (n: number): string => `(SELECT row_to_json(r) FROM (${orderWithEventsQuery(n)}) r)`;

/** One order with its events (oldest first), in one query. */
export async function orderWithEvents(orderId: string): Promise<OrderWithEvents | null> {
  // The status read clients poll: straight through pg (see queryRows).
  const [row] = await queryPrepared<OrderWithEvents>(orderWithEventsQuery(1), [orderId]);
  return row ?? null;
}

export interface OrderFilter {
  userId?: string;
  status?: OrderStatus;
  method?: PaymentMethod;
  currency?: string;
  from?: Date;
  to?: Date;
  /** Keyset: only orders with an id below this one (ids are time-ordered UUIDv7). */
  before?: string;
}

/** Orders newest first, keyset-paged on id. */
export async function listOrders(filter: OrderFilter, limit: number): Promise<OrderRow[]> {
  const where: string[] = [];
  if (filter.userId !== undefined) where.push('o.user_id = :userId');
  if (filter.status !== undefined) where.push('o.status = :status');
  if (filter.method !== undefined) where.push('o.method = :method');
  if (filter.currency !== undefined) where.push('o.currency = :currency');
  if (filter.from !== undefined) where.push('o.created_at >= :from');
  if (filter.to !== undefined) where.push('o.created_at < :to');
  if (filter.before !== undefined) where.push('o.id < :before');
  return models().query<OrderRow>(
    `SELECT ${ORDER_COLUMNS} FROM orders o ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY o.id DESC LIMIT :limit`,
    { replacements: { ...filter, limit }, type: QueryTypes.SELECT },
  );
}

/** How many orders there are per (status, method): the operators' payment gauges. */
export async function countByStatusAndMethod(tx?: Transaction): Promise<{ status: string; method: string; n: number }[]> {
  return models().query<{ status: string; method: string; n: number }>(
    'SELECT status, method, count(*)::int AS n FROM orders GROUP BY status, method',
    { type: QueryTypes.SELECT, transaction: tx },
  );
}

/** How many `processing` orders are overdue (no definite answer from the rail by the settle deadline). */
export async function countOverdue(tx?: Transaction): Promise<number> {
  const [row] = await models().query<{ n: number }>(
    "SELECT count(*)::int AS n FROM orders WHERE status = 'processing' AND overdue_at IS NOT NULL",
    { type: QueryTypes.SELECT, transaction: tx },
  );
  return row.n;
}

/** An order with what screening needs of its payer and destination. */
export interface OrderToScreen {
  id: string;
  status: string;
  failure_code: string | null;
  method: string;
  destination: Record<string, string>;
  user_id: string;
  email: string;
  phone: string | null;
  full_name: string;
  id_number: string | null;
  /** For a resubmission approved on appeal: the entry that matched the original order, which the approver cleared. */
  cleared_entry_id: string | null;
  /**
   * The blocklist's version as this read saw it (`blocklist_state`): a screener that holds it screens without
   * asking the list what changed (docs/compliance.md#screening).
   */
  blocklist_generation: string;
  blocklist_purges: string;
}

/** The order with its payer's identifiers (user and KYC record), for screening. */
export async function orderToScreen(orderId: string): Promise<OrderToScreen | undefined> {
  const [order] = await queryRows<OrderToScreen>(`SELECT ${SCREENED_COLUMNS} ${SCREENED_FROM} WHERE o.id = $1`, [orderId]);
  return order;
}

const SCREENED_COLUMNS = `o.id, o.status, o.failure_code, o.method, o.destination, u.id AS user_id, u.email, u.phone, u.full_name,
  k.id_number, (SELECT p.screening_entry_id FROM orders p WHERE p.id = o.resubmitted_from) AS cleared_entry_id,
  ${BLOCKLIST_VERSION_COLUMNS}`;
const SCREENED_FROM = `FROM orders o JOIN users u ON u.id = o.user_id LEFT JOIN kyc_records k ON k.user_id = o.user_id
  ${BLOCKLIST_VERSION_JOIN}`;
const MONITORED_COLUMNS = `o.kes_equivalent_minor::text, o.created_at,
  (SELECT CASE WHEN t.buyer_id = o.user_id THEN t.seller_id ELSE t.buyer_id END FROM p2p_trades t WHERE t.order_id = o.id)
    AS trade_partner`;

/**
 * The order as a payment's admission (`admitPayment`) reads it: for screening, monitoring, its hold's accounts and,
 * when the rail activity submits it once held (`admitAndSubmit`), its submission.
 */
export interface OrderToAdmit extends OrderToScreen, OrderToMonitor {
  method: PaymentMethod;
  currency: string;
  amount_minor: string;
  fee_minor: string;
  payout_batch_id: string | null;
  /** Set once a submission has recorded the rail's acceptance: only a submission writes it. */
  rail_reference: string | null;
  description: string | null;
  route: BankRoute | null;
}

/** The order as screening and monitoring both read it, with the accounts of its hold and its submission, in one round trip. */
export async function orderToAdmit(orderId: string): Promise<OrderToAdmit | undefined> {
  const [order] = await queryPrepared<OrderToAdmit>(
    `SELECT ${SCREENED_COLUMNS}, ${MONITORED_COLUMNS}, o.currency, o.amount_minor::text, o.fee_minor::text, o.payout_batch_id,
            o.rail_reference, o.description, o.route
       ${SCREENED_FROM} WHERE o.id = $1`,
    [orderId],
  );
  return order;
}

/** What a submission to the rail reads of its order (`submitToRail`). */
export type OrderToSubmit = Pick<
  OrderRecord,
  'id' | 'railReference' | 'method' | 'amountMinor' | 'currency' | 'destination' | 'description' | 'route'
>;

/** The submission's part of the order admission read. */
export const submissionOf = (order: OrderToAdmit): OrderToSubmit => ({
  id: order.id,
  railReference: order.rail_reference,
  method: order.method,
  amountMinor: order.amount_minor,
  currency: order.currency,
  destination: order.destination,
  description: order.description,
  route: order.route,
});

export interface OrderToMonitor {
  id: string;
  status: string;
  failure_code: string | null;
  method: string;
  destination: Record<string, string>;
  user_id: string;
  kes_equivalent_minor: string;
  created_at: Date;
  /** For a P2P trade: the other side of it. */
  trade_partner: string | null;
}

/** The order as transaction monitoring judges it (docs/monitoring.md#holds): its KES value, payee and time. */
export async function orderToMonitor(orderId: string): Promise<OrderToMonitor | undefined> {
  const [order] = await queryRows<OrderToMonitor>(
    `SELECT o.id, o.status, o.failure_code, o.method, o.destination, o.user_id, ${MONITORED_COLUMNS} FROM orders o WHERE o.id = $1`,
    [orderId],
  );
  return order;
}

/**
 * Record a rejected order's resubmission, approved on appeal: a new `pending` order with the same payment,
 * which names the order it resubmits and (for staff) the approver, and its first event.
 */
export async function createResubmission(
  order: NewOrder,
  resubmission: { from: string; approverId: string; detail: string },
  tx: Transaction,
): Promise<void> {
  await Order.create({ ...order, status: 'pending' }, { transaction: tx });
  await models().query(
    `UPDATE orders SET resubmitted_from = :from, approved_by = :approver WHERE id = :id;
     INSERT INTO order_events (order_id, status, detail) VALUES (:id, 'pending', :detail)`,
    {
      replacements: { id: order.id, from: resubmission.from, approver: resubmission.approverId, detail: resubmission.detail },
      transaction: tx,
    },
  );
}

// --- refunds (`refunds`): an order's refunds, made by approving appeals

/**
 * Record a refund of `amountMinor` against an order, inside `tx`: the order's running total rises by a
 * conditional UPDATE that never takes it past the amount paid (and a CHECK holds the same line), so refunds
 * racing on one order cannot add up to more. Returns the order's refunded total and amount after it, or
 * null when the refund would exceed what is left.
 */
export async function recordRefund(
  r: { id: string; orderId: string; appealId: string; amountMinor: string },
  tx: Transaction,
): Promise<{ refunded_minor: string; amount_minor: string } | null> {
  const [row] = await models().query<{ refunded_minor: string; amount_minor: string }>(
    `WITH raised AS (
       UPDATE orders SET refunded_minor = refunded_minor + :amountMinor, updated_at = now()
        WHERE id = :orderId AND refunded_minor + :amountMinor <= amount_minor
        RETURNING refunded_minor, amount_minor
     ), recorded AS (
       INSERT INTO refunds (id, order_id, appeal_id, amount_minor) SELECT :id, :orderId, :appealId, :amountMinor FROM raised
     )
     SELECT refunded_minor::text AS refunded_minor, amount_minor::text AS amount_minor FROM raised`,
    { replacements: r, type: QueryTypes.SELECT, transaction: tx },
  );
  return row ?? null;
}
