import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { expect } from 'chai';
import { User } from '../../models';
import { config } from '../../platform/config';
import type { KycStatus, Role } from '../../domain/users';
import { fundWallets } from './funding';
import { stack } from './stack';
import { rows } from './db';

export const api = () => request(stack.baseUrl);

/** The header Prometheus sends to scrape /metrics: the configured METRICS_TOKEN as a bearer token. */
export const metricsAuth = (): { Authorization: string } => ({ Authorization: `Bearer ${config().metrics.token}` });

export interface TestUser {
  id: string;
  email: string;
  password: string;
  token: string;
  auth: { Authorization: string };
}

let counter = 0;

/** The password every test account registers with. */
export const TEST_PASSWORD = 'a-long-enough-password';

/** POST /auth/register as an anonymous caller, with `body` as given. */
export const register = (body: Record<string, unknown>) => api().post('/api/v1/auth/register').send(body);

/** As `register`, with the test password unless `body` brings its own. */
export const registerWithPassword = (body: Record<string, unknown>) => register({ password: TEST_PASSWORD, ...body });

/**
 * Register and log in a fresh user through the API; KYC status and roles are set directly for the arrangement.
 * The user's wallets are funded (`fundWallets`) unless `funded: false`: a payer needs money in first.
 */
/** A name token made of letters only, from random hex (digits shifted to letters past `f`). */
const lettersOnly = (hex: string): string => {
  const letters = hex
    .replace(/-/g, '')
    .slice(0, 10)
    .replace(/[0-9]/g, (d) => String.fromCharCode(103 + Number(d)));
  return letters.charAt(0).toUpperCase() + letters.slice(1);
};

export async function newUser(
  options: { kycStatus?: KycStatus; roles?: Role[]; phone?: string; funded?: boolean; fullName?: string; emailTag?: string } = {},
): Promise<TestUser> {
  counter += 1;
  const email = `${options.emailTag ?? 'user'}-${Date.now()}-${counter}-${randomUUID().slice(0, 6)}@example.com`;
  const password = TEST_PASSWORD;
  // Staff get a name of their own: nobody decides for a customer who shares their name (docs/compliance.md#own-interest).
  const fullName = options.fullName ?? (options.roles && options.roles.length > 0 ? `Officer ${lettersOnly(randomUUID())}` : 'Test User');
  const registered = await register({ email, password, full_name: fullName, phone: options.phone });
  expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
  const id = (registered.body as { user_id: string }).user_id;
  if (options.funded !== false) await fundWallets(id);
  if (options.kycStatus || options.roles) {
    await User.update(
      { ...(options.kycStatus ? { kycStatus: options.kycStatus } : {}), ...(options.roles ? { roles: options.roles } : {}) },
      { where: { id } },
    );
  }
  const login = await api().post('/api/v1/auth/login').send({ email, password });
  expect(login.status, JSON.stringify(login.body)).to.equal(200);
  const token = (login.body as { access_token: string }).access_token;
  return { id, email, password, token, auth: { Authorization: `Bearer ${token}` } };
}

export const mpesaPayment = (overrides: Record<string, unknown> = {}) => ({
  amount: '1500.00',
  currency: 'KES',
  method: 'mobile_money',
  destination: { provider: 'mpesa', phone: '+254712345678' },
  description: 'test payment',
  ...overrides,
});

/** A bulk payout of one small M-Pesa payout, as `user` (docs/payments.md#bulk-payouts): its batch id. */
export async function oneItemBatch(user: TestUser, reference = 'ONE-1'): Promise<string> {
  const res = await api()
    .post('/api/v1/payouts/batches')
    .set(user.auth)
    .set('Idempotency-Key', randomUUID())
    .send({ items: [{ ...mpesaPayment({ amount: '10.00' }), reference }] });
  expect(res.status, res.text).to.equal(202);
  return (res.body as { batch_id: string }).batch_id;
}

export async function initiate(user: TestUser, body: Record<string, unknown>, key: string = randomUUID()) {
  return api().post('/api/v1/payments/initiate').set(user.auth).set('Idempotency-Key', key).send(body);
}

export interface OrderBody {
  order_id: string;
  status: string;
  failure_code: string | null;
  failure_reason: string | null;
  rail_reference: string | null;
  workflow_id: string;
  amount: string;
  events: { status: string; at: string; detail: string | null }[];
}

export interface WalletsBody {
  deposit_reference: string;
  data: { currency: string; available: string }[];
}

/** GET /wallets as `user`. */
export const walletOf = async (user: TestUser) => (await api().get('/api/v1/wallets').set(user.auth)).body as WalletsBody;

