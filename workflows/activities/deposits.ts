import { ApplicationFailure } from '@temporalio/activity';
import type { Connectors, RailStatus } from '../../connectors';
import type { Config } from '../../platform/config';
import { componentLogger } from '../../platform/logger';
import { formatAmount, type Currency } from '../../domain/money';
import { findDeposit, settlePendingDeposit, type DepositRow } from '../../repositories/deposits';
import { inTransaction } from '../../repositories/transaction';
import { creditWithinCap } from '../../services/money-in';
import { creditLateCollection } from '../../services/late-deposits';
import { heartbeating } from './heartbeat';
import { DEPOSIT_NOT_FOUND, RAIL_REJECTED } from '../failure-types';
import { askRail, collectAndRecord, railFailure } from './rail';

const log = componentLogger('deposit');

// ---------------------------------------------------------------------------------------------
// The `deposit` workflow's activities: an STK Push collection from the payer's phone

interface DepositRef {
  depositId: string;
}

async function pendingDeposit(depositId: string): Promise<DepositRow> {
  const deposit = await findDeposit(depositId);
  if (!deposit) throw ApplicationFailure.nonRetryable(`deposit ${depositId} not found`, DEPOSIT_NOT_FOUND);
  return deposit;
}

export function createDepositActivities({ connectors }: { connectors: Connectors; config: Config }) {
  return {
    /**
     * Ask the payer's phone to pay (STK Push), keyed on the deposit id: a retry after a crash is the same
     * request at the rail. Returns the rail's reference, recorded on the deposit.
     */
    async requestCollection({ depositId }: DepositRef): Promise<{ reference: string }> {
      const deposit = await pendingDeposit(depositId);
      if (deposit.rail_reference) return { reference: deposit.rail_reference };
      try {
        return await heartbeating(`collecting ${depositId}`, () =>
          collectAndRecord(connectors.collections, {
            idempotencyKey: deposit.id,
            orderId: deposit.id,
            method: 'mobile_money',
            amount: formatAmount(deposit.amount_minor, deposit.currency as Currency),
            currency: deposit.currency as Currency,
            destination: { provider: 'mpesa', phone: deposit.payer_phone ?? '' },
            description: 'Paygate deposit',
          }),
        );
      } catch (err) {
        throw railFailure(err);
      }
    },

    /** What the rail says of the collection now (the STK query when the callback is late). */
    async pollCollection({ depositId }: DepositRef): Promise<RailStatus> {
      const deposit = await pendingDeposit(depositId);
      const reference = deposit.rail_reference;
      if (!reference)
        throw ApplicationFailure.nonRetryable('the collection was never requested', RAIL_REJECTED, { failureCode: 'rail_error' });
      try {
        return await heartbeating(`polling ${depositId}`, () =>
          askRail(connectors.collections, reference, { currency: deposit.currency, since: new Date(deposit.created_at).getTime() }),
        );
      } catch (err) {
        throw railFailure(err);
      }
    },

    /** The payer paid: `rail:mobile_money → wallet`, and the deposit `completed`, once. */
    async creditDeposit({ depositId, reference }: DepositRef & { reference: string }): Promise<void> {
      await inTransaction(async (tx) => {
        const d = await settlePendingDeposit(depositId, { status: 'completed', providerReference: reference }, tx);
        if (!d) return;
        const posting = { channel: d.channel, userId: d.user_id, currency: d.currency as Currency, amountMinor: d.amount_minor };
        await creditWithinCap(tx, d, posting);
      });
      log.info({ depositId, reference }, 'deposit collected and credited');
    },

    /** A payment that arrived as the deposit was given up: credited as money in of its own, once. */
    async creditLatePayment({ depositId, reference }: DepositRef & { reference: string }): Promise<void> {
      const deposit = await pendingDeposit(depositId);
      await creditLateCollection(deposit, reference);
    },

    /** The payer did not pay (cancelled, wrong PIN, unreachable…) or the rail refused: `failed`, nothing moved. */
    async failDeposit({ depositId, failureCode, reason }: DepositRef & { failureCode: string; reason: string }): Promise<void> {
      await inTransaction((tx) => settlePendingDeposit(depositId, { status: 'failed', failureCode, reason }, tx));
      log.info({ depositId, failureCode }, 'deposit failed');
    },
  };
}

export type DepositActivities = ReturnType<typeof createDepositActivities>;
