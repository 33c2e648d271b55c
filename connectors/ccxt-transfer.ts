import { componentLogger } from '../platform/logger';
import { loadCcxt } from './exchanges';
import {
  RailError,
  type DepositAddresses,
  type ExchangeDeposit,
  type ExchangeWithdrawal,
  type Holdings,
  type RailAccepted,
  type RailConnector,
  type RailErrorOutcome,
  type RailStatus,
  type RailStatusHint,
  type RailSubmission,
  type ReceivedDeposits,
  type SentWithdrawals,
} from './types';

const log = componentLogger('ccxt');

export type { ExchangeDeposit };

/**
 * Crypto transfers through ccxt: a withdrawal from Paygate's account at one exchange (CCXT_EXCHANGE, keys
 * from config) to an address on a network, or to an account at another exchange (`account_ref`, the
 * deposit address or account id that exchange gave). The exchange's sandbox (testnet) is used when
 * CCXT_SANDBOX is set and the exchange has one; CCXT_API_URL moves every API base URL of the exchange to
 * another origin, keeping each URL's path (a proxy, or a local stand-in of the exchange). A transfer to an
 * exchange the catalogue shows in maintenance is held back and retried, like the exchange's own maintenance.
 */

/** The slice of a ccxt exchange the connector uses. */
export interface CcxtTransferExchange {
  has: Record<string, unknown>;
  urls: Record<string, unknown>;
  setSandboxMode(enabled: boolean): void;
  loadMarkets(): Promise<unknown>;
  /** The amount as the exchange will send it: rounded to the currency's (or the network's) withdrawal step. */
  currencyToPrecision(code: string, amount: string, networkCode?: string): string | undefined;
  /**
   * ccxt types `amount` as a number, but its exchanges serialise it through `currencyToPrecision`, which
   * takes a decimal string as it is (binance: `request.amount = currencyToPrecision(code, amount, network)`).
   * A string keeps every digit; a JS number cannot hold `0.123456789012345678`.
   */
  withdraw(
    code: string,
    amount: string,
    address: string,
    tag?: string,
    params?: Record<string, unknown>,
  ): Promise<{ id?: string; status?: string }>;
  fetchWithdrawals(
    code?: string,
    since?: number,
    limit?: number,
    params?: Record<string, unknown>,
  ): Promise<{ id?: string; status?: string; currency?: string; timestamp?: number; info?: unknown }[]>;
  /** Present on exchanges that look one withdrawal up by id (`has.fetchWithdrawal`). */
  fetchWithdrawal?(id: string, code?: string): Promise<{ id?: string; status?: string }>;
  fetchStatus(): Promise<{ status?: string }>;
  /** The account's deposit address for a currency (on `params.network` when given). */
  fetchDepositAddress(code: string, params?: Record<string, unknown>): Promise<{ address?: string; tag?: string; network?: string }>;
  /** The account's balances. ccxt's unified figures are floats: the exact ones are read from `info`. */
  fetchBalance(params?: Record<string, unknown>): Promise<{ info?: unknown }>;
  /** Deposits into the account. ccxt's `amount` is a float: the exact figure is read from `info`. */
  fetchDeposits(
    code?: string,
    since?: number,
    limit?: number,
    params?: Record<string, unknown>,
  ): Promise<
    {
      id?: string;
      txid?: string;
      address?: string;
      status?: string;
      currency?: string;
      tag?: string;
      network?: string;
      timestamp?: number;
      info?: unknown;
    }[]
  >;
}

export interface CcxtTransferOptions {
  exchange: string;
  apiKey: string;
  secret: string;
  sandbox: boolean;
  apiUrl?: string;
  network?: string;
  /** The catalogue status of a destination exchange (`ok`, `maintenance`, …), null when it is not listed. */
  destinationStatus?: (exchangeId: string) => Promise<string | null>;
  /** Builds the exchange client; ccxt by default (tests pass a double). */
  create?: (id: string, options: Record<string, unknown>) => CcxtTransferExchange;
}

