import { config } from '../platform/config';
import { isUuid } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import {
  b2cReceipt,
  b2cResultOutcome,
  parseC2bNotification,
  readStkCallback,
  verifyCallbackToken,
  type C2bNotification,
  type DarajaResult,
  type DarajaResultKind,
  type StkCallback,
} from '../connectors/daraja';
import { withoutProviderText } from '../connectors/provider-http';
import { str } from '../connectors/provider-http';
import { normaliseDepositReference } from '../domain/wallets';
import { userByDepositReference } from '../repositories/users';
import type { RailOutcome } from '../connectors';
import { pendingRailRequest, resolveRailRequest, sentStatusQuery } from '../repositories/rails';
import { depositByProviderReference, findDeposit } from '../repositories/deposits';
import { findOrder } from '../repositories/orders';
import { signalDepositOutcome } from '../workflows/client';
import { deliverRailOutcome } from './rail-outcome';
import { depositOverCap } from './money-in';
import { creditLateCollection, listUnknownCollection } from './late-deposits';
import { C2B_ACCEPTED, C2B_IGNORED, c2bValidationTrusted, receiveC2bConfirmation, type C2bAck } from './deposit-claims';

export { registerPaybillUrls, receiveC2bStatus as handleC2bStatusResult, type C2bAck } from './deposit-claims';

const log = componentLogger('mpesa-callbacks');

export interface DarajaAck {
  ResultCode: number;
  ResultDesc: string;
}

/**
 * An STK Push callback from Daraja. Taken only when it carries the order's callback token and names the
 * pending request we made for that order; anything else is acknowledged and ignored, so a forger learns
 * nothing and changes nothing.
 */
export async function handleStkCallback(orderId: string, token: string | undefined, body: StkCallback): Promise<DarajaAck> {
  const secret = config().daraja.callbackSecret;
  const resolved = secret && (await onDaraja(orderId)) ? await resolveStkCallback(secret, orderId, token, body) : null;
  if (!resolved) {
    if (secret && (await paidForGivenUpDeposit(secret, orderId, token, body))) return { ResultCode: 0, ResultDesc: 'Accepted' };
    log.warn({ orderId, checkout: body?.Body?.stkCallback?.CheckoutRequestID }, 'ignored an STK callback that matches no pending request');
    return IGNORED;
  }
  return signalOutcome(resolved.orderId, withoutProviderText('daraja', resolved.orderId, resolved.outcome));
}

/**
 * A B2C payout's result, its Transaction Status query's result, or its queue timeout, posted by Daraja to
 * the URLs Paygate gave it. Taken under the same rule as STK callbacks: the order's token, and a pending
 * payout of that order (for a result, the ConversationID and OriginatorConversationID recorded for the
 * payout; for a status result, those recorded for one of the status queries Paygate sent for it). A
 * timeout is acknowledged and decides nothing: the workflow's status query does.
 */
export async function handleB2cResult(
  orderId: string,
  kind: DarajaResultKind,
  token: string | undefined,
  body: DarajaResult,
): Promise<DarajaAck> {
  const secret = config().daraja.callbackSecret;
  const resolved = secret && (await onDaraja(orderId)) ? await resolveB2cResult(secret, orderId, token, kind, body) : null;
  if (!resolved) {
    if (kind === 'timeout') log.info({ orderId }, 'a B2C request timed out in the M-Pesa queue; the status query will tell');
    else log.warn({ orderId, kind, conversation: body?.Result?.ConversationID }, 'ignored a B2C result that resolves no pending payout');
    return IGNORED;
  }
  return signalOutcome(resolved.orderId, withoutProviderText('daraja', resolved.orderId, resolved.outcome));
}

const IGNORED: DarajaAck = { ResultCode: 1, ResultDesc: 'Ignored' };

/**
 * A paid STK callback, with the deposit's token, that resolves no pending request: a second prompt, or a
 * request settled another way. Money the payer paid is never dropped: the rail is asked, and it is credited
 * or kept for staff. A replay of the payment already credited moves nothing.
 */
async function paidForGivenUpDeposit(secret: string, depositId: string, token: string | undefined, body: StkCallback): Promise<boolean> {
  if (!isUuid(depositId) || !verifyCallbackToken(secret, depositId, token)) return false;
  const stk = readStkCallback(body);
  const deposit = stk?.outcome.state === 'succeeded' ? await findDeposit(depositId) : undefined;
  if (!stk || !deposit || deposit.rail !== 'daraja') return false;
  // A replay of a payment already credited (by the workflow, or as a late payment) moves nothing.
  if (await depositByProviderReference('mpesa_stk', stk.checkoutRequestId)) return true;
  await listUnknownCollection(deposit, stk);
  return true;
}

type Resolved = { orderId: string; outcome: RailOutcome } | null;

/**
 * Record a callback's result on the request it belongs to. Returns the order and its outcome, or null when
 * the callback names no pending request of that order (forged, replayed, or already resolved by the query).
 */
async function resolveStkCallback(secret: string, orderId: string, token: string | undefined, callback: StkCallback): Promise<Resolved> {
  if (!verifyCallbackToken(secret, orderId, token)) return null;
  const stk = readStkCallback(callback);
  if (!stk) return null;
  const resolved = await resolveRailRequest(
    { rail: 'daraja', providerReference: stk.checkoutRequestId, merchantReference: stk.merchantRequestId, orderId },
    { status: stk.outcome.state, resultCode: stk.resultCode, resultDesc: stk.resultDesc, receipt: stk.receipt },
  );
  return resolved ? { orderId, outcome: stk.outcome } : null;
}

