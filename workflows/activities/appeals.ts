import { ApplicationFailure } from '@temporalio/activity';
import type { Transaction } from 'sequelize';
import { uuidv7 } from '../../platform/ids';
import { refundPayer, postLines, postPayment, postedKinds } from '../../repositories/ledger';
import { EXPENSE_REFUNDS, FEE_REVENUE, payerWallet, transfer } from '../../domain/ledger';
import { CURRENCY_SCALE, decimalToScaled, formatAmount, toKesMinor, type Currency } from '../../domain/money';
import { config } from '../../platform/config';
import { ledgerAccountsOf } from '../../domain/orders';
import { createResubmission, lockOrder, recordRefund, statusOf, transitionOrder } from '../../repositories/orders';
import { expireOpenAppeal, lockAppeal as lockAppealRow, recordAppealDecision, recordFirstApproval } from '../../repositories/appeals';
import { inTransaction } from '../../repositories/transaction';
import { appendAuditEntry } from '../../repositories/audit';
import type { AuditActor } from '../../domain/audit';
import { lockTrade } from '../../repositories/p2p';
import { paymentWorkflowId } from '../shared';
import type { AppealAction, AppealDecided, AppealResolution, FirstApproval } from '../../domain/appeals/contract';
import { postEscrow, releaseEscrow, reverseWalletTrade } from './p2p';
import { APPEAL_NOT_FOUND, CONFLICT, FORBIDDEN, ORDER_NOT_FOUND } from '../failure-types';
import { monitorMovement } from '../../services/monitoring-holds';

/** Nothing yet: the appeal activities reach their tables through the repositories. */
export type AppealActivityDeps = Record<string, never>;

const notApplicable = (message: string) => ApplicationFailure.nonRetryable(message, CONFLICT);

/**
 * The appeal workflow's side effects, idempotent on the appeal id: each decision is one database
 * transaction that runs the resolution and records the decision, and only while the appeal is open.
 */