/**
 * ccxt's error classes, most specific first: the failure code, whether it is retried, and what it tells of a
 * withdrawal it answered. A timeout or an unavailable exchange (a 5xx) may come after the exchange took the
 * withdrawal; rate limits and maintenance are refusals before it.
 */
const ERROR_MAP: [string, string, boolean, RailErrorOutcome][] = [
  ['InsufficientFunds', 'insufficient_funds', false, 'refused'],
  ['InvalidAddress', 'invalid_address', false, 'refused'],
  ['AuthenticationError', 'provider_auth_failed', false, 'refused'],
  ['PermissionDenied', 'provider_auth_failed', false, 'refused'],
  ['OnMaintenance', 'exchange_unavailable', true, 'refused'],
  ['RateLimitExceeded', 'exchange_unavailable', true, 'refused'],
  ['DDoSProtection', 'exchange_unavailable', true, 'refused'],
  ['RequestTimeout', 'exchange_unavailable', true, 'unknown'],
  ['ExchangeNotAvailable', 'exchange_unavailable', true, 'unknown'],
  ['NetworkError', 'exchange_unavailable', true, 'unknown'],
  ['OperationFailed', 'exchange_unavailable', true, 'unknown'],
];

/** An exchange's refusal of a withdrawal whose client id it already has: the earlier request was received. */
const DUPLICATE = /duplicat/i;

/** What a payer or staff member is told of each refusal: never the exchange's own words. */
const NEUTRAL: Record<string, string> = {
  duplicate_request: 'the exchange already has this withdrawal',
  insufficient_funds: 'the exchange account has too little of the currency',
  invalid_address: 'the exchange refused the destination address',
  provider_auth_failed: 'the exchange refused our credentials or request signature',
  exchange_unavailable: 'the exchange could not be reached or is not taking requests now',
  provider_rejected: 'the exchange refused the request',
};

/**
 * A ccxt error as a rail error: by ccxt's error class (and its ancestors), most specific first. The
 * exchange's own text (which may name our account, its keys' rights or its addresses) goes to the log only;
 * the error's message, which may reach an order's `failure_reason`, is a neutral one (docs/conventions.md#errors).
 */
export function ccxtRailError(err: unknown): RailError {
  const message = err instanceof Error ? err.message : String(err);
  const names = new Set<string>();
  for (let proto: unknown = err && Object.getPrototypeOf(err); proto; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: string } }).constructor?.name;
    if (name) names.add(name);
  }
  const railError = (failureCode: string, retryable: boolean, outcome?: RailErrorOutcome): RailError => {
    log.warn({ failureCode, providerError: message }, 'the exchange refused a request');
    return new RailError(failureCode, NEUTRAL[failureCode] ?? NEUTRAL.provider_rejected, retryable, undefined, outcome, message);
  };
  if (DUPLICATE.test(message)) return railError('duplicate_request', false, 'duplicate');
  for (const [name, failureCode, retryable, outcome] of ERROR_MAP) {
    if (names.has(name)) return railError(failureCode, retryable, outcome);
  }
  // ccxt picks some exchanges' error classes by API host, so through CCXT_API_URL a refusal can arrive as a
  // plain ExchangeError: its message still tells.
  if (/insufficient (balance|funds)|balance (is )?(not enough|insufficient)/i.test(message)) return railError('insufficient_funds', false);
  return railError('provider_rejected', false);
}

/** A decimal string without insignificant zeros (`"1.50"` → `"1.5"`, `"2.0"` → `"2"`), to compare amounts. */
const canonicalDecimal = (value: string): string => {
  const [whole, fraction = ''] = value.trim().split('.');
  const digits = fraction.replace(/0+$/, '');
  return `${whole.replace(/^0+(?=\d)/, '')}${digits ? `.${digits}` : ''}`;
};

/**
 * The ledger's amount as the decimal string the exchange is asked to send, never rounded: when the
 * exchange's withdrawal step for the currency cannot carry it exactly, the transfer is refused (the payer
 * was debited this amount, so nothing else may leave).
 */
