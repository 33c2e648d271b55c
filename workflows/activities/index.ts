import { ApplicationFailure } from '@temporalio/activity';
import { Op, type Attributes, type FindOptions, type Sequelize } from 'sequelize';
import type { Config } from '../../platform/config';
import { notFound } from '../../platform/errors';
import { Order, User } from '../../models';
import { type Connectors, type RailStatus } from '../../domain/connectors';
import { postPayment, postedKinds } from '../../domain/ledger';
import { evaluateTierLimits, type LimitBreach } from '../../domain/limits';
import { heartbeating } from './heartbeat';
import { submitAndRecord } from './rail';
import { formatAmount, type Currency } from '../../domain/money';
import { isTerminal, ledgerAccountsOf, recordOrderEvent, transitionOrder } from '../../domain/orders';

export interface ActivityDeps {
  sequelize: Sequelize;
  connectors: Connectors;
  config: Config;
}

interface OrderRef {
  orderId: string;
}

/**
 * The payment workflow's side effects. Every activity is idempotent on the order id: running one twice
 * (a retry, a replay after a worker crash) has the effect of running it once.
 */
export function createActivities({ sequelize, connectors, config }: ActivityDeps) {
  const lockOrder = async (orderId: string, options: Omit<FindOptions<Attributes<Order>>, 'where'>) => {
    const order = await Order.findByPk(orderId, options);
    if (!order) throw ApplicationFailure.nonRetryable(notFound(`order ${orderId}`).message, 'OrderNotFound');
    return order;
  };

  const connectorFor = (order: Order) => {
    if (order.method === 'p2p')
      throw ApplicationFailure.nonRetryable('p2p trades have no rail yet', 'RailRejected', { failureCode: 'method_unavailable' });
    return connectors[order.method];
  };

  return {
    /** KYC tier limits, checked under a per-user lock so concurrent payments cannot overrun the daily limit. */
    async checkLimits({ orderId }: OrderRef): Promise<LimitBreach | null> {
      return sequelize.transaction(async (transaction) => {
        const order = await lockOrder(orderId, { transaction, lock: transaction.LOCK.UPDATE });
        if (!order.workflowStartedAt) {
          order.workflowStartedAt = new Date();
          await order.save({ transaction });
        }
        if (order.limitsCheckedAt) return null;
        if (isTerminal(order.status)) return null;
        const user = await User.findByPk(order.userId, { transaction, lock: transaction.LOCK.UPDATE });
        if (!user) throw ApplicationFailure.nonRetryable(`user ${order.userId} not found`, 'UserNotFound');
        const used = await Order.sum('kesEquivalentMinor', {
          where: {
            userId: order.userId,
            id: { [Op.ne]: order.id },
            limitsCheckedAt: { [Op.ne]: null },
            status: { [Op.notIn]: ['rejected', 'failed'] },
            createdAt: { [Op.gt]: new Date(Date.now() - 24 * 3600 * 1000) },
          },
          transaction,
        });
        const breach = evaluateTierLimits(user.kycStatus, BigInt(order.kesEquivalentMinor), BigInt(used ?? 0), config.limits);
        if (!breach) {
          order.limitsCheckedAt = new Date();
          await order.save({ transaction });
        }
        return breach;
      });
    },

    async rejectOrder({ orderId, failureCode, reason }: OrderRef & { failureCode: string; reason: string }): Promise<void> {
      await sequelize.transaction(async (transaction) => {
        const order = await lockOrder(orderId, { transaction, lock: transaction.LOCK.UPDATE });
        if (isTerminal(order.status)) return;
        await transitionOrder(order, 'rejected', transaction, { failureCode, reason });
      });
    },

    /** Reserve the amount in the ledger and mark the order `processing`. */
    async holdFunds({ orderId }: OrderRef): Promise<void> {
      await sequelize.transaction(async (transaction) => {
        const order = await lockOrder(orderId, { transaction, lock: transaction.LOCK.UPDATE });
        if (order.status !== 'pending' && order.status !== 'screening') return;
        await postPayment(sequelize, transaction, 'hold', ledgerAccountsOf(order));
        await transitionOrder(order, 'processing', transaction, { note: 'funds held' });
      });
    },

    /** Hand the transfer to the rail; the order id is the provider-side idempotency key. */
    async submitToRail({ orderId }: OrderRef): Promise<{ reference: string }> {
      const order = await lockOrder(orderId, {});
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
          callbackUrl: `${config.http.publicBaseUrl}/api/v1/callbacks/sandbox`,
        }),
      );
    },

    async pollRail({ orderId }: OrderRef): Promise<RailStatus> {
      const order = await lockOrder(orderId, {});
      if (!order.railReference)
        throw ApplicationFailure.nonRetryable('order was never submitted', 'RailRejected', { failureCode: 'rail_error' });
      const reference = order.railReference;
      const connector = connectorFor(order);
      return heartbeating(`polling ${orderId}`, () =>
        connector.status(reference, { currency: order.currency, since: order.createdAt.getTime() }),
      );
    },

    /**
     * The settle deadline passed without a definite answer from the rail: the money may still arrive, so
     * the order stays `processing` (its hold kept) and is flagged overdue with an `overdue` event, once.
     */
    async flagOverdue({ orderId, reason }: OrderRef & { reason: string }): Promise<void> {
      await sequelize.transaction(async (transaction) => {
        const order = await lockOrder(orderId, { transaction, lock: transaction.LOCK.UPDATE });
        if (order.status !== 'processing' || order.overdueAt) return;
        order.overdueAt = new Date();
        await order.save({ transaction });
        await recordOrderEvent(order.id, 'overdue', reason, transaction);
      });
    },

    /** Post the settlement and complete the order, once. */
    async settlePayment({ orderId, reference }: OrderRef & { reference: string }): Promise<void> {
      await sequelize.transaction(async (transaction) => {
        const order = await lockOrder(orderId, { transaction, lock: transaction.LOCK.UPDATE });
        if (isTerminal(order.status)) return;
        await postPayment(sequelize, transaction, 'settle', ledgerAccountsOf(order));
        await transitionOrder(order, 'completed', transaction, { railReference: reference, note: 'settled by the rail' });
      });
    },

    /** Compensate (release the hold if one was posted and not settled) and fail the order, once. */
    async failPayment({ orderId, failureCode, reason }: OrderRef & { failureCode: string; reason: string }): Promise<void> {
      await sequelize.transaction(async (transaction) => {
        const order = await lockOrder(orderId, { transaction, lock: transaction.LOCK.UPDATE });
        if (isTerminal(order.status)) return;
        const posted = await postedKinds(sequelize, orderId, transaction);
        if (posted.includes('hold') && !posted.includes('settle')) {
          await postPayment(sequelize, transaction, 'release', ledgerAccountsOf(order));
        }
        await transitionOrder(order, 'failed', transaction, { failureCode, reason });
      });
    },

    hello(name: string): Promise<string> {
      return Promise.resolve(`hello, ${name}`);
    },
  };
}

export type PaymentActivities = ReturnType<typeof createActivities>;
