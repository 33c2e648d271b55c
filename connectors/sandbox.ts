import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { componentLogger } from '../platform/logger';
import { normaliseKenyanPhone } from '../domain/phone';
import { MPESA_RESULT_CODES } from './mpesa-codes';
import { RailError, type Collections, type RailAccepted, type RailConnector, type RailStatus, type RailSubmission } from './types';
import type { SandboxTransfer } from '../domain/sandbox';

export type { SandboxTransfer };

/**
 * The sandbox rails: a deterministic simulation of the outside world (bank, M-Pesa, exchanges) behind the
 * same connector interface as the real ones. Its provider-side state is kept through the `SandboxBooks` its
 * builder gives it (the `sandbox_transfers` table), so it survives restarts exactly as a real provider would.
 *
 * Magic values:
 * - `bank_transfer` to an `account_number` ending in `0000` → refused at submission: `account_not_found`.
 * - `mobile_money` without a Kenyan phone number → refused at submission: `invalid_destination`.
 * - any amount whose first two decimals are `13` (e.g. `"1500.13"`) → accepted, then `insufficient_funds`.
 * - `mobile_money` to `+254700000999` → succeeds but never calls back: polling must resolve it.
 * - `mobile_money` to `+254700000998` → a slow transfer (like an RTGS that takes hours): accepted, pending
 *   for a day (`SANDBOX_SLOW_SETTLE_MS`), never calls back; it then succeeds, or fails as the amount says.
 * - `mobile_money` to `+254700` + a six-digit M-Pesa ResultCode (e.g. `+254700001032`, `+254700002001`,
 *   `+254700001037`, `+254700000001`) → fails with that code's mapped `failure_code`; the busy codes
 *   (`+254700000017`, `+254700000026`) refuse the first submission and accept the retry.
 * - `crypto` to `exchange_id: "sandbox_maintenance"` → the exchange is in maintenance: every submission is
 *   retried, then the payment fails with `exchange_unavailable`.
 */

export const SANDBOX_SILENT_PHONE = '+254700000999';
export const SANDBOX_SLOW_PHONE = '+254700000998';
/** How long the sandbox's slow transfer stays pending. */
export const SANDBOX_SLOW_SETTLE_MS = 24 * 3600 * 1000;
export const SANDBOX_MAINTENANCE_EXCHANGE = 'sandbox_maintenance';

/**
 * The simulated provider's own books, given by whoever builds the sandbox: the provider's state, not ours,
 * but kept in our database so that it survives restarts.
 */
export interface SandboxBooks {
  /** A new transfer, or for an idempotency key already seen the same one with its submissions counted. */
  submitTransfer(t: {
    idempotencyKey: string;
    method: string;
    reference: string;
    request: unknown;
    outcome: 'succeeded' | 'failed';
    failureCode: string | null;
    providerCode: string | null;
    sendsCallback: boolean;
    settlesAfterMs: number;
  }): Promise<SandboxTransfer>;
  findTransfer(
    reference: string,
  ): Promise<Pick<SandboxTransfer, 'reference' | 'outcome' | 'failure_code' | 'provider_code' | 'settles_at'> | undefined>;
  markCallbackSent(reference: string): Promise<void>;
}

export interface SandboxOptions {
  /** Where the api answers: the sandbox posts its signed callbacks to `<publicBaseUrl>/api/v1/callbacks/sandbox`. */
  publicBaseUrl: string;
  callbackSecret: string;
  callbackDelayMs: number;
  books: SandboxBooks;
  /** How callbacks are sent; by default over kept-alive node:http connections. */
  fetchImpl?: typeof fetch;
}

interface Verdict {
  outcome: 'succeeded' | 'failed';
  failureCode: string | null;
  providerCode: string | null;
  sendsCallback: boolean;
  busyOnFirstSubmission: boolean;
  /** Pending this long at the provider; the configured callback delay when absent. */
  settlesAfterMs?: number;
}

export interface SandboxCallbackBody {
  reference: string;
  /** The merchant's own key for the transfer (our order id), echoed as providers echo it. */
  merchant_reference: string;
  status: 'succeeded' | 'failed';
  failure_code: string | null;
  provider_code: string | null;
}

