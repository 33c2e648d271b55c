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
}

export interface RailAccepted {
  reference: string;
}

export type RailOutcome =
  | { state: 'succeeded'; reference: string; providerCode?: string }
  | { state: 'failed'; reference: string; failureCode: string; reason: string; providerCode?: string };

export type RailStatus = RailOutcome | { state: 'pending'; reference: string };

/**
 * A rail refused or could not take a transfer. `retryable` errors (provider busy, maintenance, network)
 * are retried by the activity's retry policy; the others fail the payment with `failureCode`.
 */
export class RailError extends Error {
  constructor(
    readonly failureCode: string,
    message: string,
    readonly retryable: boolean,
    readonly providerCode?: string,
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
}

/** One interface for every rail: sandbox connectors and real ones (Jenga, Daraja, ccxt) alike. */
export interface RailConnector {
  readonly name: string;
  submit(submission: RailSubmission): Promise<RailAccepted>;
  /** The transfer's state at the provider; `hint` narrows the provider-side lookup where a provider needs it. */
  status(reference: string, hint?: RailStatusHint): Promise<RailStatus>;
  health(): Promise<'up' | 'down'>;
}
