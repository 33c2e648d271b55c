import { ApplicationFailure } from '@temporalio/activity';
import { componentLogger } from '../../platform/logger';
import { orderToAdmit, submissionOf, type OrderToAdmit } from '../../repositories/orders';
import { ORDER_NOT_FOUND } from '../failure-types';
import type { PaymentActivities } from './index';
import type { ComplianceActivities } from './compliance';
import type { PaymentAccounts } from '../../domain/ledger';
import { ledgerAccountsOf } from '../../domain/orders';

const log = componentLogger('admission');

interface OrderRef {
  orderId: string;
}

/**
 * What a payment's admission decided, in one local activity (docs/payments.md#admission):
 * - `held`: screened clear, passed by monitoring, within the KYC limits, and the amount held: the order is
 *   `processing`, ready for the rail; with the order's ledger accounts, which never change, for its settlement;
 * - `rejected`: refused by screening, monitoring or the limits, with the order already `rejected`;
 * - `unheld`: the wallet cannot cover the hold; nothing was held, and the workflow fails the order;
 * - `screening_review`: screening holds the order for review: the workflow takes the steps one by one from
 *   the start, and screening's finds the review this one recorded (every step is idempotent on the order id);
 * - `monitoring_review`: screened clear, then held by monitoring for review: the workflow waits for it, then
 *   takes the limits and the hold one by one.
 */
export type Admission =
  | { admitted: 'held'; accounts: PaymentAccounts }
  | { admitted: 'rejected'; failureCode: string }
  | { admitted: 'unheld'; failureCode: string; reason: string }
  | { admitted: 'screening_review' }
  | { admitted: 'monitoring_review'; reviewSlaMs: number };

/**
 * What the rail activity that admits a payment answers (docs/payments.md#admission): `submitted` where admission
 * would have answered `held` (the order was held, then its transfer submitted to the rail); admission's other
 * answers as they are, nothing submitted; `by_steps` when admission itself failed (the database unreachable, a
 * statement refused): nothing was submitted, and the workflow takes admission one step at a time, each local
 * activity with its own retries, as when a review holds the order.
 */
export type AdmissionAndSubmission =
  { admitted: 'submitted'; accounts: PaymentAccounts } | Exclude<Admission, { admitted: 'held' }> | { admitted: 'by_steps' };

/**
 * A payment's way in, as one local activity where the workflow would otherwise run four (screening,
 * monitoring, the limits, the hold): each step is the same code as its own activity, in the same order, so
 * what one decides and records is the same; only the workflow activations between them are saved. Every step
 * is idempotent on the order id, so this one is as well.
 */
export function createAdmissionActivities(payments: PaymentActivities, compliance: ComplianceActivities) {
  const activities = {
    /**
     * Admission, then, once the order is held, its submission to the rail: one activity on the task queue
     * where a local activity and an activity were, so one workflow activation and one activity dispatch fewer
     * per payment. It runs as the rail call it ends with (`RAIL_CALL`: heartbeats, retries); a retry admits
     * again, which changes nothing (every step is idempotent on the order id) and answers `held`, then
     * resubmits as `submitToRail` does. A failure of the submission is the activity's failure, as
     * `submitToRail`'s would be; a failure of admission is answered as `by_steps`.
     */
    async admitAndSubmit({ orderId }: OrderRef): Promise<AdmissionAndSubmission> {
      let admitted: { admission: Admission; order: OrderToAdmit };
      try {
        admitted = await admission(orderId);
      } catch (err) {
        log.warn(
          { orderId, err: err instanceof Error ? err.message : String(err) },
          'admission failed in the rail activity; the workflow takes it one step at a time',
        );
        return { admitted: 'by_steps' };
      }
      if (admitted.admission.admitted !== 'held') return admitted.admission;
      // Submitted on admission's read of this attempt: only a submission changes what it reads (the rail reference).
      await payments.submitToRail({ orderId }, submissionOf(admitted.order));
      return { admitted: 'submitted', accounts: admitted.admission.accounts };
    },

    async admitPayment({ orderId }: OrderRef): Promise<Admission> {
      return (await admission(orderId)).admission;
    },
  };

  /** Admission, with the order as it read it (the submission that may follow reads it there). */
  async function admission(orderId: string): Promise<{ admission: Admission; order: OrderToAdmit }> {
    // Read once for all. Monitoring reads no more of the status than whether screening had refused the order,
    // which ends admission before it.
    const order = await orderToAdmit(orderId);
    if (!order) throw ApplicationFailure.nonRetryable(`order ${orderId} not found`, ORDER_NOT_FOUND);
    const admitted = (admission: Admission) => ({ admission, order });
    const screening = await compliance.screenPayment({ orderId }, order);
    if (screening.blocked) return admitted({ admitted: 'rejected', failureCode: 'blocked_by_compliance' });
    if (screening.review) return admitted({ admitted: 'screening_review' });
    const monitoring = await compliance.monitorOrder({ orderId }, order);
    if (monitoring.refused) return admitted({ admitted: 'rejected', failureCode: 'blocked_by_compliance' });
    if (monitoring.review) return admitted({ admitted: 'monitoring_review', reviewSlaMs: monitoring.review.reviewSlaMs });
    const accounts = ledgerAccountsOf({
      id: order.id,
      userId: order.user_id,
      method: order.method,
      currency: order.currency,
      amountMinor: order.amount_minor,
      feeMinor: order.fee_minor,
      payoutBatchId: order.payout_batch_id,
    });
    const hold = await payments.limitAndHold({ orderId }, accounts);
    switch (hold.outcome) {
      case 'held':
        return admitted({ admitted: 'held', accounts: hold.accounts });
      case 'rejected':
        return admitted({ admitted: 'rejected', failureCode: hold.failureCode });
      case 'unheld':
        return admitted({ admitted: 'unheld', failureCode: hold.failureCode, reason: hold.reason });
    }
  }

  return activities;
}

export type AdmissionActivities = ReturnType<typeof createAdmissionActivities>;
