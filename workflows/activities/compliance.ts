import { ApplicationFailure } from '@temporalio/activity';
import { ORDER_NOT_FOUND, REVIEW_NOT_FOUND } from '../failure-types';
import type { Config } from '../../platform/config';
import { heartbeating } from './heartbeat';
import { shapeSection } from '../../domain/compliance/report';
import type { ComplianceReportInput, ReportSection } from '../../domain/compliance/report-contract';
import type { Screener, ScreeningItem } from '../../domain/compliance/screening';
import { screener as sharedScreener } from '../../services/screening';
import {
  blocklistVersionOf,
  expireReviewOfOrder,
  recordMonitoringReview,
  recordScreeningHit,
  reviewOfOrder,
  screenRemembering,
} from '../../repositories/compliance';
import { beginReport, completeReport, readReportSection, saveReportSection } from '../../repositories/compliance-reports';
import { orderToMonitor, orderToScreen, transitionOrder, type OrderToMonitor, type OrderToScreen } from '../../repositories/orders';
import { monitorMovement } from '../../services/monitoring-holds';
import { inTransaction } from '../../repositories/transaction';

export interface ComplianceActivityDeps {
  config: Config;
  /** Defaults to the process's one screener (`services/screening.ts`). */
  screener?: Screener;
}

interface OrderRef {
  orderId: string;
}

/** What the payer is told: screening details are for compliance staff only (no tipping off). */
export const BLOCKED_REASON = 'the payment was stopped by compliance screening';
/** The payer's reason when staff did not decide the review in time: no more said than for a block. */
export const REVIEW_EXPIRED_REASON = 'the payment was held for a compliance check that was not completed in time';

/** What screening decided: blocked, clear, or held for a review staff decide within `reviewSlaMs`. */
export type PaymentScreening = { blocked: true } | { blocked: false; review?: { hitId: string; reviewSlaMs: number } };
const HEARTBEAT_EVERY_MS = 5_000;

/**
 * What transaction monitoring decided for an order (docs/monitoring.md#holds): refused (the order is
 * `rejected` as a screening block rejects it), held for a review staff decide within `reviewSlaMs`, or clear.
 */
export type OrderMonitoring = { refused: true } | { refused: false; review?: { hitId: string; reviewSlaMs: number } };

/** Who and where a payment goes: the payer's identifiers, the destination's, and the rail's country. */
function paymentScreeningItems(order: OrderToScreen): ScreeningItem[] {
  const d = order.destination;
  const items: ScreeningItem[] = [
    { field: 'user.email', type: 'email', value: order.email },
    { field: 'user.phone', type: 'phone', value: order.phone },
    { field: 'user.full_name', type: 'name', value: order.full_name },
    { field: 'user.id_number', type: 'national_id', value: order.id_number },
  ];
  switch (order.method) {
    case 'mobile_money':
      items.push(
        { field: 'destination.phone', type: 'phone', value: d.phone },
        { field: 'destination.country', type: 'country', value: 'KE' },
      );
      break;
    case 'bank_transfer':
      items.push(
        { field: 'destination.account_number', type: 'bank_account', value: d.account_number },
        { field: 'destination.account_name', type: 'name', value: d.account_name },
        { field: 'destination.country', type: 'country', value: 'KE' },
      );
      break;
    case 'crypto':
      items.push({ field: 'destination.address', type: 'crypto_address', value: d.address });
      break;
    case 'p2p':
      items.push({ field: 'destination.country', type: 'country', value: 'KE' });
      break;
  }
  return items;
}

/**
 * Compliance side effects: payment screening (the payment workflow's first step) and the compliance
 * report's steps. Idempotent: on the order id, and on the report id (the workflow run id).
 */
