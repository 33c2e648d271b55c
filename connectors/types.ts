import type { BankRoute } from '../domain/discovery/routing';
import type { Currency } from '../domain/money';

export type RailMethod = 'bank_transfer' | 'mobile_money' | 'crypto';

export interface RailSubmission {
  /** The business key: providers must treat a repeated submission with the same key as the same transfer. */
  idempotencyKey: string;
  orderId: string;
  method: RailMethod;
  /** Decimal string with the currency's scale. */
  amount: string;
  currency: Currency;
  destination: Record<string, string>;
  description: string | null;
  /**
   * `payout` (the default): Paygate sends the money to the destination. `collection`: Paygate takes it from
   * the destination (a payer's phone); only M-Pesa collects, by STK Push.
   */
  direction?: 'payout' | 'collection';
  /** How a bank transfer travels, when the order chose it; the rail picks one from the destination otherwise. */
  route?: BankRoute;
  /**
   * The reference the rail will see, recorded by the caller before the request leaves (`clientReference`
   * of the connector, else the order id) and the same on every resubmission, so that the rail can tell a
   * repeat and Paygate can ask about it when the answer is lost.
   */
  reference?: string;
}

/** The kinds of request a rail answers later, at a URL we gave it (M-Pesa: an STK Push, a B2C payout). */
export type RailRequestKind = 'stk' | 'b2c';

/**
 * What a rail said when it accepted a request it answers later: the caller records it with the rail's
 * reference, so that the answer can be matched to the request and a status query can name it.
 */
export interface RailRequest {
  kind: RailRequestKind;
  /** The rail's own reference (CheckoutRequestID, ConversationID). */
  providerReference: string;
  /** The other id the rail echoes with its answer (MerchantRequestID, OriginatorConversationID). */
  merchantReference: string | null;
}

export interface RailAccepted {
  reference: string;
  /** Present when the rail answers later: for the caller to record (connectors write nothing of ours). */
  request?: RailRequest;
}

export type RailOutcome =
  | { state: 'succeeded'; reference: string; providerCode?: string }
  | {
      state: 'failed';
      reference: string;
      failureCode: string;
      /** Ours, neutral and stable: what the payer and the merchant read (docs/conventions.md#errors). */
      reason: string;
      providerCode?: string;
      /** The rail's own words, for the log only (see `RailError.providerText`). */
      providerText?: string;
    };

/**
 * What a status query learnt that the caller records: the rail's result for the request (`result`), or the
 * ids of a status query the rail will answer later at our URL (`statusQuery`), whose answer is taken only
 * with those ids.
 */
export type RailStatusFacts =
  | { result: { resultCode: string; resultDesc: string | null } }
  | {
      statusQuery: { conversationId: string; originatorConversationId: string };
      /**
       * A request to record as the one the query asks about, when none was (the submission's answer was
       * lost), so that the query's answer has a request to resolve.
       */
      request?: RailRequest;
    };

export type RailStatus = (RailOutcome | { state: 'pending'; reference: string }) & { facts?: RailStatusFacts };

/**
 * What a failed request tells about the transfer: `refused`, the rail definitely did not take it (a
 * validation error, busy, maintenance, a request that never left); `unknown`, it may have been executed (a
 * timeout, a dropped connection, a 5xx); `duplicate`, the rail refused it as a repeat of one it already has,
 * which means an earlier request was received. Only `refused` lets a payment fail: the others are asked
 * about until the rail answers (docs/payments.md#unknown-outcomes).
 */
export type RailErrorOutcome = 'refused' | 'unknown' | 'duplicate';

/**
 * A rail refused or could not take a transfer. `retryable` errors (provider busy, maintenance, network)
 * are retried by the activity's retry policy; the others fail the payment with `failureCode`, unless
 * `outcome` says the transfer may have happened. The message is ours, neutral and stable, since it may
 * become an order's `failure_reason`; the provider's own text (which may name our account, its settings or
 * the beneficiary) is `providerText`, which goes to the log with the order id and nowhere else
 * (docs/conventions.md#errors).
 */
export class RailError extends Error {
  constructor(
    readonly failureCode: string,
    message: string,
    readonly retryable: boolean,
    readonly providerCode?: string,
    readonly outcome: RailErrorOutcome = 'refused',
    readonly providerText?: string,
  ) {
    super(message);
    this.name = retryable ? 'RailUnavailable' : 'RailRejected';
  }
}

/** What Paygate knows of a submitted transfer, for providers that look transfers up by more than the reference. */
export interface RailStatusHint {
  currency?: string;
  /** Epoch milliseconds no later than the submission (the order's creation). */
  since?: number;
  /** The request as the caller recorded it, with its result once one came; rails that answer later need it. */
  request?: RecordedRailRequest;
  /**
   * The submission's answer never came (a timeout, a 5xx, a refusal as a duplicate): `reference` is our own
   * (the submission's `reference`), not the rail's, and the transfer is looked up by it.
   */
  referenceIsOurs?: boolean;
}