export async function exactWithdrawalAmount(
  exchange: CcxtTransferExchange,
  code: string,
  amount: string,
  network?: string,
): Promise<string> {
  await exchange.loadMarkets();
  const sent = exchange.currencyToPrecision(code, amount, network);
  if (sent !== undefined && canonicalDecimal(sent) !== canonicalDecimal(amount)) {
    throw new RailError(
      'invalid_amount',
      `the exchange withdraws ${code} only in coarser steps: ${amount} would be sent as ${sent}`,
      false,
    );
  }
  return amount;
}

/** The withdrawal parameter each exchange deduplicates on; others get ccxt's `clientOrderId`. */
const WITHDRAW_ID_PARAM: Record<string, string> = { binance: 'withdrawOrderId' };

/**
 * The withdrawal-history parameters that select one withdrawal by id, for exchanges whose ccxt client has no
 * `fetchWithdrawal`: Binance's history takes `idList` (it otherwise answers only its latest page).
 */
const WITHDRAWAL_BY_ID_PARAMS: Record<string, (id: string) => Record<string, unknown>> = { binance: (id) => ({ idList: id }) };

/** The withdrawal-history parameters that select a withdrawal by the client id it was sent with. */
const WITHDRAWAL_BY_CLIENT_ID_PARAMS: Record<string, (id: string) => Record<string, unknown>> = {
  binance: (id) => ({ withdrawOrderId: id }),
};

/** The client id a withdrawal was sent with, as the exchange's raw record writes it. */
const clientIdOf = (w: { info?: unknown }): string | undefined => {
  const info = (w.info ?? {}) as Record<string, unknown>;
  const id = info.withdrawOrderId ?? info.clientOrderId ?? info.client_oid ?? info.clientId;
  return typeof id === 'string' ? id : undefined;
};

/**
 * How each exchange writes its balances in the raw answer to `fetchBalance` (ccxt's `info`): per asset, the
 * decimal strings that add up to what the account holds. Binance's spot account lists `free` and `locked`.
 */
const RAW_BALANCES: Record<string, (info: unknown) => Map<string, string[]>> = {
  binance: (info) => {
    const out = new Map<string, string[]>();
    const balances = (info as { balances?: unknown } | undefined)?.balances;
    for (const b of Array.isArray(balances) ? (balances as Record<string, unknown>[]) : []) {
      const text = (v: unknown) => (typeof v === 'string' ? v : '');
      if (typeof b.asset === 'string') out.set(b.asset, [text(b.free), text(b.locked)]);
    }
    return out;
  },
};

/** A withdrawal's unified status as the transfer's: `ok` paid, `failed`/`canceled` failed, else pending. */
function withdrawalStatus(reference: string, found: { status?: string } | undefined): RailStatus {
  if (!found) return { state: 'pending', reference };
  if (found.status === 'ok') return { state: 'succeeded', reference };
  if (found.status === 'failed' || found.status === 'canceled') {
    return { state: 'failed', reference, failureCode: 'exchange_rejected', reason: `the exchange marked the withdrawal ${found.status}` };
  }
  return { state: 'pending', reference };
}

/** Every URL under `urls` moved to `base`'s origin, keeping its path (`https://api.x.com/sapi/v1` → `<base>/sapi/v1`). */
export function pointUrls(urls: unknown, base: string): unknown {
  if (typeof urls === 'string') {
    const origin = base.replace(/\/+$/, '');
    return /^[a-z]+:\/\/[^/]+/i.test(urls) ? urls.replace(/^[a-z]+:\/\/[^/]+/i, origin) : origin;
  }
  if (Array.isArray(urls)) return urls.map((u) => pointUrls(u, base));
  if (urls && typeof urls === 'object') return Object.fromEntries(Object.entries(urls).map(([k, v]) => [k, pointUrls(v, base)]));
  return urls;
}

export class CcxtTransferConnector implements RailConnector, Holdings, DepositAddresses, ReceivedDeposits, SentWithdrawals {
  readonly name = 'ccxt';
  private client: CcxtTransferExchange | undefined;

  constructor(private readonly options: CcxtTransferOptions) {}

