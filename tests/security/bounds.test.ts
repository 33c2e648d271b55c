import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, mpesaPayment, newUser, oneItemBatch, sellAd, uniqueKenyanPhone, type TestUser } from '../support/api';
import { expectNoLeak, expectSafeProblem as expectProblem } from '../support/problems';
import { call, fillPath, specOperations, UNKNOWN_ID, type Method, type SpecOperation } from './support';
import { DEFAULT_RULE_SET } from '../../domain/monitoring/rule-set';

/**
 * OWASP API4 (unrestricted resource consumption) and input bounds: sizes, paging limits, cursors, nesting,
 * huge strings and amounts. Every refusal is a 4xx problem, never a 500.
 */

interface Fixture {
  token?: string;
  path: Record<string, string>;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Provider callbacks answer their own way (401 for a bad signature, Daraja's 200 "Ignored"): no 500 is all we ask. */
  providerCallback?: boolean;
}

const HUGE = 'x'.repeat(60_000);
const digits = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 10)).join('');

/** A valid request for every operation that takes a body; the suite fails when an operation has none. */
function fixtures(user: TestUser, staff: TestUser): Record<string, () => Fixture> {
  return {
    'POST /auth/register': () => ({
      path: {},
      body: {
        email: `bounds-${randomUUID()}@example.com`,
        password: 'a-long-enough-password',
        full_name: 'Bounded Name',
        phone: uniqueKenyanPhone(),
      },
    }),
    'POST /auth/login': () => ({ path: {}, body: { email: user.email, password: user.password } }),
    'PUT /users/{user_id}/kyc': () => ({
      token: user.token,
      path: { user_id: user.id },
      body: {
        id_type: 'national_id',
        id_number: digits(8),
        date_of_birth: '1990-04-12',
        kra_pin: 'A123456789B',
        address: 'Moi Avenue 12, Nairobi',
      },
    }),
    'POST /payments/initiate': () => ({
      token: user.token,
      path: {},
      body: mpesaPayment({ reference: 'INV-42' }),
      headers: { 'Idempotency-Key': randomUUID() },
    }),
    'POST /p2p/ads': () => ({ token: user.token, path: {}, body: sellAd({ fiat: 'KES' }), headers: { 'Idempotency-Key': randomUUID() } }),
    'PATCH /p2p/ads/{ad_id}': () => ({
      token: user.token,
      path: { ad_id: UNKNOWN_ID },
      body: { price: '131.00', min_order: '100.00', max_order: '1000.00', terms: 'bounded', status: 'paused' },
    }),
    'POST /appeals': () => ({
      token: user.token,
      path: {},
      body: { order_id: UNKNOWN_ID, reason: 'other', description: 'bounds check', evidence: [{ url: 'https://example.com/proof.png' }] },
    }),
    'PUT /appeals/{appeal_id}/approve': () => ({
      token: staff.token,
      path: { appeal_id: UNKNOWN_ID },
      body: { note: 'ok', action: 'refund' },
    }),
    'PUT /appeals/{appeal_id}/reject': () => ({ token: staff.token, path: { appeal_id: UNKNOWN_ID }, body: { note: 'no' } }),
    'POST /compliance/reviews/{review_id}/decision': () => ({
      token: staff.token,
      path: { review_id: UNKNOWN_ID },
      body: { decision: 'clear', note: 'bounds check' },
    }),
    'POST /compliance/blocklist': () => ({
      token: staff.token,
      path: {},
      body: {
        type: 'email',
        value: `listed-${randomUUID()}@example.invalid`,
        reason: 'bounds check',
        source: 'manual',
        expires_at: '2099-01-01T00:00:00Z',
      },
    }),
    'POST /webhooks/endpoints': () => ({ token: user.token, path: {}, body: { url: 'https://93.184.215.14/hooks', description: 'shop' } }),
    'POST /api-keys': () => ({ token: user.token, path: {}, body: { name: 'bounded', mode: 'test', scopes: ['wallets:read'] } }),
    'POST /payouts/batches': () => ({
      token: user.token,
      path: {},
      body: { items: [{ ...mpesaPayment({ amount: '10.00' }), reference: 'BOUNDS-1' }] },
      headers: { 'Idempotency-Key': randomUUID() },
    }),
    'POST /wallets/deposits': () => ({
      token: user.token,
      path: {},
      body: { amount: '100.00', currency: 'KES', method: 'mobile_money', phone: '+254712345678' },
      headers: { 'Idempotency-Key': randomUUID() },
    }),
    'POST /compliance/approvals/{request_id}/approve': () => ({
      token: staff.token,
      path: { request_id: UNKNOWN_ID },
      body: { note: 'ok' },
    }),
    'POST /compliance/approvals/{request_id}/reject': () => ({
      token: staff.token,
      path: { request_id: UNKNOWN_ID },
      body: { note: 'no' },
    }),
    'POST /compliance/reconciliation/breaks/{break_id}/resolve': () => ({
      token: staff.token,
      path: { break_id: UNKNOWN_ID },
      body: { note: 'journal 118' },
    }),
    'PUT /compliance/monitoring/rules': () => ({
      token: staff.token,
      path: {},
      // A stale version is judged on its merits (409) after the body's bounds (400).
      body: { based_on_version: 1, ...structuredClone(DEFAULT_RULE_SET) },
    }),
    'POST /compliance/reconciliation/runs': () => ({
      token: staff.token,
      path: {},
      body: { from: '2026-11-25T00:00:00Z', to: '2026-11-26T00:00:00Z' },
    }),
    'POST /compliance/cases/{case_id}/assign': () => ({
      token: staff.token,
      path: { case_id: UNKNOWN_ID },
      body: { assignee_id: staff.id },
    }),
    'POST /compliance/cases/{case_id}/notes': () => ({
      token: staff.token,
      path: { case_id: UNKNOWN_ID },
      body: { text: 'asked for source of funds' },
    }),
    'POST /compliance/cases/{case_id}/close': () => ({
      token: staff.token,
      path: { case_id: UNKNOWN_ID },
      body: { outcome: 'false_positive', note: 'household payers' },
    }),
    'POST /compliance/goaml/ctr': () => ({
      token: staff.token,
      path: {},
      body: { from: '2026-11-25T00:00:00Z', to: '2026-11-26T00:00:00Z' },
    }),
    'POST /operations/unresolved-payouts/{order_id}/resolve': () => ({
      token: staff.token,
      path: { order_id: UNKNOWN_ID },
      body: { outcome: 'sent', evidence: 'statement line 42', note: 'checked' },
    }),
    'POST /wallets/unmatched-deposits/{deposit_id}/assign': () => ({
      token: staff.token,
      path: { deposit_id: UNKNOWN_ID },
      body: { user_id: user.id },
    }),
    'POST /sandbox/c2b': () => ({
      token: staff.token,
      path: {},
      body: { deposit_reference: 'PGUNKNOWNREF', amount: '1.00', phone: '+254712345678' },
    }),
    'POST /sandbox/bank-credits': () => ({
      token: staff.token,
      path: {},
      body: { deposit_reference: 'PGUNKNOWNREF', amount: '1.00', payer_name: 'Bounded Payer' },
    }),
    'POST /sandbox/crypto-deposits': () => ({
      token: staff.token,
      path: {},
      body: { user_id: user.id, currency: 'USDT', amount: '1.000000' },
    }),
    'POST /callbacks/sandbox': () => ({
      providerCallback: true,
      path: {},
      body: { reference: 'r', merchant_reference: UNKNOWN_ID, status: 'succeeded', failure_code: null, provider_code: null },
    }),
    'POST /callbacks/mpesa/stk/{order_id}': () => ({
      providerCallback: true,
      path: { order_id: UNKNOWN_ID },
      body: { Body: { stkCallback: { MerchantRequestID: 'm', CheckoutRequestID: 'c', ResultCode: 0, ResultDesc: 'ok' } } },
    }),
    'POST /callbacks/mpesa/b2c/{order_id}/result': () => ({
      providerCallback: true,
      path: { order_id: UNKNOWN_ID },
      body: { Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'ok', OriginatorConversationID: 'o', ConversationID: 'c' } },
    }),
    'POST /callbacks/mpesa/b2c/{order_id}/status': () => ({
      providerCallback: true,
      path: { order_id: UNKNOWN_ID },
      body: { Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'ok', OriginatorConversationID: 'o', ConversationID: 'c' } },
    }),
    'POST /callbacks/mpesa/c2b/validation': () => ({
      providerCallback: true,
      path: {},
      body: { TransID: 'BOUNDS1234', TransAmount: '100.00', BillRefNumber: 'PGUNKNOWNREF', MSISDN: '254712345678', FirstName: 'B' },
    }),
    'POST /callbacks/mpesa/c2b/confirmation': () => ({
      providerCallback: true,
      path: {},
      body: { TransID: 'BOUNDS1234', TransAmount: '100.00', BillRefNumber: 'PGUNKNOWNREF', MSISDN: '254712345678', FirstName: 'B' },
    }),
    'POST /callbacks/mpesa/c2b/status/{claim_id}': () => ({
      providerCallback: true,
      path: { claim_id: UNKNOWN_ID },
      body: { Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'ok', OriginatorConversationID: 'o', ConversationID: 'c' } },
    }),
    'POST /callbacks/mpesa/balance/{query_id}': () => ({
      providerCallback: true,
      path: { query_id: UNKNOWN_ID },
      body: { Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'ok', OriginatorConversationID: 'o', ConversationID: 'c' } },
    }),
    'POST /callbacks/mpesa/b2c/{order_id}/timeout': () => ({
      providerCallback: true,
      path: { order_id: UNKNOWN_ID },
      body: { Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'ok', OriginatorConversationID: 'o', ConversationID: 'c' } },
    }),
  };
}