export function signSandboxCallback(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function verifySandboxCallback(secret: string, body: string, signature: string | undefined): boolean {
  if (!signature) return false;
  const expected = Buffer.from(signSandboxCallback(secret, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Decide what the simulated provider will do with a transfer; pure and deterministic. */
export function sandboxVerdict(s: Pick<RailSubmission, 'method' | 'amount' | 'destination'>): Verdict | RailError {
  const base: Verdict = {
    outcome: 'succeeded',
    failureCode: null,
    providerCode: null,
    sendsCallback: true,
    busyOnFirstSubmission: false,
  };
  const d = s.destination;
  if (s.method === 'bank_transfer' && d.account_number?.endsWith('0000')) {
    return new RailError('account_not_found', 'the beneficiary bank reports no such account', false);
  }
  if (s.method === 'crypto' && d.exchange_id === SANDBOX_MAINTENANCE_EXCHANGE) {
    return new RailError('exchange_unavailable', 'the exchange is under maintenance', true);
  }
  if (s.method === 'mobile_money') {
    // As every mobile-money provider does: no subscriber number, no transfer.
    if (!normaliseKenyanPhone(d.phone ?? '')) {
      return new RailError('invalid_destination', 'the mobile-money provider needs the Kenyan phone number to be paid', false);
    }
    if (d.phone === SANDBOX_SILENT_PHONE) return { ...base, sendsCallback: false };
    if (d.phone === SANDBOX_SLOW_PHONE) return { ...amountVerdict(s, base), sendsCallback: false, settlesAfterMs: SANDBOX_SLOW_SETTLE_MS };
    const magic = /^\+254700(\d{6})$/.exec(d.phone);
    const code = magic ? String(Number(magic[1])) : undefined;
    const mapped = code ? MPESA_RESULT_CODES[code] : undefined;
    if (code && mapped) {
      return mapped.retryable
        ? { ...base, providerCode: '0', busyOnFirstSubmission: true }
        : { ...base, outcome: 'failed', failureCode: mapped.failureCode, providerCode: code };
    }
  }
  return amountVerdict(s, base);
}

/** The magic amount: first two decimals `13` → `insufficient_funds`. */
function amountVerdict(s: Pick<RailSubmission, 'method' | 'amount'>, base: Verdict): Verdict {
  const cents = s.amount.split('.')[1] ?? '';
  if (cents.slice(0, 2) === '13' && /^0*$/.test(cents.slice(2))) {
    return { ...base, outcome: 'failed', failureCode: 'insufficient_funds', providerCode: s.method === 'mobile_money' ? '1' : null };
  }
  return base;
}

const CALLBACK_TIMEOUT_MS = 5000;
/** Callbacks go out over kept-alive connections, as a provider's webhook sender keeps them: one per payment otherwise. */
const callbackAgents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** POST `body` to `url` and answer the response's status (its body is not read). */
function postKeptAlive(url: string, headers: Record<string, string>, body: string): Promise<number> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? https.request : http.request;
  const agent = target.protocol === 'https:' ? callbackAgents['https:'] : callbackAgents['http:'];
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      { method: 'POST', agent, timeout: CALLBACK_TIMEOUT_MS, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('timeout', () => req.destroy(new Error(`no answer within ${CALLBACK_TIMEOUT_MS} ms`)));
    req.once('error', reject);
    req.end(body);
  });
}

export class SandboxConnector implements RailConnector, Collections {
  readonly name = 'sandbox';
  private readonly log = componentLogger('sandbox-rail');

  constructor(private readonly options: SandboxOptions) {}

  async submit(submission: RailSubmission): Promise<RailAccepted> {
    const verdict = sandboxVerdict(submission);
    if (verdict instanceof RailError) throw verdict;
    const row = await this.options.books.submitTransfer({
      idempotencyKey: submission.idempotencyKey,
      method: submission.method,
      reference: `SBX-${submission.method.toUpperCase().replace('_', '')}-${submission.orderId.slice(-12)}-${Date.now().toString(36)}`,
      request: submission,
      outcome: verdict.outcome,
      failureCode: verdict.failureCode,
      providerCode: verdict.providerCode,
      sendsCallback: verdict.sendsCallback,
      settlesAfterMs: verdict.settlesAfterMs ?? this.options.callbackDelayMs,
    });
    if (verdict.busyOnFirstSubmission && row.submissions === 1) {
      throw new RailError('provider_busy', 'the provider is busy, try again', true, '17');
    }
    if (row.sends_callback && row.callback_sent_at === null)
      this.scheduleCallback(`${this.options.publicBaseUrl}/api/v1/callbacks/sandbox`, row);
    return { reference: row.reference };
  }

  collect(submission: RailSubmission): Promise<RailAccepted> {
    return this.submit({ ...submission, direction: 'collection' });
  }

  async status(reference: string): Promise<RailStatus> {
    const row = await this.options.books.findTransfer(reference);
    if (!row) throw new RailError('unknown_reference', `no transfer with reference ${reference}`, false);
    if (new Date(row.settles_at).getTime() > Date.now()) return { state: 'pending', reference };
    return toOutcome(row);
  }

  health(): Promise<'up' | 'down'> {
    return Promise.resolve('up');
  }

  private scheduleCallback(url: string, row: SandboxTransfer): void {
    const body = JSON.stringify({
      reference: row.reference,
      merchant_reference: row.idempotency_key,
      status: row.outcome,
      failure_code: row.failure_code,
      provider_code: row.provider_code,
    } satisfies SandboxCallbackBody);
    const timer = setTimeout(() => {
      void this.deliverCallback(url, row.reference, body);
    }, this.options.callbackDelayMs);
    timer.unref();
  }

  private async deliverCallback(url: string, reference: string, body: string): Promise<void> {
    try {
      const headers = {
        'content-type': 'application/json',
        'x-sandbox-signature': signSandboxCallback(this.options.callbackSecret, body),
      };
      const status = this.options.fetchImpl
        ? (await this.options.fetchImpl(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS) })).status
        : await postKeptAlive(url, headers, body);
      if (status >= 200 && status < 300) {
        await this.options.books.markCallbackSent(reference);
      } else {
        this.log.warn({ reference, status }, 'callback refused; the payment will be resolved by polling');
      }
    } catch (err) {
      this.log.warn({ reference, err: (err as Error).message }, 'callback not delivered; the payment will be resolved by polling');
    }
  }
}

function toOutcome(row: Pick<SandboxTransfer, 'reference' | 'outcome' | 'failure_code' | 'provider_code'>): RailStatus {
  if (row.outcome === 'succeeded') return { state: 'succeeded', reference: row.reference, providerCode: row.provider_code ?? undefined };
  const code = row.failure_code ?? 'rail_error';
  return {
    state: 'failed',
    reference: row.reference,
    failureCode: code,
    reason: describeFailure(code, row.provider_code),
    providerCode: row.provider_code ?? undefined,
  };
}

export function describeFailure(failureCode: string, providerCode: string | null | undefined): string {
  const mapped = providerCode ? MPESA_RESULT_CODES[providerCode] : undefined;
  if (mapped && mapped.failureCode === failureCode) return mapped.reason;
  return failureCode.replace(/_/g, ' ');
}
