import { componentLogger } from '../platform/logger';
import { transfer } from '../domain/ledger';
import { ledgerAccountsOf } from '../domain/orders';
import { OPERATOR_FLOAT } from '../domain/wallets';
import { formatAmount } from '../domain/money';
import { bankPayoutByRailReference, recordClaim } from '../repositories/deposit-claims';
import { recordDeposit } from '../repositories/deposits';
import { postLines, postPayment } from '../repositories/ledger';
import { lockOrder, transitionOrder } from '../repositories/orders';
import { inTransaction } from '../repositories/transaction';

/**
 * Bank-statement credits that are not a customer's deposit (docs/wallets.md#money-in-is-proven): the return
 * of one of our own payouts, matched to that payout, and the operator's own top-up, posted to
 * `operator:float`. Each is recorded once per bank reference, like a deposit.
 */

const log = componentLogger('statement-credits');

export interface StatementCredit {
  rail: string;
  reference: string;
  amountMinor: bigint;
  description: string;
}

/**
 * Match a credit to the bank-transfer payout it returns, once per bank reference. A payout still
 * `completed` that comes back whole is reversed (its payer refunded, `rail → wallet`, as an approved
 * appeal's refund); any other (a different amount, an order not completed) is recorded against the payout
 * and left for staff. Returns false when the line names none of our payouts.
 */
export async function matchPayoutReturn(credit: StatementCredit, candidates: string[]): Promise<boolean> {
  let payout: { id: string } | undefined;
  for (const reference of candidates) {
    payout ??= await bankPayoutByRailReference(reference);
  }
  if (!payout) return false;
  const orderId = payout.id;
  const outcome = await inTransaction(async (tx) => {
    const order = await lockOrder(orderId, tx);
    if (!order) return 'gone';
    const whole = order.status === 'completed' && BigInt(order.amountMinor) === credit.amountMinor;
    const { created } = await recordClaim(
      {
        channel: 'bank_transfer',
        status: whole ? 'returned' : 'unconfirmed',
        reason: whole
          ? 'the payout came back: the order is reversed and its payer refunded'
          : `a return of payout ${orderId} (${order.status}, ${formatAmount(order.amountMinor, 'KES')}) of ${formatAmount(credit.amountMinor.toString(), 'KES')}: for staff`,
        providerReference: credit.reference,
        amountMinor: credit.amountMinor.toString(),
        accountReference: orderId,
        payerPhone: null,
        payerName: null,
        sourceAddress: null,
        body: { description: credit.description, rail: credit.rail },
        orderId,
      },
      tx,
    );
    if (!created) return 'seen';
    if (!whole) return 'listed';
    await postPayment(tx, 'reverse', ledgerAccountsOf(order));
    await transitionOrder(orderId, { from: ['completed'], to: 'reversed', note: `returned by the bank (${credit.reference})` }, tx);
    return 'reversed';
  });
  if (outcome === 'reversed')
    log.warn({ orderId, bankReference: credit.reference }, 'a payout came back to the bank: the order is reversed');
  if (outcome === 'listed')
    log.error({ orderId, bankReference: credit.reference }, 'a return of a payout that cannot be reversed as it stands: kept for staff');
  return outcome !== 'gone';
}

/** The operator's own top-up: `rail:bank_transfer → operator:float`, once per bank reference. */
export async function recordOperatorTopUp(credit: StatementCredit): Promise<boolean> {
  const created = await inTransaction(async (tx) => {
    const recorded = await recordDeposit(
      {
        userId: null,
        channel: 'bank_transfer',
        rail: credit.rail,
        currency: 'KES',
        amountMinor: credit.amountMinor.toString(),
        status: 'float',
        providerReference: credit.reference,
        quotedReference: credit.description.slice(0, 64),
        payerPhone: null,
        payerName: null,
        payerAddress: null,
      },
      tx,
    );
    if (!recorded.created) return false;
    await postLines(tx, {
      depositId: recorded.row.id,
      kind: 'deposit',
      currency: 'KES',
      lines: transfer('rail:bank_transfer', OPERATOR_FLOAT, credit.amountMinor.toString()),
    });
    return true;
  });
  if (created) log.info({ bankReference: credit.reference }, "the operator's top-up recorded on operator:float");
  return created;
}