export function createComplianceActivities({ config, screener }: ComplianceActivityDeps) {
  const screening = screener ?? sharedScreener();
  const reviewSlaMs = config.compliance.screening.reviewSlaMs;

  return {
    /**
     * Screen the payer and the destination against the blocklist. Clear: the order moves to `screening`.
     * A hit: the order is `rejected` with `blocked_by_compliance`, recording the entry and score.
     */
    async screenPayment({ orderId }: OrderRef, read?: OrderToScreen): Promise<PaymentScreening> {
      const order = read ?? (await orderToScreen(orderId));
      if (!order) throw ApplicationFailure.nonRetryable(`order ${orderId} not found`, ORDER_NOT_FOUND);
      if (order.status === 'rejected' && order.failure_code === 'blocked_by_compliance') return { blocked: true };
      if (order.status !== 'pending') {
        // A retry after the review was recorded: the payment is still held for it.
        const review = await reviewOfOrder(orderId);
        return review?.status === 'needs_review' ? { blocked: false, review: { hitId: review.id, reviewSlaMs } } : { blocked: false };
      }

      // A resubmission approved on appeal is screened in full again; only the one entry the approver
      // cleared (the match that rejected the original order) is excused, never one listed since.
      const [best] = (await screenRemembering(screening, paymentScreeningItems(order), order.user_id, blocklistVersionOf(order))).filter(
        (m) => m.entryId !== order.cleared_entry_id,
      );
      if (!best) {
        // One statement (the status and its event): no transaction around it.
        await transitionOrder(orderId, { from: ['pending'], to: 'screening', note: 'screened against the blocklist: no match' });
        return { blocked: false };
      }
      if (best.verdict === 'review') {
        // Held: the order waits in `screening` with the review recorded, together or not at all.
        const hitId = await inTransaction(async (tx) => {
          await transitionOrder(
            orderId,
            {
              from: ['pending'],
              to: 'screening',
              note: `screened against the blocklist: held for compliance review (${best.reviewReason})`,
            },
            tx,
          );
          return recordScreeningHit({ context: 'payment', match: best, userId: order.user_id, orderId }, tx);
        });
        return { blocked: false, review: { hitId, reviewSlaMs } };
      }
      // The order is rejected, its two events written and the hit recorded, together or not at all.
      await inTransaction(async (tx) => {
        await transitionOrder(orderId, { from: ['pending'], to: 'screening', note: 'screened against the blocklist: match' }, tx);
        const rejected = await transitionOrder(
          orderId,
          {
            from: ['pending', 'screening'],
            to: 'rejected',
            failureCode: 'blocked_by_compliance',
            reason: BLOCKED_REASON,
            screening: { entryId: best.entryId, score: best.score.toFixed(4) },
          },
          tx,
        );
        if (rejected) await recordScreeningHit({ context: 'payment', match: best, userId: order.user_id, orderId }, tx);
      });
      return { blocked: true };
    },

    /**
     * Evaluate the order against the monitoring rules once screening let it through, before anything is
     * held or moved: `refuse` rejects it with `blocked_by_compliance` and the same reason as a screening
     * block (nothing tells the payer which check it was); `review` holds it for staff in the screening review
     * queue, the evaluation's numbers shown to them. Idempotent on the order: a retry keeps the evaluation
     * and the review it made.
     */
    async monitorOrder({ orderId }: OrderRef, read?: OrderToMonitor): Promise<OrderMonitoring> {
      const order = read ?? (await orderToMonitor(orderId));
      if (!order) throw ApplicationFailure.nonRetryable(`order ${orderId} not found`, ORDER_NOT_FOUND);
      if (order.status === 'rejected' && order.failure_code === 'blocked_by_compliance') return { refused: true };
      const trade = order.method === 'p2p';
      const verdict = await monitorMovement({
        kind: trade ? 'p2p_trade' : 'payout',
        id: orderId,
        customerId: order.user_id,
        amountMinor: BigInt(order.kes_equivalent_minor),
        at: new Date(order.created_at),
        counterparty: trade ? order.trade_partner : JSON.stringify(order.destination),
      });
      if (verdict.decision === 'pass') return { refused: false };
      if (verdict.decision === 'review') {
        const hitId = await recordMonitoringReview({
          context: 'payment',
          evaluationId: verdict.evaluationId,
          summary: verdict.summary,
          userId: order.user_id,
          orderId,
        });
        return { refused: false, review: { hitId, reviewSlaMs } };
      }
      await transitionOrder(orderId, {
        from: ['screening'],
        to: 'rejected',
        failureCode: 'blocked_by_compliance',
        reason: BLOCKED_REASON,
        note: 'compliance check: refused',
      });
      return { refused: true };
    },

    /**
     * The outcome of the review a payment is held for, once its decision arrived or its SLA ran out: a
     * decision recorded meanwhile wins over the timer; an undecided review expires. `confirmed` and
     * `expired` reject the order (`blocked_by_compliance`), `cleared` lets the payment go on.
     */
    async concludeReview({ orderId }: OrderRef): Promise<{ status: 'confirmed' | 'cleared' | 'expired' }> {
      const status = await expireReviewOfOrder(orderId);
      if (status !== 'confirmed' && status !== 'cleared' && status !== 'expired') {
        throw ApplicationFailure.nonRetryable(`order ${orderId} has no screening review`, REVIEW_NOT_FOUND);
      }
      if (status !== 'cleared') {
        await transitionOrder(orderId, {
          from: ['screening'],
          to: 'rejected',
          failureCode: 'blocked_by_compliance',
          reason: status === 'confirmed' ? BLOCKED_REASON : REVIEW_EXPIRED_REASON,
          note: status === 'confirmed' ? 'compliance review: match confirmed' : 'compliance review: not decided within its SLA',
        });
      }
      return { status };
    },

    /** Record the report's header; its sections follow, each keyed on (report id, section). */
    async beginReport({
      reportId,
      workflowId,
      input,
      generatedAt,
    }: {
      reportId: string;
      workflowId: string;
      input: ComplianceReportInput;
      generatedAt: string;
    }): Promise<void> {
      await beginReport({
        reportId,
        workflowId,
        from: input.from,
        to: input.to,
        generatedAt,
        parameters: { ctr_threshold_usd: input.ctrThresholdUsd, usd_rate_kes: input.usdRateKes, max_rows: input.maxRows },
      });
    },

    /** Aggregate one section in SQL and store it; heartbeats while the statements run. */
    async buildReportSection({
      reportId,
      section,
      input,
    }: {
      reportId: string;
      section: ReportSection;
      input: ComplianceReportInput;
    }): Promise<{ section: ReportSection }> {
      const rows = await heartbeating(section, () => readReportSection(section, input), HEARTBEAT_EVERY_MS);
      const body = shapeSection(section, rows, input);
      await saveReportSection(reportId, section, body);
      return { section };
    },

    async completeReport({ reportId }: { reportId: string }): Promise<void> {
      await completeReport(reportId);
    },
  };
}

export type ComplianceActivities = ReturnType<typeof createComplianceActivities>;
