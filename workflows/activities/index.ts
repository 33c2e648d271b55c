import { ApplicationFailure } from '@temporalio/activity';
import type { Config } from '../../platform/config';
import { notFound } from '../../platform/errors';
import { type Connectors, type RailStatus } from '../../connectors';
import { evaluateTierLimits, tierLimitsMinor, type LimitBreach } from '../../domain/limits';
import type { PaymentAccounts } from '../../domain/ledger';
import { formatAmount, type Currency } from '../../domain/money';
import { isTerminal, ledgerAccountsOf, NOT_TERMINAL } from '../../domain/orders';
import { InsufficientFunds, postPayment, postedKinds } from '../../repositories/ledger';
import {
  findOrder,
  limitsAndHold,
  limitUsage,
  lockOrder,
  markLimitsChecked,
  markOverdue,
  recordOutcomeUnknown,
  transitionOrder,
  type LimitsAndHold,
  type OrderRecord,
  type OrderToSubmit,
} from '../../repositories/orders';
import { inTransaction, type Tx } from '../../repositories/transaction';
import { lockKycStatus } from '../../repositories/users';
import { heartbeating } from './heartbeat';
import { askRail, submitAndRecord } from './rail';
import { INSUFFICIENT_FUNDS, ORDER_NOT_FOUND, RAIL_REJECTED, USER_NOT_FOUND } from '../failure-types';

export interface ActivityDeps {
  connectors: Connectors;
  config: Config;
}

interface OrderRef {
  orderId: string;
}

interface Failure {
  failureCode: string;
  reason: string;
}

/** What `limitAndHold` did: held (the order is `processing`), rejected on the KYC limits, or not held for want of funds. */
export type HoldOutcome =
  { outcome: 'held'; accounts: PaymentAccounts } | { outcome: 'rejected'; failureCode: string } | ({ outcome: 'unheld' } & Failure);

const insufficientFunds: Failure = { failureCode: 'insufficient_funds', reason: 'the wallet cannot cover this payment' };

const orderNotFound = (orderId: string) => ApplicationFailure.nonRetryable(notFound(`order ${orderId}`).message, ORDER_NOT_FOUND);

/** The order, locked for the rest of `tx`; an order that does not exist is a final failure. */
async function lockedOrder(orderId: string, tx: Tx): Promise<OrderRecord> {
  const order = await lockOrder(orderId, tx);
  if (!order) throw orderNotFound(orderId);
  return order;
}

/**
 * Give a payment's hold back to the payer (the workflow's compensation when the payment will not settle):
 * posted once, and only when a hold was posted and not settled. Runs in the caller's transaction.
 */
async function releaseHeldFunds(order: OrderRecord, tx: Tx): Promise<void> {
  const posted = await postedKinds(order.id, tx);
  if (posted.includes('hold') && !posted.includes('settle')) await postPayment(tx, 'release', ledgerAccountsOf(order));
}

/**
 * The payment workflow's side effects. Every activity is idempotent on the order id: running one twice
 * (a retry, a replay after a worker crash) has the effect of running it once. What to do when a payment
 * fails (release the hold, then fail the order) is the workflow's decision, not an activity's.
 */
