import { ApplicationFailure } from '@temporalio/activity';
import type { Transaction } from 'sequelize';
import { uuidv7 } from '../../platform/ids';
import { postPayment, postedKinds } from '../../repositories/ledger';
import { ledgerAccountsOf } from '../../domain/orders';
import { createResubmission, lockOrder, statusOf, transitionOrder } from '../../repositories/orders';
import { expireOpenAppeal, lockAppeal as lockAppealRow, recordAppealDecision } from '../../repositories/appeals';
import { inTransaction } from '../../repositories/transaction';
import { lockTrade } from '../../repositories/p2p';
import { paymentWorkflowId } from '../shared';
import type { AppealAction, AppealDecided, AppealResolution } from '../../domain/appeals/contract';
import { postEscrow, releaseEscrow, reverseWalletTrade } from './p2p';

/** Nothing yet: the appeal activities reach their tables through the repositories. */
export type AppealActivityDeps = Record<string, never>;

const notApplicable = (message: string) => ApplicationFailure.nonRetryable(message, 'conflict');

/**
 * The appeal workflow's side effects, idempotent on the appeal id: each decision is one database
 * transaction that runs the resolution and records the decision, and only while the appeal is open.
 */
export function createAppealActivities(_deps: AppealActivityDeps = {}) {
  const lockAppeal = async (appealId: string, tx: Transaction) => {
    const appeal = await lockAppealRow(appealId, tx);
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
    const order = await lockOrder(orderId, tx);
    if (!order) throw ApplicationFailure.nonRetryable(`order ${orderId} not found`, 'OrderNotFound');
    const trade = order.method === 'p2p' ? await lockTrade(orderId, tx) : undefined;
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
        // A trade settled between wallets is mirrored between the same wallets; older trades as before.
        const onWallets = trade ? await reverseWalletTrade(tx, trade, order.amountMinor) : false;
        if (!onWallets) {
          await postPayment(tx, 'reverse', ledgerAccountsOf(order));
          if (trade?.escrow_state === 'released') await postEscrow(tx, 'escrow_reverse', trade);
        }
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
        await releaseEscrow(tx, trade);
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
        await createResubmission(
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
            workflowId: paymentWorkflowId(id),
          },
          // Screened again like any new payment: the approver cleared the match that rejected the
          // original order, not whatever the blocklist has gained since (see screenPayment). The approver
          // is recorded on the order for staff; the customer's events never name them.
          { from: order.id, approverId, detail: `resubmission of ${order.id}, approved on appeal` },
          tx,
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
      return inTransaction(async (tx) => {
        const appeal = await lockAppeal(appealId, tx);
        if (appeal.status === decision) return { appealId, status: appeal.status, resolution: appeal.resolution };
        if (appeal.status !== 'open') throw notApplicable(`the appeal is ${appeal.status}`);
        const resolution =
          decision === 'approved'
            ? await resolve(appeal.order_id, action, deciderId, tx)
            : { action: null, summary: 'the appeal was rejected; the order is unchanged', order_status: '' };
        if (decision === 'rejected') {
          resolution.order_status = (await statusOf(appeal.order_id, tx)) ?? '';
        }
        await recordAppealDecision({ appealId, decision, deciderId, note, resolution }, tx);
        return { appealId, status: decision, resolution };
      });
    },

    /** The SLA ran out without a decision. */
    async expireAppeal({ appealId }: { appealId: string }): Promise<void> {
      await expireOpenAppeal(appealId);
    },
  };
}

export type AppealActivities = ReturnType<typeof createAppealActivities>;
