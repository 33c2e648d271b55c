import { createHmac, timingSafeEqual } from 'node:crypto';
import { normaliseKenyanPhone } from '../domain/phone';
import { MPESA_RESULT_CODES } from './mpesa-codes';
import { ProviderClient, str } from './provider-http';
import {
  RailError,
  type BalanceQueries,
  type Collections,
  type PaybillRegistration,
  type RailAccepted,
  type RailConnector,
  type RailOutcome,
  type RailStatus,
  type RailSubmission,
  type RecordedRailRequest,
} from './types';

/**
 * M-Pesa through Safaricom's Daraja API: OAuth client-credentials token; B2C payouts (money from our
 * shortcode to a phone: every `mobile_money` payment and the M-Pesa fiat leg of a P2P trade) with their
 * ResultURL and QueueTimeOutURL, and the Transaction Status query when the result is late; and Lipa na M-Pesa
 * Online (STK Push, Password = base64(shortcode + passkey + timestamp)) for collections from a payer's
 * phone, with its callback and the STK query when the callback is late.
 *
 * Each accepted request is returned to the caller to record (kind `b2c`: ConversationID and our
 * OriginatorConversationID; kind `stk`: CheckoutRequestID and MerchantRequestID), so that a callback or
 * result is taken only when it names a request we made and that is still pending, and a status query is
 * asked of the request as recorded. Every URL we give Daraja also carries a token keyed by the order id
 * (HMAC with DARAJA_CALLBACK_SECRET): Daraja does not sign its callbacks.
 */

