import { componentLogger } from '../platform/logger';
import type { Currency } from '../domain/money';
import type { StkResult } from '../connectors/daraja';
import type { DepositRow } from '../repositories/deposits';
import { recordClaim } from '../repositories/deposit-claims';
import { railConnectors } from './connectors';
import { recordMoneyIn } from './money-in';

/**
 * A payment that arrives after its STK Push deposit was given up (a late callback), or for a second prompt
 * of the same deposit, is credited or listed for staff, never dropped (docs/wallets.md#money-in-is-proven).
 */

const log = componentLogger('late-deposits');

/**
 * The rail says the payer paid the collection `reference` of a deposit that is no longer pending: credit
 * it to the deposit's owner as money in of its own, once per reference (the deposit credited with that
 * same reference is found, and nothing moves again).
 */
export async function creditLateCollection(deposit: DepositRow, reference: string): Promise<void> {
  if (deposit.user_id === null || (deposit.status === 'completed' && deposit.provider_reference === reference)) return;
  const { row, created } = await recordMoneyIn({
    channel: deposit.channel,
    rail: deposit.rail,
    providerReference: reference,
    currency: deposit.currency as Currency,
    amountMinor: BigInt(deposit.amount_minor),
    userId: deposit.user_id,
    payer: { phone: deposit.payer_phone, name: deposit.payer_name },
  });
  if (created) {
    log.warn(
      { depositId: deposit.id, depositStatus: deposit.status, creditedAs: row.id, reference },
      'a payment arrived after its deposit was given up (or for a second prompt): credited as a deposit of its own',
    );
  }
}

/**
 * An STK callback with the deposit's token that says the payer paid, for a request Paygate did not record
 * (a second prompt) or one already settled another way. The rail is asked (the STK query) about it: paid,
 * it is credited; otherwise it is kept for staff as an `unconfirmed` claim.
 */
export async function listUnknownCollection(deposit: DepositRow, stk: StkResult): Promise<void> {
  let paid = false;
  try {
    const status = await railConnectors().collections.status(stk.checkoutRequestId, {
      request: {
        kind: 'stk',
        providerReference: stk.checkoutRequestId,
        merchantReference: stk.merchantRequestId,
        orderId: deposit.id,
        status: 'pending',
        resultCode: null,
        resultDesc: null,
      },
    });
    paid = status.state === 'succeeded';
  } catch (err) {
    log.warn({ depositId: deposit.id, err: (err as Error).message }, 'the STK query about an unknown payment failed');
  }
  if (paid) return creditLateCollection(deposit, stk.checkoutRequestId);
  const { row, created } = await recordClaim({
    channel: 'mpesa_stk',
    status: 'unconfirmed',
    reason: 'an STK payment for a request Paygate has no pending record of, not confirmed by the STK query',
    providerReference: stk.checkoutRequestId,
    amountMinor: deposit.amount_minor,
    accountReference: deposit.id,
    payerPhone: deposit.payer_phone,
    payerName: null,
    sourceAddress: null,
    body: { receipt: stk.receipt, resultCode: stk.resultCode, merchantRequestId: stk.merchantRequestId },
  });
  if (created) log.error({ depositId: deposit.id, claimId: row.id }, 'an STK payment Paygate cannot prove: kept for staff');
}
