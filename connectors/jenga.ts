import { createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import { ProviderClient, str } from './provider-http';
import {
  RailError,
  type AccountBalance,
  type Balances,
  type RailAccepted,
  type RailConnector,
  type RailErrorOutcome,
  type RailStatus,
  type RailSubmission,
  type BankStatementLine,
  type Statements,
} from './types';

/**
 * Equity Bank, the primary bank, through the Jenga API (v3): a merchant token, and on every protected call a
 * `signature` header, the base64 RSA-SHA256 signature with our private key over the fields Jenga documents
 * for that call, concatenated in their documented order. Send money goes out as an internal transfer,
 * PesaLink, RTGS (the order's route) or to a mobile wallet; transaction status, balance and mini statement
 * are read with the same token and signature.
 */

export interface JengaOptions {
  baseUrl: string;
  apiKey: string;
  merchantCode: string;
  consumerSecret: string;
  privateKeyPem: string;
  accountNumber: string;
  accountName: string;
  countryCode: string;
  primaryBankCode: string;
  fetchImpl?: typeof fetch;
}

export const JENGA_PATHS = {
  token: '/authentication/api/v3/authenticate/merchant',
  internal: '/v3-apis/transaction-api/v3.0/remittance/internalBankTransfer',
  pesalink: '/v3-apis/transaction-api/v3.0/remittance/pesalinkacc',
  rtgs: '/v3-apis/transaction-api/v3.0/remittance/rtgs',
  mobile: '/v3-apis/transaction-api/v3.0/remittance/sendmobile',
  status: '/v3-apis/transaction-api/v3.0/transactions/details',
  balance: '/v3-apis/account-api/v3.0/accounts/balances',
  miniStatement: '/v3-apis/account-api/v3.0/accounts/miniStatement',
} as const;

export type JengaTransferKind = 'internal' | 'pesalink' | 'rtgs' | 'mobile';

export interface JengaTransferBody {
  source: { countryCode: string; name: string; accountNumber: string };
  destination: {
    type: 'bank' | 'mobile';
    countryCode: string;
    name: string;
    bankCode?: string;
    accountNumber?: string;
    mobileNumber?: string;
    walletName?: string;
  };
  transfer: { type: string; amount: string; currencyCode: string; reference: string; date: string; description: string };
}

/** The text Jenga signs for each call, in its documented field order. */
export function jengaSignedText(kind: JengaTransferKind, b: JengaTransferBody): string {
  const { source: s, destination: d, transfer: t } = b;
  switch (kind) {
    case 'internal':
      return `${s.accountNumber}${t.amount}${t.currencyCode}${t.reference}`;
    case 'pesalink':
      return `${t.amount}${t.currencyCode}${t.reference}${d.name}${s.accountNumber}`;
    case 'rtgs':
      return `${t.reference}${t.date}${s.accountNumber}${d.accountNumber ?? ''}${t.amount}`;
    case 'mobile':
      return `${t.amount}${t.currencyCode}${t.reference}${s.accountNumber}`;
  }
}

export const signJenga = (key: KeyObject | string, text: string): string => createSign('RSA-SHA256').update(text).sign(key, 'base64');

/**
 * Jenga wants a 12-digit numeric reference. Ours is a number Paygate hands out once (a database sequence),
 * recorded on the order before the transfer is first sent, so no two transfers ever share one and every
 * resubmission of a transfer repeats its own.
 */
export function jengaReference(serial: string): string {
  if (!/^\d{1,12}$/.test(serial)) throw new RailError('invalid_reference', `no 12-digit Jenga reference from ${serial}`, false);
  return serial.padStart(12, '0');
}

/** Jenga's answer to a transfer whose reference it already has: the earlier request was received. */
const DUPLICATE = /duplicate|already (been )?(processed|exists|used)/i;

/**
 * What a payer or merchant is told of each refusal or failure, by our failure code: never the bank's own
 * words (docs/conventions.md#errors), which are logged with the order.
 */
const JENGA_REASONS: Record<string, string> = {
  signature_rejected: 'the bank refused our request signature',
  duplicate_request: 'the bank already has a transfer with this reference',
  insufficient_funds: 'the bank account has too little money for the transfer',
  account_not_found: 'the beneficiary bank could not credit the account',
  bank_rejected: 'the bank failed the transfer',
};

/** Our failure code for the bank's words: funds, the beneficiary's account, or `otherwise`. */
const jengaFailureCode = (text: string, otherwise: string): string =>
  /insufficient/i.test(text) ? 'insufficient_funds' : /account/i.test(text) ? 'account_not_found' : otherwise;

export class JengaConnector implements RailConnector, Balances, Statements {
  readonly name = 'jenga';
  private readonly key: KeyObject;
  private readonly client: ProviderClient;

  constructor(private readonly options: JengaOptions) {
    this.key = createPrivateKey(options.privateKeyPem);
    this.client = new ProviderClient('Jenga', options.baseUrl, options.fetchImpl ?? fetch, async (client) => {
      const res = await client.request(JENGA_PATHS.token, {
        method: 'POST',
        headers: { 'api-key': options.apiKey },
        body: { merchantCode: options.merchantCode, consumerSecret: options.consumerSecret },
      });
      const value = str(res.body.accessToken);
      if (res.status !== 200 || !value) {
        throw new RailError(
          'provider_auth_failed',
          'the bank refused our credentials',
          res.status >= 500,
          undefined,
          'refused',
          str(res.body.message) ?? `HTTP ${res.status}`,
        );
      }
      const expiresIn = Date.parse(str(res.body.expiresIn) ?? '');
      return { value, expiresAt: Number.isFinite(expiresIn) ? expiresIn - 60_000 : Date.now() + 10 * 60_000 };
    });
  }

  /** A signed call; a 401 for the signature keeps the token, which is not what was refused. */
  private call(method: 'GET' | 'POST', path: string, signedText: string, body?: unknown) {
    return this.client.authorised(method, path, { signature: signJenga(this.key, signedText) }, body, (res) =>
      /signature/i.test(str(res.body.message) ?? ''),
    );
  }

  /**
   * Jenga's refusal as a RailError. For a transfer (`sending`), a 5xx may come after the bank executed it
   * (its outcome is unknown), and a refusal as a duplicate means an earlier request with the reference was
   * received: both are asked about, never read as the transfer's failure.
   */
  private refusal(res: { status: number; body: Record<string, unknown> }, what: string, sending = false): RailError {
    const text = str(res.body.message) ?? `HTTP ${res.status}`;
    const code = str(res.body.code);
    const error = (failureCode: string, message: string, retryable = false, outcome: RailErrorOutcome = 'refused') =>
      new RailError(failureCode, message, retryable, code, outcome, text);
    if (/signature/i.test(text)) return error('signature_rejected', JENGA_REASONS.signature_rejected);
    if (sending && DUPLICATE.test(text)) return error('duplicate_request', JENGA_REASONS.duplicate_request, false, 'duplicate');
    if (res.status >= 500 || res.status === 429 || res.status === 401) {
      const unknown = sending && res.status >= 500;
      return error('provider_unavailable', `the bank could not ${what} now`, true, unknown ? 'unknown' : 'refused');
    }
    const failureCode = jengaFailureCode(text, 'provider_rejected');
    return error(failureCode, JENGA_REASONS[failureCode] ?? `the bank refused to ${what}`);
  }

  private routeOf(s: RailSubmission): JengaTransferKind {
    if (s.method === 'mobile_money') return 'mobile';
    if (s.route) return s.route;
    return s.destination.bank_code === this.options.primaryBankCode ? 'internal' : 'rtgs';
  }

  async submit(s: RailSubmission): Promise<RailAccepted> {
    if (s.method === 'crypto') throw new RailError('method_unavailable', 'the bank does not carry crypto transfers', false);
    const kind = this.routeOf(s);
    const reference = s.reference;
    if (!reference || !/^\d{12}$/.test(reference)) {
      throw new RailError('invalid_reference', 'a Jenga transfer needs the 12-digit reference recorded for it', false);
    }
    const d = s.destination;
    const body: JengaTransferBody = {
      source: { countryCode: this.options.countryCode, name: this.options.accountName, accountNumber: this.options.accountNumber },
      destination:
        kind === 'mobile'
          ? {
              type: 'mobile',
              countryCode: 'KE',
              name: d.account_name ?? 'Beneficiary',
              mobileNumber: (d.phone ?? '').replace(/^\+254/, '0'),
              walletName: d.provider === 'airtel_money' ? 'Airtel' : 'Mpesa',
            }
          : { type: 'bank', countryCode: 'KE', name: d.account_name ?? '', bankCode: d.bank_code, accountNumber: d.account_number },
      transfer: {
        type: { internal: 'InternalFundsTransfer', pesalink: 'PesaLink', rtgs: 'RTGS', mobile: 'MobileWallet' }[kind],
        amount: s.amount,
        currencyCode: s.currency,
        reference,
        date: new Date().toISOString().slice(0, 10),
        description: (s.description ?? 'Paygate payment').slice(0, 60),
      },
    };
    const res = await this.call('POST', JENGA_PATHS[kind], jengaSignedText(kind, body), body);
    if (res.status === 200 || res.status === 201) return { reference };
    throw this.refusal(res, 'send the money', true);
  }

  clientReference(_orderId: string, serial: string): string {
    return jengaReference(serial);
  }

  async status(reference: string): Promise<RailStatus> {
    const res = await this.call('GET', `${JENGA_PATHS.status}/${encodeURIComponent(reference)}`, reference);
    if (res.status === 404) return { state: 'pending', reference };
    if (res.status !== 200) throw this.refusal(res, 'tell the transfer status');
    const data = (res.body.data ?? {}) as Record<string, unknown>;
    const state = (str(data.status) ?? '').toUpperCase();
    if (state === 'SUCCESS' || state === 'COMPLETED') return { state: 'succeeded', reference, providerCode: str(data.transactionId) };
    if (state === 'FAILED' || state === 'REVERSED') {
      const providerText = str(data.description) ?? str(res.body.message);
      const failureCode = jengaFailureCode(providerText ?? '', 'bank_rejected');
      return { state: 'failed', reference, failureCode, reason: JENGA_REASONS[failureCode], ...(providerText ? { providerText } : {}) };
    }
    return { state: 'pending', reference };
  }

  async balance(): Promise<AccountBalance> {
    const { countryCode: cc, accountNumber: account } = this.options;
    const res = await this.call('GET', `${JENGA_PATHS.balance}/${cc}/${account}`, `${cc}${account}`);
    if (res.status !== 200) throw this.refusal(res, 'read the balance');
    const data = (res.body.data ?? {}) as { currency?: string; balances?: { amount: string; type: string }[] };
    const of = (type: string) => data.balances?.find((b) => b.type.toLowerCase() === type)?.amount ?? '0.00';
    return { currency: data.currency ?? 'KES', available: of('available'), current: of('current') };
  }

  async miniStatement(): Promise<BankStatementLine[]> {
    const { countryCode: cc, accountNumber: account } = this.options;
    const res = await this.call('GET', `${JENGA_PATHS.miniStatement}/${cc}/${account}`, `${cc}${account}`);
    if (res.status !== 200) throw this.refusal(res, 'read the statement');
    const data = (res.body.data ?? {}) as { transactions?: Record<string, unknown>[] };
    return (data.transactions ?? []).map((t) => ({
      date: str(t.date) ?? '',
      amount: str(t.amount) ?? '0.00',
      description: str(t.description) ?? '',
      type: str(t.type) === 'Credit' ? 'Credit' : 'Debit',
      reference: str(t.reference) ?? str(t.chequeNumber) ?? null,
    }));
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
