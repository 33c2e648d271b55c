import { ApplicationFailure } from '@temporalio/activity';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { uuidv7 } from '../../platform/ids';
import { Order } from '../../models';
import { postPayment, postedKinds } from '../../repositories/ledger';
import { ledgerAccountsOf } from '../../domain/orders';
import { transitionOrder } from '../../repositories/orders';
import { lockTrade } from '../../repositories/p2p';
import { paymentWorkflowId } from '../shared';
import type { AppealAction, AppealDecided, AppealResolution, AppealStatus } from '../../domain/appeals/contract';
import { postEscrow, releaseEscrow } from './p2p';

export interface AppealActivityDeps {
  sequelize: Sequelize;
}

const notApplicable = (message: string) => ApplicationFailure.nonRetryable(message, 'conflict');

/**
 * The appeal workflow's side effects, idempotent on the appeal id: each decision is one database
 * transaction that runs the resolution and records the decision, and only while the appeal is open.
 */
export function createAppealActivities({ sequelize }: AppealActivityDeps) {
  const lockAppeal = async (appealId: string, tx: Transaction) => {
    const [appeal] = await sequelize.query<{ id: string; order_id: string; status: AppealStatus; resolution: AppealResolution | null }>(
      'SELECT id, order_id, status, resolution FROM appeals WHERE id = :appealId FOR UPDATE',
      { replacements: { appealId }, type: QueryTypes.SELECT, transaction: tx },
    );
    if (!appeal) throw ApplicationFailure.nonRetryable(`appeal ${appealId} not found`, 'AppealNotFound');
    return appeal;
  };

  /** Run the approved action on the appealed order; the order's state follows. */
  const resolve = async (
    orderId: string,
    requested: AppealAction | undefined,
    approverId: string,
    tx: Transaction,
  ): Promise<AppealResolution> => {
    const order = await Order.findByPk(orderId, { transaction: tx, lock: tx.LOCK.UPDATE });
    if (!order) throw ApplicationFailure.nonRetryable(`order ${orderId} not found`, 'OrderNotFound');
    const trade = order.method === 'p2p' ? await lockTrade(sequelize, orderId, tx) : undefined;
    const action: AppealAction =
      requested ??
      (order.status === 'completed'
        ? 'refund'
        : trade?.escrow_state === 'locked'
          ? 'release'
          : order.status === 'rejected'
            ? 'resubmit'
            : 'refund');

    switch (action) {
      case 'refund': {
        if (order.status !== 'completed') throw notApplicable(`only a completed payment can be refunded; this one is ${order.status}`);
        await postPayment(tx, 'reverse', ledgerAccountsOf(order));
        if (trade?.escrow_state === 'released') await postEscrow(sequelize, tx, 'escrow_reverse', trade);
        await transitionOrder(order.id, { from: [order.status], to: 'reversed', note: 'refunded by an approved appeal' }, tx);
        return {
          action,
          summary: trade
            ? 'the fiat leg was refunded to the buyer and the asset returned to the seller'
            : 'the payment was refunded to the payer',
          order_status: 'reversed',
        };
      }
      case 'release': {
        if (!trade || trade.escrow_state !== 'locked') throw notApplicable('only a P2P trade whose asset is in escrow can be released');
        const posted = await postedKinds(orderId, tx);
        if (posted.includes('hold') && !posted.includes('settle')) await postPayment(tx, 'settle', ledgerAccountsOf(order));
        await releaseEscrow(sequelize, tx, trade);
        await transitionOrder(
          order.id,
          { from: [order.status], to: 'completed', note: 'escrow released to the buyer by an approved appeal' },
          tx,
        );
        return { action, summary: 'the escrowed asset was released to the buyer', order_status: 'completed' };
      }
      case 'resubmit': {
        if (order.status !== 'rejected' || order.method === 'p2p') {
          throw notApplicable('only a rejected (non-P2P) payment can be resubmitted');
        }
        const id = uuidv7();
        await Order.create(
          {
            id,
            userId: order.userId,
            idempotencyKey: `resubmission:${order.id}`,
            amountMinor: order.amountMinor,
            kesEquivalentMinor: order.kesEquivalentMinor,
            currency: order.currency,
            method: order.method,
            destination: order.destination,
            description: order.description,
            reference: order.reference,
            route: order.route,
            // Screened again like any new payment: the approver cleared the match that rejected the
            // original order, not whatever the blocklist has gained since (see screenPayment).
            status: 'pending',
            workflowId: paymentWorkflowId(id),
          },
          { transaction: tx },
        );
        await sequelize.query(
          `UPDATE orders SET resubmitted_from = :from, approved_by = :approver WHERE id = :id;
           INSERT INTO order_events (order_id, status, detail) VALUES (:id, 'pending', :detail)`,
          {
            // The approver is recorded on the order for staff; the customer's events never name them.
            replacements: { id, from: order.id, approver: approverId, detail: `resubmission of ${order.id}, approved on appeal` },
            transaction: tx,
          },
        );
        return { action, summary: `the payment was resubmitted as order ${id}`, order_status: order.status, resubmitted_order_id: id };
      }
    }
  };

  return {
    /** Approve or reject an open appeal; approval runs the resolution in the same transaction. */
    async decideAppeal({
      appealId,
      decision,
      deciderId,
      note,
      action,
    }: {
      appealId: string;
      decision: 'approved' | 'rejected';
      deciderId: string;
      note: string;
      action?: AppealAction;
    }): Promise<AppealDecided> {
      return sequelize.transaction(async (tx) => {
        const appeal = await lockAppeal(appealId, tx);
        if (appeal.status === decision) return { appealId, status: appeal.status, resolution: appeal.resolution };
        if (appeal.status !== 'open') throw notApplicable(`the appeal is ${appeal.status}`);
        const resolution =
          decision === 'approved'
            ? await resolve(appeal.order_id, action, deciderId, tx)
            : { action: null, summary: 'the appeal was rejected; the order is unchanged', order_status: '' };
        if (decision === 'rejected') {
          const [order] = await sequelize.query<{ status: string }>('SELECT status FROM orders WHERE id = :id', {
            replacements: { id: appeal.order_id },
            type: QueryTypes.SELECT,
            transaction: tx,
          });
          resolution.order_status = order?.status ?? '';
        }
        await sequelize.query(
          `UPDATE appeals SET status = :decision, decided_by = :deciderId, decided_at = now(), decision_note = :note,
                  resolution = :resolution, updated_at = now()
            WHERE id = :appealId`,
          { replacements: { decision, deciderId, note, resolution: JSON.stringify(resolution), appealId }, transaction: tx },
        );
        return { appealId, status: decision, resolution };
      });
    },

    /** The SLA ran out without a decision. */
    async expireAppeal({ appealId }: { appealId: string }): Promise<void> {
      await sequelize.query(`UPDATE appeals SET status = 'expired', updated_at = now() WHERE id = :appealId AND status = 'open'`, {
        replacements: { appealId },
      });
    },
  };
}

export type AppealActivities = ReturnType<typeof createAppealActivities>;