export function createAppealActivities(_deps: AppealActivityDeps = {}) {
  const lockAppeal = async (appealId: string, tx: Transaction) => {
    const appeal = await lockAppealRow(appealId, tx);
    if (!appeal) throw ApplicationFailure.nonRetryable(`appeal ${appealId} not found`, APPEAL_NOT_FOUND);
    return appeal;
  };

  /** The appealed order and (P2P) its trade, locked, and the action an approval takes: the one asked, or what fits the order. */
  const lockSubject = async (orderId: string, requested: AppealAction | undefined, tx: Transaction) => {
    const order = await lockOrder(orderId, tx);
    if (!order) throw ApplicationFailure.nonRetryable(`order ${orderId} not found`, ORDER_NOT_FOUND);
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
    return { order, trade, action };
  };

  /**
   * A refund at or above `FOUR_EYES_ABOVE_KES` (its KES equivalent at the reference rate) takes a second staff
   * member: the refund this approval would pay, or undefined when one approval is enough. A refund that does
   * not fit the order is refused here as it would be when paid.
   */
  const refundAwaitingSecond = async (
    orderId: string,
    requested: AppealAction | undefined,
    approverId: string,
    amountMinor: string | undefined,
    tx: Transaction,
  ): Promise<FirstApproval | undefined> => {
    const { order, trade, action } = await lockSubject(orderId, requested, tx);
    if (action !== 'refund' || order.status !== 'completed') return undefined;
    const currency = order.currency as Currency;
    const left = BigInt(order.amountMinor) - BigInt(order.refundedMinor);
    if (trade && amountMinor !== undefined) throw notApplicable('a P2P trade is reversed whole: leave out the amount');
    const amount = trade ? BigInt(order.amountMinor) : amountMinor === undefined ? left : BigInt(amountMinor);
    if (!trade && (amount <= 0n || amount > left)) {
      throw notApplicable(`only ${currency} ${formatAmount(left, currency)} of this payment is left to refund`);
    }
    const cfg = config();
    const kes = toKesMinor(amount, currency, cfg.limits.fxToKes);
    if (kes < decimalToScaled(cfg.fourEyes.aboveKes, CURRENCY_SCALE.KES)) return undefined;
    return { approverId, action, amountMinor: amount.toString(), currency, kesEquivalentMinor: kes.toString() };
  };

  /** Run the approved action on the appealed order; the order's state follows. */
  const resolve = async (
    appealId: string,
    orderId: string,
    requested: AppealAction | undefined,
    approverId: string,
    tx: Transaction,
    amountMinor?: string,
  ): Promise<AppealResolution> => {
    const { order, trade, action } = await lockSubject(orderId, requested, tx);

    switch (action) {
      case 'refund': {
        if (order.status !== 'completed') throw notApplicable(`only a completed payment can be refunded; this one is ${order.status}`);
        await refundMonitored(appealId, order, trade ? undefined : amountMinor);
        if (!trade) return refundPayment(appealId, order, amountMinor, tx);
        // A trade is reversed whole (a second approval names its whole amount).
        if (amountMinor !== undefined && amountMinor !== order.amountMinor) {
          throw notApplicable('a P2P trade is reversed whole: leave out the amount');
        }
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
            feeMinor: order.feeMinor,
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

  /**
   * A refund is evaluated by transaction monitoring before it is paid (docs/monitoring.md#holds), on each
   * approval that would pay it, the evaluation kept even when the approval is refused: `review` or `refuse`
   * refuses the approval (409, to staff, naming the evaluation); the appeal stays open, and an approval after
   * the rules changed is evaluated afresh. The customer sees an open appeal.
   */
  const refundMonitored = async (
    appealId: string,
    order: NonNullable<Awaited<ReturnType<typeof lockOrder>>>,
    amountMinor: string | undefined,
  ): Promise<void> => {
    const currency = order.currency as Currency;
    const amount = amountMinor === undefined ? BigInt(order.amountMinor) - BigInt(order.refundedMinor) : BigInt(amountMinor);
    if (amount <= 0n) return;
    const verdict = await monitorMovement(
      {
        kind: 'refund',
        id: appealId,
        customerId: order.userId,
        amountMinor: toKesMinor(amount, currency, config().limits.fxToKes),
        at: new Date(),
        counterparty: null,
      },
      undefined,
      { fresh: true },
    );
    if (verdict.decision !== 'pass') {
      throw notApplicable(
        `the refund is held by transaction monitoring (${verdict.decision}, evaluation ${verdict.evaluationId}: ${verdict.summary}); it was not paid`,
      );
    }
  };

  /**
   * Refund a completed payment, in full or in part: the payer's account (the one its hold debited) is
   * credited from `expense:refunds`, once per approving appeal: the operator pays it, the rail gives nothing
   * back, so the rail account keeps saying what the rail holds. The order's refunds never add up to more than
   * it paid (the database refuses it, even under a race); the refund that completes the amount reverses it.
   */
  const refundPayment = async (
    appealId: string,
    order: NonNullable<Awaited<ReturnType<typeof lockOrder>>>,
    amountMinor: string | undefined,
    tx: Transaction,
  ): Promise<AppealResolution> => {
    const currency = order.currency as Currency;
    const left = BigInt(order.amountMinor) - BigInt(order.refundedMinor);
    const amount = amountMinor === undefined ? left : BigInt(amountMinor);
    if (amount <= 0n || amount > left) {
      throw notApplicable(`only ${currency} ${formatAmount(left, currency)} of this payment is left to refund`);
    }
    const refundId = uuidv7();
    const recorded = await recordRefund({ id: refundId, orderId: order.id, appealId, amountMinor: amount.toString() }, tx);
    if (!recorded) throw notApplicable(`only ${currency} ${formatAmount(left, currency)} of this payment is left to refund`);
    const payer = (await refundPayer(order.id, payerWallet(order), tx)) ?? payerWallet(order);
    // The refund that completes the amount gives the fee back too, from fee revenue.
    const whole = recorded.refunded_minor === recorded.amount_minor;
    const fee = whole ? BigInt(order.feeMinor) : 0n;
    await postLines(tx, {
      orderId: order.id,
      refundId,
      kind: 'refund',
      currency,
      lines:
        fee > 0n
          ? [
              { account: EXPENSE_REFUNDS, direction: 'debit', amountMinor: amount.toString() },
              { account: FEE_REVENUE, direction: 'debit', amountMinor: fee.toString() },
              { account: payer, direction: 'credit', amountMinor: (amount + fee).toString() },
            ]
          : transfer(EXPENSE_REFUNDS, payer, amount.toString()),
    });
    if (whole) {
      await transitionOrder(order.id, { from: ['completed'], to: 'reversed', note: 'refunded by an approved appeal' }, tx);
    }
    return {
      action: 'refund',
      summary: whole
        ? fee > 0n
          ? 'the payment and its fee were refunded to the payer'
          : 'the payment was refunded to the payer'
        : `${currency} ${formatAmount(amount, currency)} of the payment was refunded to the payer`,
      order_status: whole ? 'reversed' : 'completed',
      refunded_minor: amount.toString(),
      total_refunded_minor: recorded.refunded_minor,
      ...(fee > 0n ? { fee_refunded_minor: fee.toString() } : {}),
    };
  };

  return {
    /**
     * Approve or reject an open appeal; approval runs the resolution in the same transaction. A first approval
     * of a refund at or above `FOUR_EYES_ABOVE_KES` only records itself (docs/appeals.md#four-eyes-on-large-refunds);
     * the second, by someone else (`firstApproverId` names the first), pays it.
     */
    async decideAppeal({
      appealId,
      decision,
      deciderId,
      note,
      action,
      amountMinor,
      actor,
      firstApproverId,
    }: {
      appealId: string;
      decision: 'approved' | 'rejected';
      deciderId: string;
      note: string;
      action?: AppealAction;
      amountMinor?: string;
      actor?: AuditActor;
      /** The second approval of a refund at or above `FOUR_EYES_ABOVE_KES`: who approved it first. */
      firstApproverId?: string;
    }): Promise<AppealDecided> {
      // A decision sent before the actor was passed along still names its decider.
      const auditActor: AuditActor = actor ?? {
        userId: deciderId,
        roles: [],
        credentialKind: 'login',
        credentialId: null,
        requestId: null,
      };
      return inTransaction(async (tx) => {
        const appeal = await lockAppeal(appealId, tx);
        if (appeal.status === decision) return { appealId, status: appeal.status, resolution: appeal.resolution };
        if (appeal.status !== 'open') throw notApplicable(`the appeal is ${appeal.status}`);
        if (decision === 'approved' && firstApproverId === undefined) {
          // A retry of a first approval already recorded answers what it recorded.
          if (appeal.first_approval) {
            if (appeal.first_approval.approverId !== deciderId) throw notApplicable('the refund already awaits a second approval');
            return { appealId, status: 'open', resolution: null, awaitingSecondApproval: appeal.first_approval };
          }
          const first = await refundAwaitingSecond(appeal.order_id, action, deciderId, amountMinor, tx);
          if (first) {
            await recordFirstApproval({ appealId, approval: first, note }, tx);
            await appendAuditEntry(
              auditActor,
              {
                action: 'appeal.first_approved',
                subjectType: 'appeal',
                subjectId: appealId,
                before: { status: appeal.status, order_id: appeal.order_id },
                after: { status: 'open', note, awaiting_second_approval: { ...first } },
              },
              tx,
            );
            return { appealId, status: 'open', resolution: null, awaitingSecondApproval: first };
          }
        }
        if (firstApproverId !== undefined) {
          if (appeal.first_approval?.approverId !== firstApproverId)
            throw notApplicable('no refund of this appeal awaits a second approval');
          if (deciderId === firstApproverId) {
            throw ApplicationFailure.nonRetryable('a refund is approved a second time by a different staff member', FORBIDDEN);
          }
        }
        // A second approval pays exactly the refund approved first.
        const approved = firstApproverId !== undefined && appeal.first_approval ? appeal.first_approval : undefined;
        const resolution =
          decision === 'approved'
            ? await resolve(appealId, appeal.order_id, approved?.action ?? action, deciderId, tx, approved?.amountMinor ?? amountMinor)
            : { action: null, summary: 'the appeal was rejected; the order is unchanged', order_status: '' };
        if (decision === 'rejected') {
          resolution.order_status = (await statusOf(appeal.order_id, tx)) ?? '';
        }
        await recordAppealDecision({ appealId, decision, deciderId, note, resolution }, tx);
        // The audit entry commits with the decision (docs/compliance.md#audit-trail).
        await appendAuditEntry(
          auditActor,
          {
            action: decision === 'approved' ? 'appeal.approved' : 'appeal.rejected',
            subjectType: 'appeal',
            subjectId: appealId,
            before: { status: appeal.status, order_id: appeal.order_id },
            after: { status: decision, note, resolution: { ...resolution } },
          },
          tx,
        );
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