export interface DarajaOptions {
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  shortcode: string;
  passkey: string;
  transactionType: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
  callbackSecret: string;
  /** Where Daraja can reach this deployment's API (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
  b2c: { initiatorName: string; securityCredential: string };
  fetchImpl?: typeof fetch;
}

/** Daraja's `Timestamp`: YYYYMMDDHHMMSS in East Africa Time (UTC+3, no daylight saving). */
export function darajaTimestamp(now: Date = new Date()): string {
  return new Date(now.getTime() + 3 * 3600 * 1000).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

export const stkPassword = (shortcode: string, passkey: string, timestamp: string): string =>
  Buffer.from(`${shortcode}${passkey}${timestamp}`).toString('base64');

export const callbackToken = (secret: string, orderId: string): string =>
  createHmac('sha256', secret).update(`daraja:${orderId}`).digest('base64url').slice(0, 32);

export function verifyCallbackToken(secret: string, orderId: string, token: string | undefined): boolean {
  if (!token) return false;
  const expected = Buffer.from(callbackToken(secret, orderId));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * The token of the URL a paybill receipt's Transaction Status result is posted to, keyed by the claim it
 * checks. (The paybill URLs themselves carry a random token, new at each registration: see RegisterURL.)
 */
export const c2bStatusToken = (secret: string, claimId: string): string => callbackToken(secret, `c2b-status:${claimId}`);

export const verifyC2bStatusToken = (secret: string, claimId: string, token: string | undefined): boolean =>
  verifyCallbackToken(secret, `c2b-status:${claimId}`, token);

/**
 * What Daraja's Transaction Status result says of a paybill receipt: confirmed (with its facts), refused
 * (`confirmed: false`), or nothing, when the query failed on its own (`confirmed: null`: ask again).
 */
export type C2bStatusFacts =
  | { confirmed: true; amountMinor: bigint | null; creditParty: string | null; account: string | null }
  | { confirmed: false; reason: string }
  | { confirmed: null; reason: string };

/** The query's own ResultCode when M-Pesa has no transaction with that receipt: a refusal of the claim. */
const RECEIPT_DOES_NOT_EXIST = 'R000001';

/** Shillings as Daraja writes them (2000, "2000.00") in cents; null when it is not an amount. */
function shillingsToCents(raw: string | undefined): bigint | null {
  const match = /^(\d{1,15})(?:\.(\d{1,2}))?$/.exec((raw ?? '').trim());
  return match ? BigInt(match[1]) * 100n + BigInt((match[2] ?? '').padEnd(2, '0')) : null;
}

/**
 * Read a Transaction Status result about a paybill receipt. Its own ResultCode says whether the *query*
 * worked: a receipt M-Pesa says does not exist is refused; any other non-zero one (bad initiator, busy, a
 * queue timeout) says nothing of the payment, and the claim is asked about again. With ResultCode 0, only a
 * `Completed` transaction for this receipt is confirmed, with the amount, the credited party (our
 * shortcode) and, when Daraja names it, the account number the payer typed.
 */
export function readC2bStatusResult(result: DarajaResult['Result'] | undefined, transId: string): C2bStatusFacts {
  const code = result ? str(result.ResultCode) : undefined;
  if (!result || code === undefined) return { confirmed: null, reason: 'the status result could not be read' };
  if (code === RECEIPT_DOES_NOT_EXIST) {
    return { confirmed: false, reason: `Daraja could not confirm the receipt: ${result.ResultDesc ?? `code ${code}`}` };
  }
  if (code !== '0') return { confirmed: null, reason: `the status query failed on its own: ${result.ResultDesc ?? `code ${code}`}` };
  const status = resultParameter(result, 'TransactionStatus');
  if (status !== 'Completed') return { confirmed: false, reason: `M-Pesa reports the receipt ${status ?? 'without a status'}` };
  const receipt = resultParameter(result, 'ReceiptNo') ?? result.TransactionID;
  if (receipt !== undefined && receipt.toUpperCase() !== transId.toUpperCase()) {
    return { confirmed: false, reason: `the status result names receipt ${receipt}, not ${transId}` };
  }
  return {
    confirmed: true,
    amountMinor: shillingsToCents(resultParameter(result, 'Amount')),
    creditParty: resultParameter(result, 'CreditPartyName') ?? null,
    account: resultParameter(result, 'BillRefNumber') ?? resultParameter(result, 'AccountReference') ?? null,
  };
}

/** What Daraja POSTs to the paybill's validation and confirmation URLs. */
export interface C2bNotification {
  TransactionType?: string;
  TransID?: string;
  TransTime?: string;
  TransAmount?: string | number;
  BusinessShortCode?: string | number;
  BillRefNumber?: string;
  InvoiceNumber?: string;
  OrgAccountBalance?: string | number;
  ThirdPartyTransID?: string;
  MSISDN?: string | number;
  FirstName?: string;
  MiddleName?: string;
  LastName?: string;
}

/** A paybill payment as Paygate reads it: its receipt, amount in cents, the account number typed, the payer. */
export interface C2bPayment {
  transId: string;
  amountMinor: bigint;
  billRef: string;
  phone: string | null;
  name: string | null;
}

/**
 * Read a C2B notification, or null when it is not one: a receipt of 6 to 20 letters and digits, and a
 * positive amount in shillings with at most two decimals (Daraja sends "200.00", or sometimes a number).
 */
export function parseC2bNotification(body: C2bNotification | undefined): C2bPayment | null {
  const transId = typeof body?.TransID === 'string' ? body.TransID.trim() : '';
  const amount = String(body?.TransAmount ?? '').trim();
  const match = /^(\d{1,15})(?:\.(\d{1,2}))?$/.exec(amount);
  if (!/^[A-Z0-9]{6,20}$/i.test(transId) || !match) return null;
  const amountMinor = BigInt(match[1]) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
  if (amountMinor <= 0n) return null;
  const name = [body?.FirstName, body?.MiddleName, body?.LastName].filter((n) => typeof n === 'string' && n.trim()).join(' ');
  return {
    transId: transId.toUpperCase(),
    amountMinor,
    billRef: typeof body?.BillRefNumber === 'string' ? body.BillRefNumber : '',
    phone: normaliseKenyanPhone(String(body?.MSISDN ?? '')),
    name: name || null,
  };
}

/**
 * A Daraja ResultCode as our outcome. The reason is ours: the mapped code's, else a neutral one naming the
 * code when it is a number; M-Pesa's ResultDesc is only `providerText`, for the log
 * (docs/conventions.md#errors).
 */
export function darajaOutcome(reference: string, resultCode: string, resultDesc: string | undefined): RailOutcome {
  if (resultCode === '0') return { state: 'succeeded', reference, providerCode: '0' };
  const mapped = MPESA_RESULT_CODES[resultCode];
  const code = /^\d{1,12}$/.test(resultCode) ? ` (result code ${resultCode})` : '';
  return {
    state: 'failed',
    reference,
    failureCode: mapped?.failureCode ?? 'provider_error',
    reason: mapped?.reason ?? `M-Pesa did not complete the request${code}`,
    providerCode: resultCode,
    ...(resultDesc ? { providerText: resultDesc } : {}),
  };
}

/** The STK callback body Daraja POSTs to the CallBackURL. */
export interface StkCallback {
  Body: {
    stkCallback: {
      MerchantRequestID: string;
      CheckoutRequestID: string;
      ResultCode: number | string;
      ResultDesc?: string;
      CallbackMetadata?: { Item: { Name: string; Value?: string | number }[] };
    };
  };
}

/** An STK callback as the result of the request it names, or null when it is not one. */
export interface StkResult {
  checkoutRequestId: string;
  merchantRequestId: string;
  resultCode: string;
  resultDesc: string | null;
  receipt: string | null;
  outcome: RailOutcome;
}

export function readStkCallback(callback: StkCallback | undefined): StkResult | null {
  const stk = callback?.Body?.stkCallback;
  const resultCode = str(stk?.ResultCode);
  if (!stk || resultCode === undefined || typeof stk.CheckoutRequestID !== 'string') return null;
  const receipt = stk.CallbackMetadata?.Item?.find((i) => i.Name === 'MpesaReceiptNumber')?.Value;
  return {
    checkoutRequestId: stk.CheckoutRequestID,
    merchantRequestId: stk.MerchantRequestID ?? '',
    resultCode,
    resultDesc: stk.ResultDesc ?? null,
    receipt: receipt === undefined ? null : String(receipt),
    outcome: darajaOutcome(stk.CheckoutRequestID, resultCode, stk.ResultDesc),
  };
}

/** The body Daraja POSTs to a ResultURL or QueueTimeOutURL (B2C result, Transaction Status result, timeout). */
export interface DarajaResult {
  Result: {
    ResultType?: number | string;
    ResultCode: number | string;
    ResultDesc?: string;
    OriginatorConversationID?: string;
    ConversationID?: string;
    TransactionID?: string;
    ResultParameters?: { ResultParameter?: DarajaResultParameter[] | DarajaResultParameter };
  };
}

export interface DarajaResultParameter {
  Key: string;
  Value?: string | number;
}

/** What a ResultURL post is: the payout's own result, the Transaction Status query's, or a queue timeout. */
export type DarajaResultKind = 'result' | 'status' | 'timeout';

export function resultParameter(result: DarajaResult['Result'], key: string): string | undefined {
  const raw = result.ResultParameters?.ResultParameter;
  const list = Array.isArray(raw) ? raw : raw ? [raw] : [];
  return str(list.find((p) => p.Key === key)?.Value);
}

/** The token in an Account Balance query's ResultURL: one per query. */
export const balanceQueryToken = (secret: string, queryId: string): string => callbackToken(secret, `balance:${queryId}`);

export const verifyBalanceQueryToken = (secret: string, queryId: string, token: string | undefined): boolean =>
  verifyCallbackToken(secret, `balance:${queryId}`, token);

/** One account of the shortcode, as an Account Balance result lists it. */
export interface MpesaAccountBalance {
  name: string;
  currency: string;
  /** Cents; negative for an account that only pays out (the charges paid account). */
  amountMinor: bigint;
}

export type BalanceFacts =
  { answered: true; accounts: MpesaAccountBalance[]; totalMinor: bigint; currency: string } | { answered: false; reason: string };

/** Shillings as M-Pesa writes them ("481000.00", "-220.00") in cents; null when it is not an amount. */
function mpesaCents(amount: string): bigint | null {
  const match = /^(-?)(\d{1,15})(?:\.(\d{1,2}))?$/.exec(amount.trim());
  if (!match) return null;
  const cents = BigInt(match[2]) * 100n + BigInt((match[3] ?? '').padEnd(2, '0'));
  return match[1] === '-' ? -cents : cents;
}

/**
 * What an Account Balance result says. Its own ResultCode is the query's: non-zero (a bad initiator, busy)
 * says nothing of the balance. With 0, the `AccountBalance` parameter lists the shortcode's accounts,
 * `Name|Currency|Amount|…` joined by `&` (working, utility, charges paid, …); what M-Pesa holds for the
 * operator is their sum.
 */
export function readAccountBalance(result: DarajaResult['Result'] | undefined): BalanceFacts {
  if (!result) return { answered: false, reason: 'no Result in the body' };
  if (str(result.ResultCode) !== '0') {
    return { answered: false, reason: `the query failed: ${str(result.ResultCode) ?? '?'} ${result.ResultDesc ?? ''}`.trim() };
  }
  const raw = resultParameter(result, 'AccountBalance');
  if (!raw) return { answered: false, reason: 'the result carries no AccountBalance' };
  const accounts: MpesaAccountBalance[] = [];
  for (const part of raw.split('&')) {
    const [name, currency, amount] = part.split('|');
    const amountMinor = amount === undefined ? null : mpesaCents(amount);
    if (!name || currency !== 'KES' || amountMinor === null) return { answered: false, reason: `an account Paygate cannot read: ${part}` };
    accounts.push({ name: name.trim(), currency, amountMinor });
  }
  return { answered: true, accounts, currency: 'KES', totalMinor: accounts.reduce((sum, a) => sum + a.amountMinor, 0n) };
}

/**
 * The outcome a Transaction Status result tells about the payout. The result's own ResultCode is the
 * **query's**: non-zero (a bad initiator, a transaction not found yet, busy) says nothing about the payout,
 * and the next poll asks again. With ResultCode 0, `TransactionStatus: Completed` is paid, and another
 * status the payout's failure; without a status it says nothing.
 */
export function transactionStatusOutcome(reference: string, result: DarajaResult['Result']): RailOutcome | null {
  if (str(result.ResultCode) !== '0') return null;
  const status = resultParameter(result, 'TransactionStatus');
  if (status === 'Completed') return { state: 'succeeded', reference, providerCode: '0' };
  if (status === undefined) return null;
  // The payout's own code, where the result gives it (`ReasonCode`), maps as the B2C result's would.
  const reasonCode = resultParameter(result, 'ReasonCode');
  if (reasonCode !== undefined && reasonCode !== '0' && MPESA_RESULT_CODES[reasonCode]) {
    return darajaOutcome(reference, reasonCode, resultParameter(result, 'TransactionReason'));
  }
  const reason = resultParameter(result, 'TransactionReason');
  return {
    state: 'failed',
    reference,
    failureCode: 'provider_error',
    reason: 'M-Pesa did not complete the request',
    providerText: `${status}${reason ? `: ${reason}` : ''}`,
  };
}

/**
 * What a B2C post tells about the payout recorded for its order. `result`: the payout's own result, taken
 * only with the ConversationID and OriginatorConversationID recorded for it; `status` (the Transaction
 * Status query's answer): taken only when `sentQuery` says Paygate sent the query it answers; `timeout`: the
 * request timed out in Daraja's queue, which decides nothing (the status query will). Null when the post
 * decides nothing.
 */
export function b2cResultOutcome(
  kind: DarajaResultKind,
  result: DarajaResult['Result'],
  payout: Pick<RecordedRailRequest, 'providerReference' | 'merchantReference'>,
  sentQuery: boolean,
): RailOutcome | null {
  if (kind === 'result') {
    // A payout whose acknowledgement was lost is recorded by our OriginatorConversationID alone (its
    // ConversationID never came): its result is matched by that id.
    const conversationKnown = payout.providerReference !== payout.merchantReference;
    if (conversationKnown && result.ConversationID !== payout.providerReference) return null;
    if (result.OriginatorConversationID !== payout.merchantReference) return null;
    return darajaOutcome(payout.providerReference, str(result.ResultCode) ?? '', result.ResultDesc);
  }
  if (kind === 'status') return sentQuery ? transactionStatusOutcome(payout.providerReference, result) : null;
  return null;
}

/** The receipt a B2C result names. */
export const b2cReceipt = (result: DarajaResult['Result']): string | null =>
  result.TransactionID ?? resultParameter(result, 'ReceiptNo') ?? null;

/**
 * A B2C payout whose acknowledgement never came, as the request Paygate records for it: known only by our
 * OriginatorConversationID, which is the order id.
 */
function unacknowledgedPayout(orderId: string): RecordedRailRequest {
  return {
    orderId,
    kind: 'b2c',
    providerReference: orderId,
    merchantReference: orderId,
    status: 'pending',
    resultCode: null,
    resultDesc: null,
  };
}

const requestOf = (row: RecordedRailRequest) => ({
  kind: row.kind,
  providerReference: row.providerReference,
  merchantReference: row.merchantReference,
});

/** Daraja's "still being processed" answer to an STK query. */
const STILL_PROCESSING = '500.001.1001';

/**
 * A refused synchronous answer from Daraja as a RailError: busy and transient answers are retryable. For a
 * payout (`sending`), a 5xx other than "busy" may come after M-Pesa took the request (its outcome is
 * unknown), and a refusal as a duplicate means the OriginatorConversationID was already received.
 */
function refusal(res: { status: number; body: Record<string, unknown> }, what: string, sending = false): RailError {
  const code = str(res.body.errorCode) ?? str(res.body.ResponseCode) ?? String(res.status);
  const text = str(res.body.errorMessage) ?? str(res.body.ResponseDescription) ?? `HTTP ${res.status}`;
  const mapped = MPESA_RESULT_CODES[code];
  if (sending && /duplicate/i.test(text)) {
    return new RailError('duplicate_request', `M-Pesa already has this ${what}`, false, code, 'duplicate', text);
  }
  if (mapped?.retryable || res.status >= 500 || res.status === 429 || res.status === 401) {
    const unknown = sending && res.status >= 500 && !mapped?.retryable;
    return new RailError('provider_busy', `M-Pesa could not take the ${what} now`, true, code, unknown ? 'unknown' : 'refused', text);
  }
  const reason = mapped?.reason ?? `M-Pesa refused the ${what}`;
  return new RailError(mapped?.failureCode ?? 'provider_rejected', reason, false, code, 'refused', text);
}

export class DarajaConnector implements RailConnector, Collections, PaybillRegistration, BalanceQueries {
  readonly name = 'daraja';
  private readonly client: ProviderClient;

  constructor(private readonly options: DarajaOptions) {
    this.client = new ProviderClient('Daraja', options.baseUrl, options.fetchImpl ?? fetch, async (client) => {
      const basic = Buffer.from(`${options.consumerKey}:${options.consumerSecret}`).toString('base64');
      const res = await client.request('/oauth/v1/generate?grant_type=client_credentials', {
        method: 'GET',
        headers: { authorization: `Basic ${basic}` },
      });
      const value = str(res.body.access_token);
      if (res.status !== 200 || !value) {
        throw new RailError(
          'provider_auth_failed',
          'M-Pesa refused our credentials',
          res.status >= 500,
          undefined,
          'refused',
          str(res.body.errorMessage) ?? `HTTP ${res.status}`,
        );
      }
      const ttl = Number(str(res.body.expires_in) ?? 3599);
      return { value, expiresAt: Date.now() + Math.max(60, ttl - 60) * 1000 };
    });
  }

  private call(path: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
    return this.client.authorised('POST', path, {}, body);
  }

  private credentials() {
    const timestamp = darajaTimestamp();
    return {
      BusinessShortCode: this.options.shortcode,
      Password: stkPassword(this.options.shortcode, this.options.passkey, timestamp),
      Timestamp: timestamp,
    };
  }

  /**
   * Register the paybill's validation and confirmation URLs for our shortcode (C2B RegisterURL), with this
   * registration's `token`. With `ResponseType: Completed`, M-Pesa completes a payment whose validation it
   * could not reach: the money is the customer's either way, and one that matches nobody waits for staff
   * rather than bouncing.
   */
  async registerC2bUrls(token: string): Promise<{ confirmationUrl: string; validationUrl: string }> {
    const base = `${this.options.publicBaseUrl}/api/v1/callbacks/mpesa/c2b`;
    const query = `token=${encodeURIComponent(token)}`;
    const urls = { confirmationUrl: `${base}/confirmation?${query}`, validationUrl: `${base}/validation?${query}` };
    const res = await this.call('/mpesa/c2b/v1/registerurl', {
      ShortCode: this.options.shortcode,
      ResponseType: 'Completed',
      ConfirmationURL: urls.confirmationUrl,
      ValidationURL: urls.validationUrl,
    });
    if (res.status !== 200 || str(res.body.ResponseCode) !== '0') throw refusal(res, 'URL registration');
    return urls;
  }

  /**
   * Ask Daraja (Transaction Status, by receipt) what became of a paybill payment that a confirmation
   * announced. The answer is posted later to the claim's status URL; the ids returned here are the only
   * ones its answer is taken with.
   */
  async queryC2bPayment(transId: string, claimId: string): Promise<{ conversationId: string; originatorConversationId: string }> {
    const url = `${this.options.publicBaseUrl}/api/v1/callbacks/mpesa/c2b/status/${claimId}?token=${c2bStatusToken(this.options.callbackSecret, claimId)}`;
    const res = await this.call('/mpesa/transactionstatus/v1/query', {
      Initiator: this.options.b2c.initiatorName,
      SecurityCredential: this.options.b2c.securityCredential,
      CommandID: 'TransactionStatusQuery',
      TransactionID: transId,
      PartyA: this.options.shortcode,
      IdentifierType: '4',
      ResultURL: url,
      QueueTimeOutURL: url,
      Remarks: 'Paygate paybill check',
      Occasion: claimId.replace(/-/g, '').slice(-12),
    });
    const conversationId = str(res.body.ConversationID);
    const originatorConversationId = str(res.body.OriginatorConversationID);
    if (res.status === 200 && str(res.body.ResponseCode) === '0' && conversationId && originatorConversationId) {
      return { conversationId, originatorConversationId };
    }
    throw refusal(res, 'paybill status query');
  }

  /**
   * Ask Daraja for the shortcode's balance (Account Balance). The answer is posted later to the query's
   * URL, and is taken only with the ids returned here.
   */
  async queryBalance(queryId: string): Promise<{ conversationId: string; originatorConversationId: string }> {
    const url = `${this.options.publicBaseUrl}/api/v1/callbacks/mpesa/balance/${queryId}?token=${balanceQueryToken(this.options.callbackSecret, queryId)}`;
    const res = await this.call('/mpesa/accountbalance/v1/query', {
      Initiator: this.options.b2c.initiatorName,
      SecurityCredential: this.options.b2c.securityCredential,
      CommandID: 'AccountBalance',
      PartyA: this.options.shortcode,
      IdentifierType: '4',
      Remarks: 'Paygate reconciliation',
      ResultURL: url,
      QueueTimeOutURL: url,
    });
    const conversationId = str(res.body.ConversationID);
    const originatorConversationId = str(res.body.OriginatorConversationID);
    if (res.status === 200 && str(res.body.ResponseCode) === '0' && conversationId && originatorConversationId) {
      return { conversationId, originatorConversationId };
    }
    throw refusal(res, 'account balance query');
  }

  /** The URLs Daraja posts a payout's results to, each with the order's token. */
  private b2cUrl(orderId: string, kind: DarajaResultKind): string {
    return `${this.options.publicBaseUrl}/api/v1/callbacks/mpesa/b2c/${orderId}/${kind}?token=${callbackToken(this.options.callbackSecret, orderId)}`;
  }

  /** A payout (B2C) by default; a collection from the payer's phone by STK Push. */
  async submit(s: RailSubmission): Promise<RailAccepted> {
    if (s.destination.provider !== 'mpesa') {
      throw new RailError('method_unavailable', `${s.destination.provider ?? 'this provider'} is not reachable through M-Pesa`, false);
    }
    if (s.currency !== 'KES') throw new RailError('unsupported_currency', 'M-Pesa pays in KES only', false);
    if (!/^\d+(\.0+)?$/.test(s.amount)) throw new RailError('invalid_amount', 'M-Pesa takes whole shillings only', false);
    // Daraja refuses a request without a subscriber number (400 Invalid PhoneNumber): say so before asking it.
    const phone = normaliseKenyanPhone(s.destination.phone ?? '')?.replace(/^\+/, '');
    if (!phone) throw new RailError('invalid_destination', 'M-Pesa needs a Kenyan phone number', false);
    return s.direction === 'collection' ? this.stkPush(s, phone) : this.payout(s, phone);
  }

  collect(s: RailSubmission): Promise<RailAccepted> {
    return this.submit({ ...s, direction: 'collection' });
  }

  /** STK Push: ask the payer's phone to pay `amount` to our shortcode. */
  private async stkPush(s: RailSubmission, phone: string): Promise<RailAccepted> {
    const res = await this.call('/mpesa/stkpush/v1/processrequest', {
      ...this.credentials(),
      TransactionType: this.options.transactionType,
      Amount: Number(s.amount.split('.')[0]),
      PartyA: phone,
      PartyB: this.options.shortcode,
      PhoneNumber: phone,
      CallBackURL: `${this.options.publicBaseUrl}/api/v1/callbacks/mpesa/stk/${s.orderId}?token=${callbackToken(this.options.callbackSecret, s.orderId)}`,
      AccountReference: s.orderId.replace(/-/g, '').slice(-12),
      TransactionDesc: (s.description ?? 'Paygate payment').slice(0, 13),
    });
    const checkout = str(res.body.CheckoutRequestID);
    const merchant = str(res.body.MerchantRequestID);
    if (res.status === 200 && str(res.body.ResponseCode) === '0' && checkout) {
      return { reference: checkout, request: { kind: 'stk', providerReference: checkout, merchantReference: merchant ?? null } };
    }
    throw refusal(res, 'payment request');
  }

  /**
   * B2C: pay out from the shortcode to a phone. Our OriginatorConversationID is the order id, so Daraja
   * treats a resubmission as the same request; the outcome arrives at the ResultURL.
   */
  private async payout(s: RailSubmission, phone: string): Promise<RailAccepted> {
    const res = await this.call('/mpesa/b2c/v3/paymentrequest', {
      OriginatorConversationID: s.orderId,
      InitiatorName: this.options.b2c.initiatorName,
      SecurityCredential: this.options.b2c.securityCredential,
      CommandID: 'BusinessPayment',
      Amount: Number(s.amount.split('.')[0]),
      PartyA: this.options.shortcode,
      PartyB: phone,
      Remarks: (s.description ?? 'Paygate payout').slice(0, 100),
      QueueTimeOutURL: this.b2cUrl(s.orderId, 'timeout'),
      ResultURL: this.b2cUrl(s.orderId, 'result'),
      Occasion: s.orderId.replace(/-/g, '').slice(-12),
    });
    const conversation = str(res.body.ConversationID);
    if (res.status === 200 && str(res.body.ResponseCode) === '0' && conversation) {
      const merchantReference = str(res.body.OriginatorConversationID) ?? s.orderId;
      return { reference: conversation, request: { kind: 'b2c', providerReference: conversation, merchantReference } };
    }
    throw refusal(res, 'payout', true);
  }

  /**
   * The recorded outcome (`hint.request`, the request as the caller recorded it), else ask Daraja: the STK
   * query answers at once; the Transaction Status query of a payout is answered at its ResultURL, which
   * resolves the request and signals the workflow, so until then the payout stays pending.
   */
  async status(reference: string, hint: { request?: RecordedRailRequest; referenceIsOurs?: boolean } = {}): Promise<RailStatus> {
    // A payout whose acknowledgement was lost: `reference` is our OriginatorConversationID (the order id),
    // asked about by Transaction Status and recorded as the request its answer resolves.
    if (!hint.request && hint.referenceIsOurs) return this.queryPayout(unacknowledgedPayout(reference));
    const row = hint.request;
    if (!row || row.providerReference !== reference) throw new RailError('unknown_reference', `no M-Pesa request ${reference}`, false);
    if (row.status !== 'pending') return darajaOutcome(reference, row.resultCode ?? '', row.resultDesc ?? undefined);
    return row.kind === 'b2c' ? this.queryPayout(row) : this.queryStk(reference);
  }

  private async queryPayout(row: RecordedRailRequest): Promise<RailStatus> {
    const res = await this.call('/mpesa/transactionstatus/v1/query', {
      Initiator: this.options.b2c.initiatorName,
      SecurityCredential: this.options.b2c.securityCredential,
      CommandID: 'TransactionStatusQuery',
      OriginalConversationID: row.merchantReference ?? row.orderId,
      PartyA: this.options.shortcode,
      IdentifierType: '4',
      ResultURL: this.b2cUrl(row.orderId, 'status'),
      QueueTimeOutURL: this.b2cUrl(row.orderId, 'timeout'),
      Remarks: 'Paygate payout status',
      Occasion: row.orderId.replace(/-/g, '').slice(-12),
    });
    if (res.status === 200 && str(res.body.ResponseCode) === '0') {
      // Its result is taken only with the ids Daraja gave this query (see b2cResultOutcome): the caller records them.
      const conversationId = str(res.body.ConversationID);
      const originatorConversationId = str(res.body.OriginatorConversationID);
      const request = row.providerReference === row.merchantReference ? { request: requestOf(row) } : {};
      return {
        state: 'pending',
        reference: row.providerReference,
        ...(conversationId && originatorConversationId
          ? { facts: { statusQuery: { conversationId, originatorConversationId }, ...request } }
          : {}),
      };
    }
    const error = refusal(res, 'status query');
    // A refused query says nothing about the payout: a transient refusal is retried by the activity, any
    // other leaves it pending, to be asked again and, without an answer, to time out as `rail_timeout`.
    if (error.retryable)
      throw new RailError('provider_unavailable', error.message, true, error.providerCode, 'refused', error.providerText);
    return { state: 'pending', reference: row.providerReference };
  }

  private async queryStk(reference: string): Promise<RailStatus> {
    const res = await this.call('/mpesa/stkpushquery/v1/query', { ...this.credentials(), CheckoutRequestID: reference });
    const resultCode = str(res.body.ResultCode);
    if (res.status === 200 && resultCode !== undefined) {
      // The caller records the result on the request, as a callback would have.
      const facts = { result: { resultCode, resultDesc: str(res.body.ResultDesc) ?? null } };
      return { ...darajaOutcome(reference, resultCode, str(res.body.ResultDesc)), facts };
    }
    if (str(res.body.errorCode) === STILL_PROCESSING) return { state: 'pending', reference };
    throw new RailError(
      'provider_unavailable',
      'the STK query failed',
      true,
      undefined,
      'refused',
      str(res.body.errorMessage) ?? `HTTP ${res.status}`,
    );
  }

  async health(): Promise<'up' | 'down'> {
    try {
      await this.client.accessToken();
      return 'up';
    } catch {
      return 'down';
    }
  }
}