  private exchange(): CcxtTransferExchange {
    if (this.client) return this.client;
    const create =
      this.options.create ??
      ((id: string, opts: Record<string, unknown>) => {
        const ctor = loadCcxt()[id];
        if (typeof ctor !== 'function') throw new RailError('method_unavailable', `ccxt has no exchange "${id}"`, false);
        return new (ctor as new (o: Record<string, unknown>) => CcxtTransferExchange)(opts);
      });
    const client = create(this.options.exchange, {
      apiKey: this.options.apiKey,
      secret: this.options.secret,
      enableRateLimit: true,
      timeout: 15_000,
    });
    if (this.options.sandbox && client.urls.test) client.setSandboxMode(true);
    if (this.options.apiUrl) client.urls.api = pointUrls(client.urls.api, this.options.apiUrl);
    this.client = client;
    return client;
  }

  async submit(s: RailSubmission): Promise<RailAccepted> {
    const d = s.destination;
    const address = d.address ?? d.account_ref;
    if (!address) throw new RailError('invalid_address', 'no address or account to send to', false);
    const network = d.network ?? this.options.network;
    if (d.exchange_id && this.options.destinationStatus) {
      const status = await this.options.destinationStatus(d.exchange_id);
      if (status === 'maintenance') {
        throw new RailError('exchange_unavailable', `${d.exchange_id} is in maintenance: its deposits are held back`, true);
      }
    }
    let amount: string;
    try {
      amount = await exactWithdrawalAmount(this.exchange(), s.currency, s.amount, network);
    } catch (err) {
      // Nothing has been asked of the exchange's withdrawals yet: whatever failed, nothing left.
      const e = err instanceof RailError ? err : ccxtRailError(err);
      throw new RailError(e.failureCode, e.message, e.retryable, e.providerCode, 'refused', e.providerText);
    }
    try {
      const exchange = this.exchange();
      const result = await exchange.withdraw(s.currency, amount, address, undefined, {
        ...(network ? { network } : {}),
        [WITHDRAW_ID_PARAM[this.options.exchange] ?? 'clientOrderId']: s.reference ?? s.idempotencyKey,
      });
      if (!result.id) throw new RailError('provider_rejected', 'the exchange gave no withdrawal id', false);
      return { reference: result.id };
    } catch (err) {
      throw err instanceof RailError ? err : ccxtRailError(err);
    }
  }

  /**
   * The withdrawal looked up by its id: with `fetchWithdrawal` where the exchange has it, else in the history
   * filtered to the transfer (by id where the exchange allows it, and by currency and time), never by scanning
   * an unfiltered first page, which an account with many withdrawals would push the transfer out of.
   */
  async status(reference: string, hint: RailStatusHint = {}): Promise<RailStatus> {
    if (hint.referenceIsOurs) return this.statusByClientId(reference, hint);
    let found: { id?: string; status?: string } | undefined;
    try {
      const exchange = this.exchange();
      if (exchange.has.fetchWithdrawal && exchange.fetchWithdrawal) {
        found = await exchange.fetchWithdrawal(reference, hint.currency);
      } else {
        const byId = WITHDRAWAL_BY_ID_PARAMS[this.options.exchange]?.(reference) ?? {};
        const since = hint.since === undefined ? undefined : hint.since - 60_000;
        found = (await exchange.fetchWithdrawals(hint.currency, since, undefined, byId)).find((w) => w.id === reference);
      }
    } catch (err) {
      throw ccxtRailError(err);
    }
    return withdrawalStatus(reference, found);
  }

  /**
   * A withdrawal whose answer was lost, looked up by the client id it was sent with (`reference`), in the
   * history since the order: the exchange's id is the reference of the answer. Not found is not an answer.
   */
  private async statusByClientId(clientId: string, hint: RailStatusHint): Promise<RailStatus> {
    let found: { id?: string; status?: string; info?: unknown } | undefined;
    try {
      const byClientId = WITHDRAWAL_BY_CLIENT_ID_PARAMS[this.options.exchange]?.(clientId) ?? {};
      const since = hint.since === undefined ? undefined : hint.since - 60_000;
      const list = await this.exchange().fetchWithdrawals(hint.currency, since, undefined, byClientId);
      found = list.find((w) => clientIdOf(w) === clientId);
    } catch (err) {
      throw ccxtRailError(err);
    }
    if (!found?.id) return { state: 'pending', reference: clientId };
    return withdrawalStatus(found.id, found);
  }