export function createActivities({ connectors, config }: ActivityDeps) {
  const connectorFor = (order: Pick<OrderRecord, 'method'>) => {
    if (order.method === 'p2p')
      throw ApplicationFailure.nonRetryable('a trade settles between wallets: it has no rail', RAIL_REJECTED, {
        failureCode: 'method_unavailable',
      });
    return connectors[order.method];
  };

  const submittedOrder = async (orderId: string): Promise<OrderRecord> => {
    const order = await findOrder(orderId);
    if (!order) throw orderNotFound(orderId);
    return order;
  };

  /** The accounts of an order that is not yet final, undefined once it is. */
  const accountsToSettle = async (orderId: string): Promise<PaymentAccounts | undefined> => {
    const order = await submittedOrder(orderId);
    return isTerminal(order.status) ? undefined : ledgerAccountsOf(order);
  };

  return {
    /** KYC tier limits, checked under a per-user lock so concurrent payments cannot overrun the daily limit. */
    async checkLimits({ orderId }: OrderRef): Promise<LimitBreach | null> {
      return inTransaction(async (tx) => {
        const order = await lockedOrder(orderId, tx);
        if (order.limitsCheckedAt || isTerminal(order.status)) return null;
        const kycStatus = await lockKycStatus(order.userId, tx);
        if (!kycStatus) throw ApplicationFailure.nonRetryable(`user ${order.userId} not found`, USER_NOT_FOUND);
        const used = await limitUsage(order.userId, { excludeOrderId: order.id, tx });
        const breach = evaluateTierLimits(kycStatus, BigInt(order.kesEquivalentMinor), used, config.limits);
        if (!breach) await markLimitsChecked(order.id, tx);
        return breach;
      });
    },

    /**
     * The KYC limits and the hold in one statement (a payment's admission, `admitPayment`): under the order's
     * and the payer's locks, the tier limits are checked, then the amount is held and the order moves to
     * `processing`. A breach rejects the order; a wallet that cannot cover the hold leaves nothing behind and is
     * answered `unheld`, for the workflow to fail the order as it does after `holdFunds`. Run again, it answers
     * what the order shows. `accounts` are the order's, when the caller has read it (they never change).
     */
    async limitAndHold({ orderId }: OrderRef, read?: PaymentAccounts): Promise<HoldOutcome> {
      const accounts = read ?? ledgerAccountsOf(await submittedOrder(orderId));
      let done: LimitsAndHold;
      try {
        done = await limitsAndHold(orderId, tierLimitsMinor(config.limits), accounts);
      } catch (err) {
        if (!(err instanceof InsufficientFunds)) throw err;
        return { outcome: 'unheld', ...insufficientFunds };
      }
      switch (done.outcome) {
        case 'missing':
          throw orderNotFound(orderId);
        case 'rejected':
          return { outcome: 'rejected', failureCode: done.failureCode ?? 'rejected' };
        case 'failed':
          return { outcome: 'unheld', ...insufficientFunds };
        case 'held':
          return { outcome: 'held', accounts };
        case 'over_limits': {
          const breach = evaluateTierLimits(
            done.kycStatus,
            BigInt((await submittedOrder(orderId)).kesEquivalentMinor),
            done.usedKesMinor,
            config.limits,
          );
          if (!breach) throw new Error(`order ${orderId}: the database found it over the limits, the tier rules did not`);
          await transitionOrder(orderId, {
            from: ['pending', 'screening'],
            to: 'rejected',
            failureCode: breach.code,
            reason: breach.reason,
          });
          return { outcome: 'rejected', failureCode: breach.code };
        }
      }
    },

    async rejectOrder({ orderId, failureCode, reason }: OrderRef & Failure): Promise<void> {
      await inTransaction(async (tx) => {
        const order = await lockedOrder(orderId, tx);
        if (isTerminal(order.status)) return;
        await transitionOrder(order.id, { from: [order.status], to: 'rejected', failureCode, reason }, tx);
      });
    },

    /**
     * Reserve the amount from the payer's wallet (`wallet → hold:<order_id>`) and mark the order
     * `processing`. The database refuses a hold the wallet cannot cover, however many payments race for it:
     * that is a final `InsufficientFunds` failure, and nothing was held.
     */
    async holdFunds({ orderId }: OrderRef): Promise<void> {
      try {
        await inTransaction(async (tx) => {
          const order = await lockedOrder(orderId, tx);
          if (order.status !== 'pending' && order.status !== 'screening') return;
          await postPayment(tx, 'hold', ledgerAccountsOf(order));
          await transitionOrder(order.id, { from: [order.status], to: 'processing', note: 'funds held' }, tx);
        });
      } catch (err) {
        if (!(err instanceof InsufficientFunds)) throw err;
        throw ApplicationFailure.nonRetryable('the wallet cannot cover this payment', INSUFFICIENT_FUNDS, {
          failureCode: 'insufficient_funds',
        });
      }
    },

    /**
     * Hand the transfer to the rail; the order id is the provider-side idempotency key. `read` is the order as
     * the caller read it in the same attempt (admission, `admitAndSubmit`): what a submission reads of it never
     * changes once the order is recorded, but its rail reference, which only a submission records.
     */
    async submitToRail({ orderId }: OrderRef, read?: OrderToSubmit): Promise<{ reference: string }> {
      const order = read ?? (await submittedOrder(orderId));
      if (order.railReference) return { reference: order.railReference };
      const connector = connectorFor(order);
      return heartbeating(`submitting ${orderId}`, () =>
        submitAndRecord(connector, {
          idempotencyKey: order.id,
          orderId: order.id,
          method: order.method as Exclude<typeof order.method, 'p2p'>,
          amount: formatAmount(order.amountMinor, order.currency as Currency),
          currency: order.currency as Currency,
          destination: order.destination,
          description: order.description,
          ...(order.route ? { route: order.route } : {}),
        }),
      );
    },

    /**
     * Ask the rail what became of the order's transfer: by the rail's reference, or, when its answer to the
     * submission was lost, by the reference recorded before sending (ours).
     */
    async pollRail({ orderId }: OrderRef): Promise<RailStatus> {
      const order = await submittedOrder(orderId);
      const reference = order.railReference ?? order.railClientReference;
      if (!reference) throw ApplicationFailure.nonRetryable('order was never submitted', RAIL_REJECTED, { failureCode: 'rail_error' });
      const connector = connectorFor(order);
      const hint = { currency: order.currency, since: order.createdAt.getTime(), orderId };
      return heartbeating(`polling ${orderId}`, () =>
        askRail(connector, reference, order.railReference ? hint : { ...hint, referenceIsOurs: true }),
      );
    },

    /**
     * Whether a request for the order may have reached its rail: `unknown` when one left and no definite
     * answer came (the rail must be asked), `refused` when the rail definitely took none, `accepted`, or
     * `unsent` when none ever left.
     */
    async railSubmissionOf({ orderId }: OrderRef): Promise<'unsent' | 'refused' | 'unknown' | 'accepted'> {
      const order = await submittedOrder(orderId);
      if (order.railSubmission === 'sending') return 'unknown';
      return order.railSubmission ?? 'unsent';
    },

    /** The submission's outcome is unknown: the order keeps its hold and the rail is asked, recorded as an event once. */
    async noteOutcomeUnknown({ orderId, reason }: OrderRef & { reason: string }): Promise<void> {
      await inTransaction((tx) => recordOutcomeUnknown(orderId, reason, tx));
    },

    /**
     * The settle deadline passed without a definite answer from the rail: the money may still arrive, so
     * the order stays `processing` (its hold kept) and is flagged overdue with an `overdue` event, once.
     */
    async flagOverdue({ orderId, reason }: OrderRef & { reason: string }): Promise<void> {
      await inTransaction((tx) => markOverdue(orderId, reason, tx));
    },

    /**
     * Post the settlement and complete the order, once. `note` says why when it is not the rail's own answer
     * (operators' resolution); an empty `reference` keeps the one recorded.
     */
    async settlePayment({
      orderId,
      reference,
      note,
      accounts,
    }: OrderRef & { reference: string; note?: string; accounts?: PaymentAccounts }): Promise<void> {
      // The order's accounts never change once it is recorded: those its admission answered, else read.
      const posting = accounts ?? (await accountsToSettle(orderId));
      if (!posting) return;
      // The status change, its event and the settlement's posting in one statement, made only while the order
      // is not yet final: settled once, however often this runs.
      await transitionOrder(
        orderId,
        { from: NOT_TERMINAL, to: 'completed', railReference: reference || undefined, note: note ?? 'settled by the rail' },
        undefined,
        { kind: 'settle', accounts: posting },
      );
    },

    /** Compensation: give the hold back to the payer, once (nothing when none was posted or it settled). */
    async releaseHold({ orderId }: OrderRef): Promise<void> {
      await inTransaction(async (tx) => {
        const order = await lockedOrder(orderId, tx);
        if (isTerminal(order.status)) return;
        await releaseHeldFunds(order, tx);
      });
    },

    /** Fail the order, once; whatever it held has been given back by the workflow's compensation. */
    async failOrder({ orderId, failureCode, reason }: OrderRef & Failure): Promise<void> {
      await inTransaction(async (tx) => {
        const order = await lockedOrder(orderId, tx);
        if (isTerminal(order.status)) return;
        await transitionOrder(order.id, { from: [order.status], to: 'failed', failureCode, reason }, tx);
      });
    },
  };
}

export type PaymentActivities = ReturnType<typeof createActivities>;
