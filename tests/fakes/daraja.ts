import { randomBytes } from 'node:crypto';
import { noFaults, startFakeServer, type FakeFaults, type FakeRequest, type FakeServer, type HoldAnswer } from './http';

/**
 * A local Daraja: OAuth client-credentials tokens (checks the Basic credentials); B2C payouts (checks the
 * bearer token, the initiator name and security credential, the shortcode), answered with Daraja's
 * synchronous acknowledgement and then a `Result` POSTed to the ResultURL; the Transaction Status query,
 * whose `Result` is POSTed to its own ResultURL once the payout has settled; STK Push (checks
 * Password = base64(shortcode + passkey + timestamp)) with its callback and the STK query. Outcomes follow
 * the sandbox's magic phones: 2547000XXXXX answers ResultCode XXXXX (254700000001: 1, insufficient funds;
 * 254700002040: 2040, a code Paygate does not map);
 * 254700000017/26 are busy on the first request; 254700000999 never sends its result or callback. A wrong
 * initiator or credential is accepted and then answered ResultCode 2001, as Daraja does. A request without
 * a valid phone number is refused, as Daraja refuses it.
 *
 * `faults` switches a test's B2C failures on: a payout taken and then its acknowledgement lost or a 500, and
 * a repeated OriginatorConversationID refused as a duplicate; `statusQueryError` makes the Transaction Status
 * query itself fail (its result's own ResultCode, e.g. 2001 for a bad initiator), saying nothing of the payout
 * or paybill payment it asks about; `c2bStatusUnavailable` refuses the paybill status queries at once.
 */
export interface FakeDarajaOptions {
  consumerKey: string;
  consumerSecret: string;
  shortcode: string;
  passkey: string;
  initiatorName: string;
  securityCredential: string;
  callbackDelayMs?: number;
  /** What the shortcode's utility account held before any request the fake saw; default 250000.00. */
  openingFloat?: string;
  /** What M-Pesa charges per B2C payout, taken from the charges paid account; none by default. */
  b2cCharge?: string;
}

export interface Payout {
  conversation: string;
  originator: string;
  phone: string;
  amount: number;
  resultCode: string;
  receipt: string;
  settlesAt: number;
  resultUrl: string;
}

interface Push {
  checkout: string;
  merchant: string;
  phone: string;
  /** The AccountReference of the push (the last 12 hex digits of Paygate's order id). */
  accountReference: string;
  resultCode: string;
  settlesAt: number;
  callbackUrl: string;
  /** Whole shillings, as the push asked. */
  amount: number;
}

export interface FakeDaraja extends FakeServer {
  calls: { path: string; body: Record<string, unknown> }[];
  pushes: Map<string, Push>;
  /** B2C payouts by ConversationID. */
  payouts: Map<string, Payout>;
  /** Results POSTed to Paygate: where, and Paygate's answer. */
  posted: { url: string; body: unknown; answer: unknown }[];
  /** Phones whose result or callback is held back (the status query must resolve them). */
  silentPhones: Set<string>;
  /**
   * While set, words M-Pesa adds to a failed result's ResultDesc and TransactionReason (as the real one's
   * may name the initiator or the shortcode's setup): what Paygate must log and never hand to a client.
   */
  providerWords: string | undefined;
  /** The paybill's URLs, once Paygate registered them (C2B RegisterURL). */
  c2b: { shortcode: string; responseType: string; confirmationUrl: string; validationUrl: string } | undefined;
  /**
   * A customer pays the paybill from `msisdn`, typing `billRef` as the account number: M-Pesa asks the
   * validation URL, and unless it refuses, takes the money and POSTs the confirmation. Returns the receipt
   * and both answers (no confirmation when validation refused).
   */
  payBill(p: { billRef: string; amount: string; msisdn: string; firstName?: string }): Promise<{
    transId: string;
    validation: unknown;
    confirmation: unknown;
    body: Record<string, unknown>;
  }>;
  faults: FakeFaults & {
    statusQueryError: { code: number; desc: string } | undefined;
    /** While set, a Transaction Status query about a paybill receipt is refused at once (503, system busy): no result comes. */
    c2bStatusUnavailable: boolean;
  };
  /** POST a confirmation body again, as M-Pesa does when it did not see our answer. */
  confirmAgain(body: Record<string, unknown>): Promise<unknown>;
  /** The paybill payments M-Pesa took, by receipt (TransID): what Transaction Status reports of them. */
  c2bPayments: Map<string, C2bPayment>;
  /**
   * Holds a new B2C payout's acknowledgement and its `Result` (see `HoldAnswer`), called with the payout's
   * OriginatorConversationID: M-Pesa has taken the payout, and both answers leave once the hold settles.
   */
  holdAnswer: HoldAnswer;
  /**
   * The shortcode's accounts from the fake's own books, in cents: the utility account (the opening float,
   * plus every STK collection and paybill payment taken, less every B2C payout made) and the charges paid
   * account (less each payout's charge). Account Balance answers these.
   */
  accounts(): { utility: bigint; charges: bigint };
  /** What M-Pesa holds for the operator (every account together), as shillings with two decimals. */
  balance(): string;
}

