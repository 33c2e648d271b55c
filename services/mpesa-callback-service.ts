import { config } from '../platform/config';
import { isUuid } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import {
  b2cReceipt,
  b2cResultOutcome,
  parseC2bNotification,
  readStkCallback,
  verifyC2bToken,
  verifyCallbackToken,
  type C2bNotification,
  type DarajaResult,
  type DarajaResultKind,
  type StkCallback,
} from '../connectors/daraja';
import { str } from '../connectors/provider-http';
import { normaliseDepositReference } from '../domain/wallets';
import { userByDepositReference } from '../repositories/users';
import type { RailOutcome } from '../connectors';
import { pendingRailRequest, resolveRailRequest, sentStatusQuery } from '../repositories/rails';
import { railConnectors } from './connectors';
import { findDeposit } from '../repositories/deposits';
import { findOrder } from '../repositories/orders';
import { signalDepositOutcome } from '../workflows/client';
import { deliverRailOutcome } from './rail-outcome';
import { creditIncoming, depositOverCap } from './money-in';

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
    log.warn({ orderId, checkout: body?.Body?.stkCallback?.CheckoutRequestID }, 'ignored an STK callback that matches no pending request');
    return IGNORED;
  }
  return signalOutcome(resolved.orderId, resolved.outcome);
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
  return signalOutcome(resolved.orderId, resolved.outcome);
}

const IGNORED: DarajaAck = { ResultCode: 1, ResultDesc: 'Ignored' };

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
      resultDesc: outcome.state === 'failed' ? outcome.reason : (result.ResultDesc ?? null),
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
    return { ResultCode: 0, ResultDesc: 'Accepted' };
  }
  // The result is recorded on the request whatever happens next: a workflow still running takes it (or
  // its poll reads it); for a closed order it is also recorded as a late result and raised to operators.
  await deliverRailOutcome(order, 'daraja', outcome);
  return { ResultCode: 0, ResultDesc: 'Accepted' };
}

// ---------------------------------------------------------------------------------------------
// Paybill (C2B): money in without a prompt, quoting the user's deposit reference as the account number

/** Daraja's answer to a C2B validation: `0` accepts; a `C2B000…` code refuses the payment before it is made. */
export interface C2bAck {
  ResultCode: number | string;
  ResultDesc: string;
}

const C2B_ACCEPTED: C2bAck = { ResultCode: 0, ResultDesc: 'Accepted' };

/** Whether a paybill callback carries the token of the URLs Paygate registered (and Daraja is the rail). */
const c2bTrusted = (token: string | undefined): boolean => {
  const cfg = config();
  return cfg.rails.mobile_money === 'daraja' && cfg.daraja.callbackSecret !== '' && verifyC2bToken(cfg.daraja.callbackSecret, token);
};

/**
 * Validation: before M-Pesa takes the customer's money, refuse an account number (`BillRefNumber`) that is no
 * user's deposit reference (C2B00012), a malformed payment (C2B00013), or an amount that would take the
 * wallet past its KYC tier's cap (C2B00016), so the money never leaves the phone.
 */
export async function handleC2bValidation(token: string | undefined, body: C2bNotification): Promise<C2bAck> {
  if (!c2bTrusted(token)) {
    log.warn({ transId: body?.TransID }, 'ignored a C2B validation without our token');
    return IGNORED;
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
 * Confirmation: the money has arrived. It is credited once per `TransID` through the one crediting path
 * (screened; an unknown reference waits unmatched for staff); a replay is acknowledged and moves nothing.
 */
export async function handleC2bConfirmation(token: string | undefined, body: C2bNotification): Promise<C2bAck> {
  if (!c2bTrusted(token)) {
    log.warn({ transId: body?.TransID }, 'ignored a C2B confirmation without our token');
    return IGNORED;
  }
  const payment = parseC2bNotification(body);
  if (!payment) {
    log.error({ transId: body?.TransID }, 'a C2B confirmation Paygate cannot read: money may have arrived, check the paybill statement');
    return IGNORED;
  }
  const { deposit, created } = await creditIncoming({
    channel: 'mpesa_c2b',
    rail: 'daraja',
    providerReference: payment.transId,
    currency: 'KES',
    amountMinor: payment.amountMinor,
    quotedReference: payment.billRef,
    payer: { phone: payment.phone, name: payment.name },
  });
  if (!created)
    log.info({ transId: payment.transId, depositId: deposit.deposit_id }, 'a C2B confirmation seen before: nothing credited again');
  return C2B_ACCEPTED;
}

/**
 * Register the paybill's URLs with Daraja (C2B RegisterURL) when M-Pesa runs on Daraja: the api does it at
 * boot. Returns the URLs registered, or null when mobile money is not on Daraja (nothing to register).
 */
export async function registerPaybillUrls(): Promise<{ confirmationUrl: string; validationUrl: string } | null> {
  const paybill = railConnectors().paybill;
  if (!paybill) return null;
  const urls = await paybill.registerC2bUrls();
  log.info({ shortcode: config().daraja.shortcode }, 'paybill URLs registered with Daraja');
  return urls;
}
