import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { query } from './db';
import { sleep } from './wait';

/**
 * An API client that behaves as a careful payments client does: every payment has its own
 * Idempotency-Key, and a request that got no answer, a 5xx, a 409 `idempotency_in_progress` or a 429 is
 * sent again with the same key until the api answers for good.
 */

export interface Customer {
  userId: string;
  email: string;
  token: string;
}

export interface HttpAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export const TERMINAL = ['completed', 'failed', 'rejected', 'reversed'];

async function call(baseUrl: string, method: string, route: string, options: { token?: string; key?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.key) headers['idempotency-key'] = options.key;
  const res = await fetch(`${baseUrl}/api/v1${route}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { text };
  }
  return { status: res.status, body, headers: res.headers } satisfies HttpAnswer;
}

/** Register and log in a customer, made KYC-verified so that the tier limits never get in the way, with money in the KES wallet. */
export async function newCustomer(baseUrl: string): Promise<Customer> {
  const email = `faults-${Date.now()}-${randomUUID().slice(0, 8)}@example.com`;
  const password = 'a-long-enough-password';
  const registered = await call(baseUrl, 'POST', '/auth/register', { body: { email, password, full_name: 'Amani Otieno' } });
  expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
  const userId = registered.body.user_id as string;
  await query("UPDATE users SET kyc_status = 'verified' WHERE id = $1", [userId]);
  const login = await call(baseUrl, 'POST', '/auth/login', { body: { email, password } });
  expect(login.status, JSON.stringify(login.body)).to.equal(200);
  const customer = { userId, email, token: login.body.access_token as string };
  await fund(baseUrl, customer);
  return customer;
}

const funders = new Map<string, Promise<string>>();

/** An admin of the deployment at `baseUrl`, who makes money arrive through the sandbox simulators. */
function funder(baseUrl: string): Promise<string> {
  let token = funders.get(baseUrl);
  if (!token) {
    token = (async () => {
      const email = `faults-funder-${randomUUID().slice(0, 8)}@example.com`;
      const password = 'a-long-enough-password';
      const registered = await call(baseUrl, 'POST', '/auth/register', { body: { email, password, full_name: 'Funding Desk' } });
      expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
      await query("UPDATE users SET roles = '{user,compliance,admin}' WHERE id = $1", [registered.body.user_id as string]);
      const login = await call(baseUrl, 'POST', '/auth/login', { body: { email, password } });
      expect(login.status, JSON.stringify(login.body)).to.equal(200);
      return login.body.access_token as string;
    })();
    funders.set(baseUrl, token);
  }
  return token;
}

/**
 * Every payout is paid from the wallet: KES 10,000,000 arrives first, as a bank transfer quoting the
 * customer's deposit reference, through the sandbox simulator (the crediting path a real bank credit takes).
 */
async function fund(baseUrl: string, customer: Customer): Promise<void> {
  const wallets = await call(baseUrl, 'GET', '/wallets', { token: customer.token });
  expect(wallets.status, JSON.stringify(wallets.body)).to.equal(200);
  const credited = await call(baseUrl, 'POST', '/sandbox/bank-credits', {
    token: await funder(baseUrl),
    body: { deposit_reference: wallets.body.deposit_reference, amount: '10000000.00' },
  });
  expect(credited.status, JSON.stringify(credited.body)).to.equal(202);
  expect((credited.body.deposit as { status: string }).status).to.equal('completed');
}

/** A confirmed crypto deposit of `amount` `currency` into the customer's wallet, through the sandbox simulator. */
export async function fundCrypto(baseUrl: string, customer: Customer, currency: string, amount: string): Promise<void> {
  const credited = await call(baseUrl, 'POST', '/sandbox/crypto-deposits', {
    token: await funder(baseUrl),
    body: { user_id: customer.userId, currency, amount },
  });
  expect(credited.status, JSON.stringify(credited.body)).to.equal(202);
  expect((credited.body.deposit as { status: string }).status).to.equal('completed');
}

export type PaymentKind = 'mpesa_callback' | 'mpesa_polled' | 'bank_transfer';

/** A payment the sandbox rails complete: by callback, by status polling only, or a PesaLink bank transfer. */
export function paymentBody(kind: PaymentKind, n: number): Record<string, unknown> {
  const amount = `${1000 + n}.00`;
  switch (kind) {
    case 'mpesa_callback':
      return { amount, currency: 'KES', method: 'mobile_money', destination: { provider: 'mpesa', phone: '+254712345678' } };
    case 'mpesa_polled':
      return { amount, currency: 'KES', method: 'mobile_money', destination: { provider: 'mpesa', phone: '+254700000999' } };
    case 'bank_transfer':
      return {
        amount,
        currency: 'KES',
        method: 'bank_transfer',
        destination: { bank_code: '01', account_number: `1${String(n).padStart(8, '0')}1`, account_name: 'Amani Otieno' },
      };
  }
}

export interface Attempted {
  key: string;
  /** The final answer: 202 with an order id when accepted. */
  answer: HttpAnswer | undefined;
  orderId: string | undefined;
  /** How many times the request was sent. */
  attempts: number;
  /** Answers that were not final (no answer, 5xx, 409, 429), by status (0: no answer). */
  retried: Record<number, number>;
}

const RETRYABLE = new Set([0, 409, 429, 500, 502, 503, 504]);

/** POST /payments/initiate, sent again with the same key until the api answers for good or `deadlineMs` passes. */
export async function initiatePayment(
  baseUrl: string | (() => string),
  customer: Customer,
  body: Record<string, unknown>,
  options: { key?: string; deadlineMs?: number } = {},
): Promise<Attempted> {
  const key = options.key ?? randomUUID();
  const deadline = Date.now() + (options.deadlineMs ?? 90_000);
  const result: Attempted = { key, answer: undefined, orderId: undefined, attempts: 0, retried: {} };
  for (;;) {
    result.attempts += 1;
    let status: number;
    try {
      const url = typeof baseUrl === 'string' ? baseUrl : baseUrl();
      const answer = await call(url, 'POST', '/payments/initiate', { token: customer.token, key, body });
      status = answer.status;
      if (!RETRYABLE.has(status)) {
        result.answer = answer;
        result.orderId = typeof answer.body.order_id === 'string' ? answer.body.order_id : undefined;
        return result;
      }
    } catch {
      status = 0;
    }
    result.retried[status] = (result.retried[status] ?? 0) + 1;
    if (Date.now() > deadline) return result;
    await sleep(Math.min(200 * result.attempts, 1000));
  }
}

export async function getOrder(baseUrl: string, customer: Customer, orderId: string): Promise<HttpAnswer> {
  return call(baseUrl, 'GET', `/payments/orders/${orderId}`, { token: customer.token });
}

export async function readiness(baseUrl: string): Promise<{ status: number; checks: Record<string, string> }> {
  const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as { checks: Record<string, string> };
  return { status: res.status, checks: body.checks };
}