/**
 * Record a B2C result on the payout it belongs to: the order's pending payout, and for a Transaction Status
 * result a query Paygate sent for it (by the ConversationID and OriginatorConversationID Daraja gave it).
 */
async function resolveB2cResult(
  secret: string,
  orderId: string,
  token: string | undefined,
  kind: DarajaResultKind,
  body: DarajaResult,
): Promise<Resolved> {
  if (!verifyCallbackToken(secret, orderId, token)) return null;
  const result = body?.Result;
  if (!result || str(result.ResultCode) === undefined) return null;
  const row = await pendingRailRequest('daraja', orderId, 'b2c');
  if (!row) return null;
  const payout = { providerReference: row.provider_reference, merchantReference: row.merchant_reference };
  const sentQuery =
    kind === 'status' &&
    (await sentStatusQuery({
      rail: 'daraja',
      orderId,
      conversationId: str(result.ConversationID) ?? '',
      originatorConversationId: str(result.OriginatorConversationID) ?? '',
    }));
  const outcome = b2cResultOutcome(kind, result, payout, sentQuery);
  if (!outcome) return null;
  const resolved = await resolveRailRequest(
    { rail: 'daraja', providerReference: row.provider_reference, orderId, kind: 'b2c' },
    {
      status: outcome.state,
      resultCode: outcome.state === 'succeeded' ? '0' : (outcome.providerCode ?? 'failed'),
      // M-Pesa's own words stay on the request's record, for operators; the order gets our reason.
      resultDesc: outcome.state === 'failed' ? (outcome.providerText ?? null) : (result.ResultDesc ?? null),
      receipt: b2cReceipt(result),
    },
  );
  return resolved ? { orderId, outcome } : null;
}

/**
 * Only an order submitted on the Daraja rail can be resolved by a Daraja callback: the request it resolves
 * is one Daraja accepted (`rail_requests`), and the order, when there is one, records Daraja as its rail.
 */
async function onDaraja(orderId: string): Promise<boolean> {
  if (!isUuid(orderId)) return false;
  const order = await findOrder(orderId);
  return !order || order.rail === 'daraja';
}

async function signalOutcome(orderId: string, outcome: RailOutcome): Promise<DarajaAck> {
  const order = await findOrder(orderId);
  if (!order) {
    // An STK Push Paygate made for a deposit: its id stands where an order's would.
    const deposit = await findDeposit(orderId);
    if (!deposit || deposit.rail !== 'daraja') return IGNORED;
    if (deposit.status === 'pending') await signalDepositOutcome(deposit.id, outcome);
    else if (outcome.state === 'succeeded') await creditLateCollection(deposit, outcome.reference);
    return { ResultCode: 0, ResultDesc: 'Accepted' };
  }
  // The result is recorded on the request whatever happens next: a workflow still running takes it (or
  // its poll reads it); for a closed order it is also recorded as a late result and raised to operators.
  await deliverRailOutcome(order, 'daraja', outcome);
  return { ResultCode: 0, ResultDesc: 'Accepted' };
}

// ---------------------------------------------------------------------------------------------
// Paybill (C2B): money in without a prompt, quoting the user's deposit reference as the account number

/**
 * Validation: before M-Pesa takes the customer's money, refuse an account number (`BillRefNumber`) that is no
 * user's deposit reference (C2B00012), a malformed payment (C2B00013), or an amount that would take the
 * wallet past its KYC tier's cap (C2B00016), so the money never leaves the phone. Answered only from
 * Daraja's addresses and with a standing token of the registered URLs.
 */
export async function handleC2bValidation(
  sourceAddress: string | undefined,
  token: string | undefined,
  body: C2bNotification,
): Promise<C2bAck> {
  if (!(await c2bValidationTrusted(sourceAddress, token))) {
    log.warn({ transId: body?.TransID, sourceAddress }, 'ignored a C2B validation from elsewhere or without a standing token');
    return C2B_IGNORED;
  }
  const payment = parseC2bNotification(body);
  if (!payment) return { ResultCode: 'C2B00013', ResultDesc: 'Rejected: invalid amount' };
  const owner = await userByDepositReference(normaliseDepositReference(payment.billRef));
  if (!owner) {
    log.info({ transId: payment.transId }, 'refused a paybill payment quoting an unknown deposit reference');
    return { ResultCode: 'C2B00012', ResultDesc: 'Rejected: invalid account number' };
  }
  if (await depositOverCap(owner.id, 'KES', payment.amountMinor)) {
    log.info({ transId: payment.transId, userId: owner.id }, "refused a paybill payment that would take the wallet past its tier's cap");
    return { ResultCode: 'C2B00016', ResultDesc: 'Rejected: the account cannot take this amount' };
  }
  return C2B_ACCEPTED;
}

/**
 * Confirmation: the money is said to have arrived. It is recorded and proven with Daraja's Transaction Status
 * query before anything is credited (docs/wallets.md#money-in-is-proven); a replay is acknowledged and moves
 * nothing.
 */
export function handleC2bConfirmation(
  sourceAddress: string | undefined,
  token: string | undefined,
  body: C2bNotification,
): Promise<C2bAck> {
  return receiveC2bConfirmation(sourceAddress, token, body);
}