/** A paybill payment the fake took, as Transaction Status reports it. */
export interface C2bPayment {
  transId: string;
  amount: string;
  billRef: string;
  msisdn: string;
  firstName: string;
}

const SILENT = '254700000999';
const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');

export async function startFakeDaraja(o: FakeDarajaOptions): Promise<FakeDaraja> {
  const tokens = new Set<string>();
  const pushes = new Map<string, Push>();
  const payouts = new Map<string, Payout>();
  const posted: FakeDaraja['posted'] = [];
  const busySeen = new Set<string>();
  const calls: FakeDaraja['calls'] = [];
  let c2b: FakeDaraja['c2b'];
  const silentPhones = new Set([SILENT]);
  const faults: FakeDaraja['faults'] = { ...noFaults(), statusQueryError: undefined, c2bStatusUnavailable: false };
  const error = (status: number, errorCode: string, errorMessage: string) => ({
    status,
    body: { requestId: randomBytes(6).toString('hex'), errorCode, errorMessage },
  });
  const authorised = (req: FakeRequest) => tokens.has((req.headers.authorization ?? '').replace(/^Bearer /, ''));
  const passwordValid = (b: Record<string, unknown>) =>
    b.BusinessShortCode === o.shortcode &&
    typeof b.Timestamp === 'string' &&
    /^\d{14}$/.test(b.Timestamp) &&
    b.Password === Buffer.from(`${o.shortcode}${o.passkey}${b.Timestamp}`).toString('base64');

  const sendCallback = async (p: Push) => {
    const ok = p.resultCode === '0';
    const body = {
      Body: {
        stkCallback: {
          MerchantRequestID: p.merchant,
          CheckoutRequestID: p.checkout,
          ResultCode: Number(p.resultCode),
          ResultDesc: ok ? 'The service request is processed successfully.' : `Result ${p.resultCode}`,
          ...(ok
            ? {
                CallbackMetadata: {
                  Item: [
                    { Name: 'Amount', Value: 1 },
                    { Name: 'MpesaReceiptNumber', Value: `RCP${p.checkout.slice(-7).toUpperCase()}` },
                    { Name: 'PhoneNumber', Value: Number(p.phone) },
                  ],
                },
              }
            : {}),
        },
      },
    };
    await post(p.callbackUrl, body);
  };

  const post = async (url: string, body: unknown) => {
    const answer: unknown = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
      .then((r) => r.json())
      .catch((err: Error) => ({ error: err.message }));
    posted.push({ url, body, answer });
  };

  const failedDesc = (code: string) =>
    code === '2001'
      ? 'The initiator information is invalid.'
      : code === '1'
        ? 'The balance is insufficient for the transaction.'
        : `Result ${code}`;
  const resultDesc = (code: string) =>
    code === '0'
      ? 'The service request is processed successfully.'
      : fake.providerWords
        ? `${failedDesc(code)} ${fake.providerWords}`
        : failedDesc(code);

  /** The B2C `Result` Daraja POSTs to the ResultURL. */
  const payoutResult = (p: Payout) => ({
    Result: {
      ResultType: 0,
      ResultCode: Number(p.resultCode),
      ResultDesc: resultDesc(p.resultCode),
      OriginatorConversationID: p.originator,
      ConversationID: p.conversation,
      TransactionID: p.receipt,
      ...(p.resultCode === '0'
        ? {
            ResultParameters: {
              ResultParameter: [
                { Key: 'TransactionAmount', Value: p.amount },
                { Key: 'TransactionReceipt', Value: p.receipt },
                { Key: 'ReceiverPartyPublicName', Value: `${p.phone} - Test Recipient` },
                { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
              ],
            },
          }
        : {}),
      ReferenceData: {
        ReferenceItem: { Key: 'QueueTimeoutURL', Value: 'https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit' },
      },
    },
  });

  /**
   * The Transaction Status query's `Result`: its own ResultCode is the query's (0, it worked), the payout's
   * status and code are among its parameters. With `statusQueryError`, the query fails on its own.
   */
  const statusResult = (p: Payout, query: { ConversationID: string; OriginatorConversationID: string }) => {
    const failed = faults.statusQueryError;
    if (failed) {
      return {
        Result: { ResultType: 0, ResultCode: failed.code, ResultDesc: failed.desc, ...query, TransactionID: '' },
      };
    }
    return {
      Result: {
        ResultType: 0,
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        // The ids of the query it answers, as its synchronous answer gave them.
        OriginatorConversationID: query.OriginatorConversationID,
        ConversationID: query.ConversationID,
        TransactionID: p.receipt,
        ResultParameters: {
          ResultParameter: [
            { Key: 'ReceiptNo', Value: p.receipt },
            { Key: 'TransactionStatus', Value: p.resultCode === '0' ? 'Completed' : 'Failed' },
            { Key: 'ReasonCode', Value: Number(p.resultCode) },
            { Key: 'TransactionReason', Value: resultDesc(p.resultCode) },
            { Key: 'Amount', Value: p.amount },
            { Key: 'ReasonType', Value: 'Salary Payment via API' },
          ],
        },
      },
    };
  };

  const c2bPayments = new Map<string, C2bPayment>();
  /** The status results posted about each receipt, for a payment to finish only once Paygate heard it. */
  const statusAnswered = new Map<string, Promise<void>>();

  /**
   * Transaction Status asked about a paybill receipt: accepted at once, and its `Result` POSTed to the
   * ResultURL: the payment's amount, parties and account when the fake took it, else "does not exist" (the
   * query's own failure, which says nothing about any payment).
   */
  const c2bStatus = (b: Record<string, unknown>) => {
    if (b.Initiator !== o.initiatorName || b.SecurityCredential !== o.securityCredential) {
      return error(400, '400.002.02', 'Bad Request - Invalid Initiator');
    }
    if (b.CommandID !== 'TransactionStatusQuery' || b.PartyA !== o.shortcode || typeof b.ResultURL !== 'string') {
      return error(400, '400.002.02', 'Bad Request - Invalid Request');
    }
    if (faults.c2bStatusUnavailable) return error(503, '503.001.01', 'System is busy. Please try again in few minutes.');
    const query = {
      ConversationID: `AG_${Date.now()}_${randomBytes(8).toString('hex')}`,
      OriginatorConversationID: `${randomBytes(4).toString('hex')}-${Date.now()}-1`,
    };
    const paid = c2bPayments.get(String(b.TransactionID));
    const failed = faults.statusQueryError;
    const result = failed
      ? { Result: { ResultType: 0, ResultCode: failed.code, ResultDesc: failed.desc, ...query, TransactionID: text(b.TransactionID) } }
      : paid
        ? {
            Result: {
              ResultType: 0,
              ResultCode: 0,
              ResultDesc: 'The service request is processed successfully.',
              ...query,
              TransactionID: paid.transId,
              ResultParameters: {
                ResultParameter: [
                  { Key: 'ReceiptNo', Value: paid.transId },
                  { Key: 'TransactionStatus', Value: 'Completed' },
                  { Key: 'Amount', Value: Number(paid.amount) },
                  { Key: 'DebitPartyName', Value: `${paid.msisdn} - ${paid.firstName}` },
                  { Key: 'CreditPartyName', Value: `${o.shortcode} - Paygate` },
                  { Key: 'BillRefNumber', Value: paid.billRef },
                  { Key: 'ReasonType', Value: 'Pay Bill Online' },
                ],
              },
            },
          }
        : {
            Result: {
              ResultType: 0,
              ResultCode: 'R000001',
              ResultDesc: 'The transaction receipt number does not exist.',
              ...query,
              TransactionID: text(b.TransactionID),
            },
          };
    const url = b.ResultURL;
    const transId = text(b.TransactionID);
    const answered = new Promise<void>((resolve) => {
      setTimeout(() => void post(url, result).then(resolve), o.callbackDelayMs ?? 100).unref();
    });
    statusAnswered.set(transId, answered);
    return { status: 200, body: { ...query, ResponseCode: '0', ResponseDescription: 'Accept the service request successfully.' } };
  };

  const cents = (amount: string | number): bigint => {
    const [whole, fraction = ''] = String(amount).split('.');
    return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0').slice(0, 2));
  };
  const shillings = (c: bigint): string => {
    const a = c < 0n ? -c : c;
    return `${c < 0n ? '-' : ''}${a / 100n}.${(a % 100n).toString().padStart(2, '0')}`;
  };
  const accounts = () => {
    const now = Date.now();
    const settled = <T extends { resultCode: string; settlesAt: number }>(xs: Iterable<T>) =>
      [...xs].filter((x) => x.resultCode === '0' && x.settlesAt <= now);
    const paidOut = settled(payouts.values());
    const utility =
      cents(o.openingFloat ?? '250000.00') +
      settled(pushes.values()).reduce((sum, p) => sum + cents(p.amount), 0n) +
      [...c2bPayments.values()].reduce((sum, p) => sum + cents(p.amount), 0n) -
      paidOut.reduce((sum, p) => sum + cents(p.amount), 0n);
    const charges = -BigInt(paidOut.length) * cents(o.b2cCharge ?? '0');
    return { utility, charges };
  };
  const balance = () => {
    const a = accounts();
    return shillings(a.utility + a.charges);
  };
  /** Account Balance: accepted at once, and its `Result` POSTed to the ResultURL from the fake's own books. */
  const accountBalance = (b: Record<string, unknown>) => {
    if (b.Initiator !== o.initiatorName || b.SecurityCredential !== o.securityCredential) {
      return error(400, '400.002.02', 'Bad Request - Invalid Initiator');
    }
    if (b.CommandID !== 'AccountBalance' || b.PartyA !== o.shortcode || typeof b.ResultURL !== 'string') {
      return error(400, '400.002.02', 'Bad Request - Invalid Request');
    }
    const query = {
      ConversationID: `AG_${Date.now()}_${randomBytes(8).toString('hex')}`,
      OriginatorConversationID: `${randomBytes(4).toString('hex')}-${Date.now()}-1`,
    };
    const url = b.ResultURL;
    setTimeout(() => {
      const a = accounts();
      const line = (name: string, c: bigint) => `${name}|KES|${shillings(c)}|${shillings(c)}|0.00|0.00`;
      const result = faults.statusQueryError
        ? { Result: { ResultType: 0, ResultCode: faults.statusQueryError.code, ResultDesc: faults.statusQueryError.desc, ...query } }
        : {
            Result: {
              ResultType: 0,
              ResultCode: 0,
              ResultDesc: 'The service request is processed successfully.',
              ...query,
              TransactionID: randomBytes(5).toString('hex').toUpperCase(),
              ResultParameters: {
                ResultParameter: [
                  {
                    Key: 'AccountBalance',
                    Value: [
                      line('Working Account', 0n),
                      line('Utility Account', a.utility),
                      line('Charges Paid Account', a.charges),
                      line('Organization Settlement Account', 0n),
                    ].join('&'),
                  },
                  { Key: 'BOCompletedTime', Value: Number(new Date().toISOString().replace(/\D/g, '').slice(0, 14)) },
                ],
              },
            },
          };
      void post(url, result);
    }, o.callbackDelayMs ?? 100).unref();
    return { status: 200, body: { ...query, ResponseCode: '0', ResponseDescription: 'Accept the service request successfully.' } };
  };

  const server = await startFakeServer((req) => {
    const body = req.json<Record<string, unknown>>();
    calls.push({ path: req.path, body });
    if (req.path === '/mpesa/accountbalance/v1/query') {
      if (!authorised(req)) return Promise.resolve(error(401, '404.001.03', 'Invalid Access Token'));
      return Promise.resolve(accountBalance(body));
    }
    // A status query about a paybill receipt (not one of the B2C payouts' receipts).
    if (
      req.path === '/mpesa/transactionstatus/v1/query' &&
      typeof body.TransactionID === 'string' &&
      tokens.has((req.headers.authorization ?? '').replace(/^Bearer /, '')) &&
      ![...payouts.values()].some((p) => p.receipt === body.TransactionID)
    ) {
      return Promise.resolve(c2bStatus(body));
    }
    if (req.path === '/oauth/v1/generate') {
      const expected = `Basic ${Buffer.from(`${o.consumerKey}:${o.consumerSecret}`).toString('base64')}`;
      if (req.query.get('grant_type') !== 'client_credentials' || req.headers.authorization !== expected) {
        return Promise.resolve(error(400, '400.008.01', 'Invalid Authentication passed'));
      }
      const token = randomBytes(16).toString('hex');
      tokens.add(token);
      return Promise.resolve({ status: 200, body: { access_token: token, expires_in: '3599' } });
    }
    if (!authorised(req)) return Promise.resolve(error(401, '404.001.03', 'Invalid Access Token'));
    if (req.path === '/mpesa/b2c/v3/paymentrequest' || req.path === '/mpesa/b2c/v1/paymentrequest') {
      const amount = body.Amount;
      const phone = typeof body.PartyB === 'string' || typeof body.PartyB === 'number' ? String(body.PartyB) : '';
      const originator = typeof body.OriginatorConversationID === 'string' ? body.OriginatorConversationID : '';
      if (body.PartyA !== o.shortcode) return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid PartyA'));
      if (!['BusinessPayment', 'SalaryPayment', 'PromotionPayment'].includes(String(body.CommandID))) {
        return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid CommandID'));
      }
      if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 10) {
        return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid Amount'));
      }
      if (!/^254[17]\d{8}$/.test(phone)) return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid PartyB'));
      if (typeof body.ResultURL !== 'string' || typeof body.QueueTimeOutURL !== 'string' || !originator) {
        return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid ResultURL'));
      }
      const again = [...payouts.values()].find((p) => p.originator === originator);
      const magic = /^254700(\d{6})$/.exec(phone);
      const code = magic ? String(Number(magic[1])) : '0';
      if (!again && (code === '17' || code === '26') && !busySeen.has(`${phone}:${originator}`)) {
        busySeen.add(`${phone}:${originator}`);
        return Promise.resolve(error(503, code, 'System is busy. Please try again in few minutes.'));
      }
      const credentialsValid = body.InitiatorName === o.initiatorName && body.SecurityCredential === o.securityCredential;
      // 2040: a code Paygate does not map (the credit party cannot take the payment).
      const known = ['0', '1', '1001', '1019', '1032', '1037', '2001', '2040'];
      const payout: Payout = again ?? {
        conversation: `AG_${new Date().toISOString().slice(0, 10).replace(/-/g, '')}_${randomBytes(10).toString('hex')}`,
        originator,
        phone,
        amount,
        resultCode: !credentialsValid ? '2001' : known.includes(code) ? code : '0',
        receipt: `SKL${randomBytes(4).toString('hex').toUpperCase()}`,
        settlesAt: Date.now() + (o.callbackDelayMs ?? 100),
        resultUrl: body.ResultURL,
      };
      if (again && faults.refuseDuplicates) {
        return Promise.resolve(error(409, '409.001.01', 'Duplicate OriginatorConversationID'));
      }
      const held = again || !fake.holdAnswer ? Promise.resolve() : fake.holdAnswer(originator);
      if (!again) {
        payouts.set(payout.conversation, payout);
        const sendResult = () => setTimeout(() => void post(payout.resultUrl, payoutResult(payout)), o.callbackDelayMs ?? 100).unref();
        if (!silentPhones.has(phone)) void held.then(sendResult);
      }
      const fault = again ? undefined : faults.afterExecuting.shift();
      if (fault === 'drop') return Promise.resolve({ status: 0, drop: true });
      if (fault === '5xx') return Promise.resolve(error(500, '500.003.02', 'Internal Server Error'));
      return held.then(() => ({
        status: 200,
        body: {
          ConversationID: payout.conversation,
          OriginatorConversationID: payout.originator,
          ResponseCode: '0',
          ResponseDescription: 'Accept the service request successfully.',
        },
      }));
    }
    if (req.path === '/mpesa/transactionstatus/v1/query') {
      if (body.Initiator !== o.initiatorName || body.SecurityCredential !== o.securityCredential) {
        return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid Initiator'));
      }
      if (body.CommandID !== 'TransactionStatusQuery' || body.PartyA !== o.shortcode || typeof body.ResultURL !== 'string') {
        return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid Request'));
      }
      const wanted = [body.OriginalConversationID, body.TransactionID].find((v): v is string => typeof v === 'string') ?? '';
      const payout = [...payouts.values()].find((p) => p.originator === wanted || p.conversation === wanted || p.receipt === wanted);
      if (!payout) return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid OriginalConversationID'));
      const resultUrl = body.ResultURL;
      const query = {
        ConversationID: `AG_${Date.now()}_${randomBytes(8).toString('hex')}`,
        OriginatorConversationID: `${randomBytes(4).toString('hex')}-${Date.now()}-1`,
      };
      setTimeout(() => void post(resultUrl, statusResult(payout, query)), Math.max(50, payout.settlesAt - Date.now())).unref();
      return Promise.resolve({
        status: 200,
        body: {
          ...query,
          ResponseCode: '0',
          ResponseDescription: 'Accept the service request successfully.',
        },
      });
    }
    if (req.path === '/mpesa/stkpush/v1/processrequest') {
      if (!passwordValid(body)) return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid Password'));
      const amount = body.Amount;
      const phone = typeof body.PhoneNumber === 'string' || typeof body.PhoneNumber === 'number' ? String(body.PhoneNumber) : '';
      const accountRef = typeof body.AccountReference === 'string' ? body.AccountReference : '';
      if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1) {
        return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid Amount'));
      }
      if (!/^254[17]\d{8}$/.test(phone) || accountRef.length > 12) {
        return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid PhoneNumber'));
      }
      const magic = /^254700(\d{6})$/.exec(phone);
      const code = magic ? String(Number(magic[1])) : '0';
      if ((code === '17' || code === '26') && !busySeen.has(`${phone}:${accountRef}`)) {
        busySeen.add(`${phone}:${accountRef}`);
        return Promise.resolve(error(503, code, 'System is busy. Please try again in few minutes.'));
      }
      const known = ['0', '1', '1001', '1019', '1025', '1032', '1037', '2001', '9999'];
      const push: Push = {
        checkout: `ws_CO_${Date.now()}${randomBytes(4).toString('hex')}`,
        merchant: `${randomBytes(3).toString('hex')}-${Date.now()}-1`,
        phone,
        accountReference: accountRef,
        resultCode: known.includes(code) ? code : '0',
        settlesAt: Date.now() + (o.callbackDelayMs ?? 100),
        callbackUrl: String(body.CallBackURL),
        amount,
      };
      pushes.set(push.checkout, push);
      if (!silentPhones.has(phone)) setTimeout(() => void sendCallback(push), o.callbackDelayMs ?? 100).unref();
      return Promise.resolve({
        status: 200,
        body: {
          MerchantRequestID: push.merchant,
          CheckoutRequestID: push.checkout,
          ResponseCode: '0',
          ResponseDescription: 'Success. Request accepted for processing',
          CustomerMessage: 'Success. Request accepted for processing',
        },
      });
    }
    if (req.path === '/mpesa/c2b/v1/registerurl' || req.path === '/mpesa/c2b/v2/registerurl') {
      const { ShortCode, ResponseType, ConfirmationURL, ValidationURL } = body;
      if (String(ShortCode) !== o.shortcode) return Promise.resolve(error(400, '400.003.01', 'Invalid ShortCode'));
      if (ResponseType !== 'Completed' && ResponseType !== 'Cancelled') {
        return Promise.resolve(error(400, '400.003.02', 'Bad Request - Invalid ResponseType'));
      }
      if (typeof ConfirmationURL !== 'string' || typeof ValidationURL !== 'string' || !/^https?:\/\//.test(ConfirmationURL)) {
        return Promise.resolve(error(400, '400.003.02', 'Bad Request - Invalid URL'));
      }
      c2b = { shortcode: o.shortcode, responseType: ResponseType, confirmationUrl: ConfirmationURL, validationUrl: ValidationURL };
      return Promise.resolve({
        status: 200,
        body: {
          OriginatorCoversationID: `${randomBytes(4).toString('hex')}-${Date.now()}-1`,
          ResponseCode: '0',
          ResponseDescription: 'Success',
        },
      });
    }
    if (req.path === '/mpesa/stkpushquery/v1/query') {
      if (!passwordValid(body)) return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid Password'));
      const push = pushes.get(String(body.CheckoutRequestID));
      if (!push) return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid CheckoutRequestID'));
      if (Date.now() < push.settlesAt) return Promise.resolve(error(500, '500.001.1001', 'The transaction is being processed'));
      return Promise.resolve({
        status: 200,
        body: {
          ResponseCode: '0',
          ResponseDescription: 'The service request has been accepted successsfully',
          MerchantRequestID: push.merchant,
          CheckoutRequestID: push.checkout,
          ResultCode: push.resultCode,
          ResultDesc: push.resultCode === '0' ? 'The service request is processed successfully.' : `Result ${push.resultCode}`,
        },
      });
    }
    return Promise.resolve(error(404, '404.001.01', 'Resource not found'));
  });
  const postJson = (url: string, body: unknown): Promise<unknown> =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then((r) => r.json())
      .catch((err: Error) => ({ error: err.message }));

  const payBill: FakeDaraja['payBill'] = async (p) => {
    if (!c2b) throw new Error('no paybill URLs registered yet');
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const transId = Array.from(randomBytes(10), (b) => letters[b % letters.length]).join('');
    const body = {
      TransactionType: 'Pay Bill',
      TransID: transId,
      TransTime: new Date(Date.now() + 3 * 3600 * 1000).toISOString().replace(/[-:T]/g, '').slice(0, 14),
      TransAmount: p.amount,
      BusinessShortCode: o.shortcode,
      BillRefNumber: p.billRef,
      InvoiceNumber: '',
      OrgAccountBalance: '1000000.00',
      ThirdPartyTransID: '',
      MSISDN: p.msisdn,
      FirstName: p.firstName ?? 'John',
      MiddleName: '',
      LastName: '',
    };
    c2bPayments.set(transId, { transId, amount: p.amount, billRef: p.billRef, msisdn: p.msisdn, firstName: body.FirstName });
    const validation = await postJson(c2b.validationUrl, body);
    const code = (validation as { ResultCode?: string | number }).ResultCode;
    const refused = code !== undefined && `${code}` !== '0';
    if (refused) c2bPayments.delete(transId);
    const confirmation = refused ? undefined : await postJson(c2b.confirmationUrl, body);
    await statusAnswered.get(transId);
    return { transId, validation, confirmation, body };
  };

  /**
   * M-Pesa posting a confirmation means M-Pesa took that payment: a receipt it had not taken yet (one whose
   * validation was refused, or never asked) is taken now. The answer comes back once Paygate has heard the
   * status result of any query it sent about the receipt.
   */
  const confirmAgain: FakeDaraja['confirmAgain'] = async (body) => {
    if (!c2b) throw new Error('no paybill URLs registered yet');
    const transId = text(body.TransID);
    if (!c2bPayments.has(transId)) {
      c2bPayments.set(transId, {
        transId,
        amount: text(body.TransAmount),
        billRef: text(body.BillRefNumber),
        msisdn: text(body.MSISDN),
        firstName: text(body.FirstName),
      });
    }
    statusAnswered.delete(transId);
    const answer = await postJson(c2b.confirmationUrl, body);
    await statusAnswered.get(transId);
    return answer;
  };

  const fake: FakeDaraja = {
    ...server,
    calls,
    pushes,
    payouts,
    posted,
    silentPhones,
    get c2b() {
      return c2b;
    },
    payBill,
    confirmAgain,
    faults,
    c2bPayments,
    holdAnswer: undefined,
    accounts,
    balance,
    providerWords: undefined,
  };
  return fake;
}