export interface RecordedRailRequest extends RailRequest {
  orderId: string;
  status: 'pending' | 'succeeded' | 'failed';
  resultCode: string | null;
  resultDesc: string | null;
}

// ---------------------------------------------------------------------------------------------
// Capabilities: what a rail can do, one interface each. The registry hands out each one where the rail
// configured for it has it, so no caller asks which connector class it holds.

/** Send money to a destination. */
export interface Payouts {
  readonly name: string;
  submit(submission: RailSubmission): Promise<RailAccepted>;
  /**
   * The reference the rail will see for an order's transfer, given a number never handed out before: for
   * rails whose reference is ours to choose in their own format. Without it, the order id is the reference.
   */
  clientReference?(orderId: string, serial: string): string;
}

/** Ask what became of a transfer; `hint` narrows the provider-side lookup where a provider needs it. */
export interface StatusQueries {
  readonly name: string;
  status(reference: string, hint?: RailStatusHint): Promise<RailStatus>;
}

/** Take money from a payer's phone (M-Pesa's STK Push): the submission's destination is the payer. */
export interface Collections extends StatusQueries {
  collect(submission: RailSubmission): Promise<RailAccepted>;
}

/** One interface for every rail: sandbox connectors and real ones (Jenga, Daraja, ccxt) alike. */
export interface RailConnector extends Payouts, StatusQueries {
  health(): Promise<'up' | 'down'>;
}

export interface AccountBalance {
  currency: string;
  available: string;
  current: string;
}

/** The balance of our account at a bank. */
export interface Balances {
  readonly name: string;
  balance(): Promise<AccountBalance>;
}

/**
 * Ask a rail for our balance when it answers later, at a URL we give it (M-Pesa's Account Balance): the
 * answer is taken only with the ids returned.
 */
export interface BalanceQueries {
  readonly name: string;
  queryBalance(queryId: string): Promise<{ conversationId: string; originatorConversationId: string }>;
}

export interface BankStatementLine {
  date: string;
  amount: string;
  description: string;
  type: 'Debit' | 'Credit';
  reference: string | null;
}

/** The recent lines of our account's statement at a bank. */
export interface Statements {
  readonly name: string;
  miniStatement(): Promise<BankStatementLine[]>;
}

/** What an exchange account holds, per asset, as the exchange's own decimal strings (to be added up). */
export interface Holdings {
  /** Null when the exchange's exact figures cannot be read (its unified ones are floats). */
  exactBalances(): Promise<Map<string, string[]> | null>;
}

/** Our deposit address at an exchange for an asset. */
export interface DepositAddresses {
  depositAddress(code: string, network?: string): Promise<{ address: string; network: string | null; tag: string | null }>;
}

/** A deposit into the exchange account, as Paygate reads it: the amount kept as the exchange wrote it. */
export interface ExchangeDeposit {
  txid: string;
  /** The exchange's own id of the deposit (one per output it credited), when it gives one. */
  id: string | null;
  /** The address it was sent to: with the tag, which output of the transaction it is. */
  address: string | null;
  currency: string;
  /** The exchange's own decimal string, never a float. Null when the exchange gave none. */
  amount: string | null;
  /** ccxt's unified status: `ok` once the exchange has credited it, else `pending`, `failed` or `canceled`. */
  status: string;
  /** The memo or tag the payer quoted, when the network carries one. */
  tag: string | null;
  network: string | null;
  /** Where it was sent from, when the exchange says. */
  fromAddress: string | null;
  /** When the exchange dated it (epoch milliseconds), when it says. */
  at?: number | null;
}

/** The deposits an exchange account received. */
export interface ReceivedDeposits {
  deposits(since: number): Promise<ExchangeDeposit[]>;
}

/** A withdrawal from the exchange account, as the exchange records it: the amount kept as the exchange wrote it. */
export interface ExchangeWithdrawal {
  /** The exchange's own id: the rail reference Paygate recorded for the payout. */
  id: string;
  currency: string;
  /** The exchange's own decimal string, never a float. Null when the exchange gave none. */
  amount: string | null;
  /** ccxt's unified status: `ok` once sent, else `pending`, `failed` or `canceled`. */
  status: string;
  /** When the exchange dated it (epoch milliseconds), when it says. */
  at: number | null;
}

/** The withdrawals an exchange account made: its own record of money out, for reconciliation. */
export interface SentWithdrawals {
  withdrawals(since: number): Promise<ExchangeWithdrawal[]>;
}

/** Register the URLs a paybill's payments are announced to (M-Pesa C2B), and ask the rail about one. */
export interface PaybillRegistration {
  /** Register the URLs with this registration's token in them. */
  registerC2bUrls(token: string): Promise<{ confirmationUrl: string; validationUrl: string }>;
  /** Ask the rail (Transaction Status) about a receipt; the answer comes later, at the claim's status URL. */
  queryC2bPayment(transId: string, claimId: string): Promise<{ conversationId: string; originatorConversationId: string }>;
}