/** Every string leaf of a JSON value, as a path of keys and indexes. */
function stringLeaves(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [at];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringLeaves(v, [...at, i]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...at, k]));
  return [];
}

function replaced(value: unknown, at: (string | number)[], by: unknown): unknown {
  if (at.length === 0) return by;
  const copy = (Array.isArray(value) ? [...(value as unknown[])] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[at[0]] = replaced(copy[at[0]], at.slice(1), by);
  return copy;
}

function send(op: SpecOperation, f: Fixture, body: unknown) {
  return call(op.method, fillPath(op.path, f.path), { token: f.token, body, headers: f.headers });
}

/** List operations with a required query parameter besides their paging. */
const REQUIRED_QUERY: Record<string, string> = { 'GET /compliance/screen': 'name=John%20Kamau&' };

describe('security: input bounds', () => {
  let user: TestUser;
  let staff: TestUser;
  let ops: SpecOperation[];
  /** Path parameters naming resources of `staff`, so that list operations below a resource reach their paging. */
  let own: Record<string, string>;

  before(async () => {
    user = await newUser({ kycStatus: 'verified' });
    staff = await newUser({ roles: ['user', 'compliance', 'admin'] });
    ops = await specOperations();
    const endpoint = await call('post', '/webhooks/endpoints', { token: staff.token, body: { url: 'https://93.184.215.14/paged' } });
    expect(endpoint.status, endpoint.text).to.equal(201);
    own = {
      endpoint_id: (endpoint.body as { endpoint_id: string }).endpoint_id,
      currency: 'KES',
      batch_id: await oneItemBatch(staff, 'PAGED-1'),
    };
  });

  describe('when a body is larger than 64 KiB (5 MiB for a bulk payout)', () => {
    it('then every operation that takes a body answers 413 payload_too_large', async () => {
      const small = { padding: 'x'.repeat(70 * 1024) };
      const large = { padding: 'x'.repeat(5 * 1024 * 1024 + 6 * 1024) };
      for (const op of ops.filter((o) => o.requestBody)) {
        const big = op.key === 'POST /payouts/batches' ? large : small;
        const res = await call(
          op.method,
          fillPath(op.path, Object.fromEntries([...op.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], UNKNOWN_ID]))),
          {
            token: staff.token,
            body: big,
            headers: { 'Idempotency-Key': randomUUID() },
          },
        );
        expectProblem(res, 413, 'payload_too_large', op.key);
      }
    });
  });

  describe('when a field of a valid body is a huge string', () => {
    it('then every operation that takes a body has a fixture (so a new one cannot slip past these checks)', () => {
      const known = Object.keys(fixtures(user, staff));
      const withBody = ops.filter((o) => o.requestBody).map((o) => o.key);
      expect(
        withBody.filter((k) => !known.includes(k)),
        'operations without a bounds fixture',
      ).to.deep.equal([]);
    });

    it('then each field is refused with a 400 problem, never stored and never a 500', async function () {
      this.timeout(120_000);
      const all = fixtures(user, staff);
      for (const op of ops.filter((o) => o.requestBody)) {
        const fixture = all[op.key];
        const sample = fixture();
        // The unmodified fixture is a request the endpoint accepts or judges on its merits (not a 400).
        const baseline = await send(op, sample, sample.body);
        expect(baseline.status, `${op.key} baseline: ${baseline.text}`).not.to.equal(400);
        expect(baseline.status, `${op.key} baseline: ${baseline.text}`).to.be.lessThan(500);
        for (const leaf of stringLeaves(sample.body)) {
          const f = fixture();
          const res = await send(op, f, replaced(f.body, leaf, HUGE));
          const what = `${op.key} with a huge ${leaf.join('.')}`;
          if (f.providerCallback) {
            expect(res.status, `${what}: ${res.text.slice(0, 200)}`).to.be.lessThan(500);
            expectNoLeak(res, what);
          } else {
            expectProblem(res, 400, 'validation_failed', what);
          }
        }
      }
    });
  });

  describe('when a list is asked for with a bad limit or cursor', () => {
    it('then every list operation answers 400 naming limit for 0, 101, -1, 1.5 and abc', async function () {
      this.timeout(60_000);
      const lists = ops.filter((o) => o.parameters.some((p) => p.in === 'query' && p.name === 'limit'));
      expect(lists.length).to.be.greaterThan(5);
      for (const op of lists) {
        for (const limit of ['0', '101', '-1', '1.5', 'abc', '1e3', '']) {
          const res = await call(op.method, `${fillPath(op.path, own)}?${REQUIRED_QUERY[op.key] ?? ''}limit=${encodeURIComponent(limit)}`, {
            token: staff.token,
          });
          expectProblem(res, 400, 'validation_failed', `${op.key}?limit=${limit}`);
          expect(JSON.stringify((res.body as { errors?: unknown }).errors), `${op.key}?limit=${limit}`).to.include('limit');
        }
        const fine = await call(op.method, `${fillPath(op.path, own)}?${REQUIRED_QUERY[op.key] ?? ''}limit=100`, { token: staff.token });
        expect(fine.status, `${op.key}?limit=100: ${fine.text}`).to.be.oneOf([200, 404]);
      }
    });

    it('then every paged operation answers 400 naming cursor for a cursor it did not issue', async function () {
      this.timeout(60_000);
      const paged = ops.filter((o) => o.parameters.some((p) => p.in === 'query' && p.name === 'cursor'));
      expect(paged.length).to.be.greaterThan(5);
      const forged = [
        'not-a-cursor',
        Buffer.from('v1:not-a-uuid').toString('base64url'),
        Buffer.from("v1:' OR 1=1 --").toString('base64url'),
        Buffer.from(`v2:${UNKNOWN_ID}`).toString('base64url'),
        'x'.repeat(4000),
        '%00',
      ];
      for (const op of paged) {
        for (const cursor of forged) {
          const res = await call(op.method, `${fillPath(op.path, own)}?cursor=${encodeURIComponent(cursor)}`, {
            token: staff.token,
          });
          expectProblem(res, 400, 'validation_failed', `${op.key}?cursor=${cursor.slice(0, 20)}`);
        }
      }
    });
  });

  describe('when a query parameter is huge or carries a NUL', () => {
    it('then every GET operation answers a 4xx problem for each of its query parameters', async function () {
      this.timeout(60_000);
      for (const op of ops.filter((o) => o.method === 'get')) {
        const path = fillPath(op.path, Object.fromEntries([...op.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], UNKNOWN_ID])));
        for (const p of op.parameters.filter((x) => x.in === 'query')) {
          for (const value of ['y'.repeat(8000), 'a\u0000b']) {
            const res = await call(op.method, `${path}?${p.name}=${encodeURIComponent(value)}`, { token: staff.token });
            const what = `${op.key}?${p.name}=${value.length > 10 ? 'huge' : 'NUL'}`;
            expect(res.status, `${what}: ${res.text.slice(0, 300)}`).to.be.within(400, 499);
            expectNoLeak(res, what);
          }
        }
      }
    });
  });

  describe('when a body is deeply nested', () => {
    it('then it is a 400 problem, not a stack overflow', async () => {
      const depth = 20_000;
      const deep = `{"amount":"1.00","currency":"KES","method":"mobile_money","destination":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      for (const [method, path, token] of [
        ['post', '/payments/initiate', user.token],
        ['post', '/auth/register', undefined],
        ['post', '/p2p/ads', user.token],
        ['put', `/users/${user.id}/kyc`, user.token],
      ] as [Method, string, string | undefined][]) {
        let req = api()[method](`/api/v1${path}`).set('Content-Type', 'application/json').set('Idempotency-Key', randomUUID());
        if (token) req = req.set('Authorization', `Bearer ${token}`);
        const res = await req.send(deep);
        expectProblem(res, 400, undefined, `${method} ${path}`);
      }
    });

    it('then a body nested within the bound is still judged on its content', async () => {
      const res = await api()
        .post('/api/v1/payments/initiate')
        .set(user.auth)
        .set('Idempotency-Key', randomUUID())
        .send(mpesaPayment({ destination: { provider: 'mpesa', phone: '+254712345678', extra: { a: { b: { c: [1, [2, [3]]] } } } } }));
      expect(res.status, res.text).to.equal(202);
    });
  });

  describe('when a string carries a NUL character', () => {
    it('then it is a 400 problem, never a database error', async () => {
      const cases: [Method, string, string | undefined, Record<string, unknown>][] = [
        ['post', '/auth/register', undefined, { email: 'nul@example.com', password: 'a-long-enough-password', full_name: 'Nul\u0000Name' }],
        ['post', '/payments/initiate', user.token, mpesaPayment({ description: 'before\u0000after' })],
        ['post', '/p2p/ads', user.token, sellAd({ terms: 'fast\u0000release' })],
        ['post', '/compliance/blocklist', staff.token, { type: 'name', value: 'Some\u0000One', reason: 'nul' }],
        ['post', '/auth/login', undefined, { email: 'a\u0000@example.com', password: 'whatever-password' }],
      ];
      for (const [method, path, token, body] of cases) {
        const res = await call(method, path, { token, body, headers: { 'Idempotency-Key': randomUUID() } });
        expectProblem(res, 400, 'validation_failed', `${method} ${path}`);
      }
    });
  });

  describe('when an amount is malformed', () => {
    it('then a payment with too many decimals, zero, a negative, a huge or a non-decimal amount is a 400 naming amount', async () => {
      const bad: unknown[] = [
        '1500.001',
        '0',
        '0.00',
        '-5.00',
        '1e3',
        '1,500.00',
        '0x10',
        'NaN',
        'Infinity',
        '9'.repeat(40),
        `${'9'.repeat(2000)}.00`,
        1500,
        15.5,
        null,
        '',
        ' ',
      ];
      for (const amount of bad) {
        const res = await call('post', '/payments/initiate', {
          token: user.token,
          body: mpesaPayment({ amount }),
          headers: { 'Idempotency-Key': randomUUID() },
        });
        expectProblem(res, 400, 'validation_failed', `amount ${JSON.stringify(amount).slice(0, 30)}`);
        expect(JSON.stringify((res.body as { errors?: unknown }).errors), `amount ${String(amount).slice(0, 30)}`).to.include('amount');
      }
    });

    it('then an amount beyond the stored range is a 400 naming amount, never a 500, in every currency', async () => {
      const payments = [
        mpesaPayment({ amount: '99999999999999999999999.99' }),
        mpesaPayment({ amount: '1000000000000000.00' }),
        {
          ...mpesaPayment(),
          method: 'crypto',
          currency: 'ETH',
          amount: '9999999999999999999999999.999999999999999999',
          destination: { address: '0x52908400098527886E0F7030069857D2E4169EE7', network: 'ERC20' },
        },
      ];
      for (const body of payments) {
        const res = await call('post', '/payments/initiate', { token: user.token, body, headers: { 'Idempotency-Key': randomUUID() } });
        expectProblem(res, 400, 'validation_failed', `amount ${String(body.amount)}`);
        const errors = (res.body as { errors?: { field: string; message: string }[] }).errors ?? [];
        expect(errors.find((e) => e.field === 'amount')?.message, JSON.stringify(errors)).to.match(/15 digits before the decimal point/);
      }
    });

    it('then a P2P ad with a malformed price or amount is a 400 naming the field', async () => {
      const cases: [string, unknown][] = [
        ['price', '-130.00'],
        ['price', '130.001'],
        ['total_amount', '1.0000001'],
        ['total_amount', '0'],
        ['min_order', '9'.repeat(40)],
        ['total_amount', '99999999999999999999999.99'],
        ['price', '1000000000000000.00'],
        ['max_order', 'lots'],
      ];
      for (const [field, value] of cases) {
        const res = await call('post', '/p2p/ads', {
          token: user.token,
          body: sellAd({ [field]: value }),
          headers: { 'Idempotency-Key': randomUUID() },
        });
        expectProblem(res, 400, 'validation_failed', `${field} ${String(value).slice(0, 20)}`);
        expect(JSON.stringify((res.body as { errors?: unknown }).errors)).to.include(field);
      }
    });
  });
});