  /**
   * Paygate's deposit address at the exchange for a currency (and network, when given, else the configured
   * one). The exchange's own tag, for currencies that need one, is returned as it gave it.
   */
  async depositAddress(code: string, network?: string): Promise<{ address: string; network: string | null; tag: string | null }> {
    const onNetwork = network ?? this.options.network;
    try {
      const found = await this.exchange().fetchDepositAddress(code, onNetwork ? { network: onNetwork } : {});
      if (!found.address) throw new RailError('provider_rejected', `the exchange gave no ${code} deposit address`, false);
      return { address: found.address, network: onNetwork ?? found.network ?? null, tag: found.tag ?? null };
    } catch (err) {
      throw err instanceof RailError ? err : ccxtRailError(err);
    }
  }

  /**
   * Deposits into the exchange account since `since` (ms), every currency. The amount is the exchange's own
   * decimal string from the raw record (`info.amount`), since ccxt's unified `amount` is a float.
   */
  async deposits(since: number): Promise<ExchangeDeposit[]> {
    let found: Awaited<ReturnType<CcxtTransferExchange['fetchDeposits']>>;
    try {
      found = await this.exchange().fetchDeposits(undefined, since);
    } catch (err) {
      throw ccxtRailError(err);
    }
    return found.flatMap((d) => {
      if (!d.txid || !d.currency) return [];
      const info = (d.info ?? {}) as Record<string, unknown>;
      const raw = (key: string) => (typeof info[key] === 'string' && info[key] !== '' ? info[key] : null);
      return [
        {
          txid: d.txid,
          id: typeof d.id === 'string' && d.id !== '' ? d.id : null,
          address: typeof d.address === 'string' && d.address !== '' ? d.address : raw('address'),
          currency: d.currency,
          amount: raw('amount'),
          status: d.status ?? 'pending',
          tag: d.tag ?? null,
          network: d.network ?? raw('network'),
          fromAddress: raw('sourceAddress'),
          at: d.timestamp ?? null,
        },
      ];
    });
  }

  /**
   * Withdrawals from the exchange account since `since` (ms), every currency, as the exchange records them
   * (docs/wallets.md#reconciliation-line-by-line). The amount is the exchange's own decimal string from the
   * raw record (`info.amount`), since ccxt's unified `amount` is a float.
   */
  async withdrawals(since: number): Promise<ExchangeWithdrawal[]> {
    let found: Awaited<ReturnType<CcxtTransferExchange['fetchWithdrawals']>>;
    try {
      found = await this.exchange().fetchWithdrawals(undefined, since);
    } catch (err) {
      throw ccxtRailError(err);
    }
    return found.flatMap((w) => {
      if (!w.id || !w.currency) return [];
      const info = (w.info ?? {}) as Record<string, unknown>;
      const amount = typeof info.amount === 'string' && info.amount !== '' ? info.amount : null;
      return [{ id: w.id, currency: w.currency, amount, status: w.status ?? 'pending', at: w.timestamp ?? null }];
    });
  }

  /**
   * What the exchange account holds, per asset, as the exchange's own decimal strings (to be added up: free
   * and locked). Null for an exchange whose raw balance format is not known here, since ccxt's unified
   * balance is made of floats. An asset missing from the answer holds nothing.
   */
  async exactBalances(): Promise<Map<string, string[]> | null> {
    const read = RAW_BALANCES[this.options.exchange];
    if (!read) return null;
    try {
      return read((await this.exchange().fetchBalance()).info);
    } catch (err) {
      throw ccxtRailError(err);
    }
  }

  async health(): Promise<'up' | 'down'> {
    try {
      const exchange = this.exchange();
      if (!exchange.has.fetchStatus) return 'up';
      const status = await exchange.fetchStatus();
      return status.status === 'ok' ? 'up' : 'down';
    } catch {
      return 'down';
    }
  }
}