/** What `user` has available in KES, as the wallets endpoint shows it. */
export const kesAvailable = async (user: TestUser) => (await walletOf(user)).data.find((d) => d.currency === 'KES')?.available;

/** Poll the order as a client would, until it reaches a terminal status or the time runs out. */
export async function waitForOrder(user: TestUser, orderId: string, timeoutMs = 20_000): Promise<OrderBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api().get(`/api/v1/payments/orders/${orderId}`).set(user.auth);
    expect(res.status).to.equal(200);
    const order = res.body as OrderBody;
    if (['completed', 'failed', 'rejected', 'reversed'].includes(order.status)) return order;
    if (Date.now() > deadline) throw new Error(`order ${orderId} still ${order.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A Kenyan mobile number no other test uses (07xx…), in E.164. */
export function uniqueKenyanPhone(): string {
  const digits = randomUUID().replace(/\D/g, '').padEnd(8, '7').slice(0, 8);
  return `+2547${digits}`;
}

/** Register and log in a user with the given name (and phone), like `newUser`. */
export const newNamedUser = (fullName: string, options: { phone?: string; roles?: Role[] } = {}): Promise<TestUser> =>
  newUser({ ...options, fullName, emailTag: 'named' });

/** Add a blocklist entry as `staff`; 201 (new) or 200 (existing). */
export async function blocklist(staff: TestUser, entry: { type: string; value: string; reason?: string; expires_at?: string }) {
  const res = await api()
    .post('/api/v1/compliance/blocklist')
    .set(staff.auth)
    .send({ reason: 'test entry', ...entry });
  expect([200, 201], JSON.stringify(res.body)).to.include(res.status);
  return res.body as { entry_id: string; type: string; value: string; active: boolean };
}

/** A valid sell ad: 100 USDT at KES 130.00, trades of KES 100.00 to 13,000.00 by M-Pesa. */
export const sellAd = (overrides: Record<string, unknown> = {}) => ({
  side: 'sell',
  asset: 'USDT',
  fiat: 'KES',
  price_type: 'fixed',
  price: '130.00',
  total_amount: '100.000000',
  min_order: '100.00',
  max_order: '13000.00',
  payment_methods: ['mpesa'],
  terms: 'release within 15 minutes of payment',
  ...overrides,
});

export async function postAd(user: TestUser, body: Record<string, unknown>, key: string = randomUUID()) {
  return api().post('/api/v1/p2p/ads').set(user.auth).set('Idempotency-Key', key).send(body);
}

/** A P2P trade: a payment of `amount` KES against the ad. */
export const p2pTrade = (adId: string, amount: string, paymentMethod = 'mpesa') => ({
  amount,
  currency: 'KES',
  method: 'p2p',
  destination: { ad_id: adId, payment_method: paymentMethod },
});

/** Register a webhook endpoint for `user` (the description is only a label). */
export const registerEndpoint = (user: TestUser, url: string, description = 'test receiver') =>
  api().post('/api/v1/webhooks/endpoints').set(user.auth).send({ url, description });

export async function postAppeal(user: TestUser, body: Record<string, unknown>) {
  return api().post('/api/v1/appeals').set(user.auth).send(body);
}

/** A completed mobile-money payment of `user`, through the real workflow. */
export async function completedPayment(user: TestUser, overrides: Record<string, unknown> = {}): Promise<OrderBody> {
  const res = await initiate(user, mpesaPayment(overrides));
  expect(res.status, JSON.stringify(res.body)).to.equal(202);
  const order = await waitForOrder(user, (res.body as { order_id: string }).order_id);
  expect(order.status).to.equal('completed');
  return order;
}

/**
 * A screening review waiting for a decision, made the way one arises: a listed name, and someone
 * registering under its initials. Returns the review's id.
 */
export async function freshScreeningReview(staff: TestUser): Promise<string> {
  const family = `Rv${randomUUID()
    .replace(/[^a-f]/g, '')
    .slice(0, 6)}`;
  await blocklist(staff, { type: 'name', value: `Neema Wairimu ${family}` });
  const registered = await registerWithPassword({ email: `review-${randomUUID().slice(0, 8)}@example.com`, full_name: `N. W. ${family}` });
  expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
  const [hit] = await rows<{ id: string }>(`SELECT id FROM screening_hits WHERE screened_value = :value AND status = 'needs_review'`, {
    value: `n w ${family.toLowerCase()}`,
  });
  expect(hit, 'a review recorded at registration').to.not.equal(undefined);
  return hit.id;
}
