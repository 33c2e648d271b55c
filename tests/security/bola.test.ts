import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { creditIncoming } from '../../services/money-in';
import { requestApproval } from '../../services/approvals';
import { recordClaim } from '../../repositories/deposit-claims';
import { dispatchWebhookEvents } from '../../workers/webhook-delivery';
import {
  completedPayment,
  freshScreeningReview,
  oneItemBatch,
  newUser,
  postAd,
  postAppeal,
  sellAd,
  type OrderBody,
  type TestUser,
} from '../support/api';
import { rows } from '../support/db';
import { expectSafeProblem as expectProblem } from '../support/problems';
import { call, fillPath, pathParameters, servedSpec, specOperations, type OpenApiDocument, type SpecOperation } from './support';
import { recordBreaks } from '../../repositories/reconciliation';
import { recordBalanceQuery } from '../../repositories/rail-balance-queries';
import { storedGoamlReport } from '../support/goaml';
import { openCaseAbout } from '../support/cases';

/**
 * OWASP API1 (broken object level authorisation): user B tries every operation of the spec that names an
 * object, with user A's object ids, in the path, the query and the body. As docs/access.md#objects-of-other-users has it, others' objects are 404
 * (their existence is not revealed); deciding appeals is a role (403 for any user); ads are public.
 */

/** `own`: the path names no object of A's (a currency), so B reads only B's own. */
type Outcome = 'not_found' | 'forbidden' | 'public' | 'ignored_callback' | 'own';

/** What user B gets for each operation of the spec taking an id in its path, called with A's ids. */
const FOREIGN_ID_OUTCOME: Record<string, Outcome> = {
  'GET /payments/orders/{order_id}': 'not_found',
  'GET /users/{user_id}': 'not_found',
  'PUT /users/{user_id}/kyc': 'not_found',
  'GET /appeals/{appeal_id}': 'not_found',
  'PUT /appeals/{appeal_id}/approve': 'forbidden',
  'PUT /appeals/{appeal_id}/reject': 'forbidden',
  // Deciding a screening review is a role, as deciding an appeal.
  'POST /compliance/reviews/{review_id}/decision': 'forbidden',
  'DELETE /webhooks/endpoints/{endpoint_id}': 'not_found',
  'GET /webhooks/endpoints/{endpoint_id}/deliveries': 'not_found',
  'GET /p2p/ads/{ad_id}': 'public',
  // Ads are public, so their existence is no secret: changing another's ad is refused as such.
  'PATCH /p2p/ads/{ad_id}': 'forbidden',
  'GET /wallets/deposits/{deposit_id}': 'not_found',
  // A bulk payout is its owner's: others' batches, their items, their results CSV and their cancellation are 404.
  'GET /payouts/batches/{batch_id}': 'not_found',
  'GET /payouts/batches/{batch_id}/items': 'not_found',
  'GET /payouts/batches/{batch_id}/results.csv': 'not_found',
  'POST /payouts/batches/{batch_id}/cancel': 'not_found',
  'DELETE /api-keys/{key_id}': 'not_found',
  'POST /webhooks/endpoints/{endpoint_id}/deliveries/{delivery_id}/retry': 'not_found',
  'GET /wallets/{currency}/transactions': 'own',
  'GET /wallets/{currency}/deposit-address': 'own',
  'POST /wallets/unmatched-deposits/{deposit_id}/assign': 'forbidden',
  // Four-eyes requests are staff business, whoever's money they name.
  'GET /compliance/approvals/{request_id}': 'forbidden',
  'POST /compliance/approvals/{request_id}/approve': 'forbidden',
  'POST /compliance/approvals/{request_id}/reject': 'forbidden',
  // A reconciliation break is the operator's, never a customer's.
  'POST /compliance/reconciliation/breaks/{break_id}/resolve': 'forbidden',
  // goAML reports are staff's, whoever's movements they name.
  'GET /compliance/goaml/{report_id}.xml': 'forbidden',
  // Cases are staff's, and never shown to the customer they are about (no tipping off).
  'GET /compliance/cases/{case_id}': 'forbidden',
  'POST /compliance/cases/{case_id}/assign': 'forbidden',
  'POST /compliance/cases/{case_id}/notes': 'forbidden',
  'POST /compliance/cases/{case_id}/close': 'forbidden',
  // Resolving an unresolved payout is staff business, whoever's payout it is.
  'POST /operations/unresolved-payouts/{order_id}/resolve': 'forbidden',
  'POST /callbacks/mpesa/stk/{order_id}': 'ignored_callback',
  'POST /callbacks/mpesa/b2c/{order_id}/result': 'ignored_callback',
  'POST /callbacks/mpesa/b2c/{order_id}/status': 'ignored_callback',
  'POST /callbacks/mpesa/b2c/{order_id}/timeout': 'ignored_callback',
  // Unproven money in is staff's to ask about; its status result is taken only with the claim's token.
  'POST /wallets/unproven-deposits/{claim_id}/recheck': 'forbidden',
  'POST /callbacks/mpesa/c2b/status/{claim_id}': 'ignored_callback',
  // A balance result is taken only with its query's token.
  'POST /callbacks/mpesa/balance/{query_id}': 'ignored_callback',
};

/** Ids a request body may carry, and whether they name someone's own object or a public one. */
const BODY_IDS: Record<string, 'owned' | 'public'> = {
  order_id: 'owned',
  // A KYC decision's reviewed submission: the target user's, decided only by staff (anyone else is 404/403 first).
  submission_id: 'owned',
  ad_id: 'public',
  exchange_id: 'public',
  // Whose wallet money goes to: named only by staff assigning unmatched money, or an admin's simulator.
  user_id: 'owned',
  // Who works a case: named only by staff.
  assignee_id: 'owned',
};

/** The bodies B sends to operations that take one: well-formed, so only ownership can refuse them. */
const bodyFor = (op: SpecOperation): unknown => {
  switch (op.key) {
    case 'PUT /users/{user_id}/kyc':
      return { id_type: 'national_id', id_number: '31234567', date_of_birth: '1990-04-12' };
    case 'PUT /appeals/{appeal_id}/approve':
      return { note: 'approved by the wrong person', action: 'refund' };
    case 'PUT /appeals/{appeal_id}/reject':
      return { note: 'rejected by the wrong person' };
    case 'POST /compliance/reviews/{review_id}/decision':
      return { decision: 'clear', note: 'cleared by the wrong person' };
    case 'POST /wallets/unmatched-deposits/{deposit_id}/assign':
      return { user_id: '00000000-0000-7000-8000-000000000000' };
    case 'PATCH /p2p/ads/{ad_id}':
      return { status: 'closed', price: '1.00', terms: 'taken over' };
    case 'POST /compliance/approvals/{request_id}/approve':
    case 'POST /compliance/approvals/{request_id}/reject':
      return { note: 'decided by the wrong person' };
    case 'POST /operations/unresolved-payouts/{order_id}/resolve':
      return { outcome: 'not_sent', evidence: 'resolved by the wrong person' };
    case 'POST /compliance/reconciliation/breaks/{break_id}/resolve':
      return { note: 'resolved by the wrong person' };
    case 'POST /compliance/cases/{case_id}/assign':
      return { assignee_id: '00000000-0000-7000-8000-000000000000' };
    case 'POST /compliance/cases/{case_id}/notes':
      return { text: 'noted by the wrong person' };
    case 'POST /compliance/cases/{case_id}/close':
      return { outcome: 'false_positive', note: 'closed by the wrong person' };
    case 'POST /callbacks/mpesa/stk/{order_id}':
      return { Body: { stkCallback: { MerchantRequestID: 'm', CheckoutRequestID: 'c', ResultCode: 0, ResultDesc: 'paid' } } };
    case 'POST /callbacks/mpesa/b2c/{order_id}/result':
    case 'POST /callbacks/mpesa/b2c/{order_id}/status':
    case 'POST /callbacks/mpesa/b2c/{order_id}/timeout':
    case 'POST /callbacks/mpesa/c2b/status/{claim_id}':
    case 'POST /callbacks/mpesa/balance/{query_id}':
      return { Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'paid', OriginatorConversationID: 'o', ConversationID: 'c' } };
    default:
      return op.method === 'get' || op.method === 'delete' ? undefined : {};
  }
};

/** Property names ending in `_id` anywhere in the request body schemas of the spec. */
function bodyIdProperties(spec: OpenApiDocument, ops: SpecOperation[]): string[] {
  const found = new Set<string>();
  const seen = new Set<string>();
  const walk = (schema: Record<string, unknown> | undefined): void => {
    if (!schema) return;
    const ref = schema.$ref as string | undefined;
    if (ref) {
      if (seen.has(ref)) return;
      seen.add(ref);
      walk(spec.components.schemas[ref.split('/').pop()!]);
      return;
    }
    for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) {
      if (name.endsWith('_id')) found.add(name);
      walk(sub);
    }
    for (const key of ['items', 'additionalProperties'])
      if (schema[key] && typeof schema[key] === 'object') walk(schema[key] as Record<string, unknown>);
    for (const key of ['allOf', 'anyOf', 'oneOf']) for (const s of (schema[key] as Record<string, unknown>[] | undefined) ?? []) walk(s);
  };
  for (const op of ops) {
    const content = (op.requestBody?.content ?? {}) as Record<string, { schema?: Record<string, unknown> }>;
    for (const media of Object.values(content)) walk(media.schema);
  }
  return [...found].sort();
}

/** A pending four-eyes request to assign unmatched money to `userId`, asked by the staff member `makerId`. */
async function fourEyesRequestFor(userId: string, makerId: string): Promise<string> {
  const { deposit } = await creditIncoming({
    channel: 'bank_transfer',
    rail: 'sandbox',
    providerReference: `BOLA-FOUR-EYES-${randomUUID()}`,
    currency: 'KES',
    amountMinor: 10_000n,
    quotedReference: 'PGUNKNOWNREF',
    payer: {},
  });
  const request = await requestApproval(
    { id: makerId, roles: ['compliance'] },
    {
      kind: 'assign_unmatched_deposit',
      subjectId: deposit.deposit_id,
      currency: 'KES',
      amountMinor: 10_000n,
      payload: { user_id: userId },
    },
  );
  return request.request_id;
}

describe('security: object level authorisation (BOLA)', function () {
  this.timeout(60_000);
  let alice: TestUser;
  let bob: TestUser;
  let staff: TestUser;
  let order: OrderBody;
  /** Alice's objects, by the name of the path parameter that names them. */
  let hers: Record<string, string>;

  before(async () => {
    alice = await newUser({ kycStatus: 'verified' });
    bob = await newUser();
    staff = await newUser({ roles: ['user', 'compliance'] });
    order = await completedPayment(alice);
    const appeal = await postAppeal(alice, { order_id: order.order_id, reason: 'other', description: 'alice asks' });
    expect(appeal.status, appeal.text).to.equal(201);
    const endpoint = await call('post', '/webhooks/endpoints', { token: alice.token, body: { url: 'https://93.184.215.14/alice' } });
    expect(endpoint.status, endpoint.text).to.equal(201);
    const key = await call('post', '/api-keys', { token: alice.token, body: { name: 'alice', mode: 'test', scopes: ['wallets:read'] } });
    expect(key.status, key.text).to.equal(201);
    const ad = await postAd(alice, sellAd());
    expect(ad.status, ad.text).to.equal(201);
    const { deposit } = await creditIncoming({
      channel: 'mpesa_c2b',
      rail: 'sandbox',
      providerReference: `BOLA${randomUUID()}`,
      currency: 'KES',
      amountMinor: 5_000n,
      userId: alice.id,
      payer: {},
    });
    // The ad and the deposit came after the endpoint: their events are Alice's deliveries.
    await dispatchWebhookEvents(1_000_000);
    const endpointId = (endpoint.body as { endpoint_id: string }).endpoint_id;
    const [delivery] = await rows<{ id: string }>('SELECT id FROM webhook_deliveries WHERE endpoint_id = :endpointId LIMIT 1', {
      endpointId,
    });
    expect(delivery, 'a delivery of A').to.not.equal(undefined);
    hers = {
      batch_id: await oneItemBatch(alice, 'ALICE-1'),
      delivery_id: delivery.id,
      deposit_id: deposit.deposit_id,
      // A currency names no object of A's; USDT, so that every operation naming one answers (crypto deposit addresses included).
      currency: 'USDT',
      order_id: order.order_id,
      user_id: alice.id,
      appeal_id: (appeal.body as { appeal_id: string }).appeal_id,
      endpoint_id: (endpoint.body as { endpoint_id: string }).endpoint_id,
      ad_id: (ad.body as { ad_id: string }).ad_id,
      key_id: (key.body as { key_id: string }).key_id,
      review_id: await freshScreeningReview(await newUser({ roles: ['user', 'compliance'] })),
      request_id: await fourEyesRequestFor(alice.id, staff.id),
      report_id: await storedGoamlReport(staff.id),
      case_id: await openCaseAbout(alice.id),
      break_id: (
        await recordBreaks('sandbox', 'bank_transfer', [
          {
            kind: 'missing_in_ledger',
            direction: 'in',
            reference: `BOLA-${randomUUID()}`,
            currency: 'KES',
            railAmountMinor: 1_000n,
            ledgerAmountMinor: null,
            railLines: 1,
            ledgerLines: 0,
            day: new Date().toISOString().slice(0, 10),
            depositIds: [],
            orderIds: [],
          },
        ])
      )[0].id,
      // A balance query Paygate sent to M-Pesa, still waiting for its answer.
      query_id: await (async () => {
        const id = randomUUID();
        await recordBalanceQuery({ id, rail: 'daraja', method: 'mobile_money', conversationId: 'AG_1', originatorConversationId: 'o-1' });
        return id;
      })(),
      // A paybill confirmation quoting A's deposit reference, refused at the door and kept for staff.
      claim_id: (
        await recordClaim({
          channel: 'mpesa_c2b',
          status: 'rejected',
          reason: 'token_unknown',
          providerReference: `BOLA${randomUUID().replace(/-/g, '').slice(0, 8).toUpperCase()}`,
          amountMinor: '5000',
          accountReference: 'PGUNKNOWNREF',
          payerPhone: null,
          payerName: null,
          sourceAddress: '203.0.113.7',
          body: {},
        })
      ).row.id,
    };
  });

  /** Alice's objects as they stand, to show that nothing Bob sent changed them. */
  async function aliceState() {
    return {
      kyc: await rows('SELECT kyc_status FROM users WHERE id = :id', { id: alice.id }),
      batch: await rows('SELECT cancel_requested_at FROM payout_batches WHERE id = :id', { id: hers.batch_id }),
      appeal: await rows('SELECT status, decided_by FROM appeals WHERE id = :id', { id: hers.appeal_id }),
      endpoint: await rows('SELECT enabled FROM webhook_endpoints WHERE id = :id', { id: hers.endpoint_id }),
      delivery: await rows('SELECT status, next_attempt_at FROM webhook_deliveries WHERE id = :id', { id: hers.delivery_id }),
      key: await rows('SELECT revoked_at FROM api_keys WHERE id = :id', { id: hers.key_id }),
      order: await rows('SELECT status, rail_reference FROM orders WHERE id = :id', { id: hers.order_id }),
      ledger: await rows('SELECT count(*)::int AS n FROM ledger_transactions WHERE order_id = :id', { id: hers.order_id }),
      wallet: await rows('SELECT balance_minor::text AS b FROM accounts WHERE account = :a', { a: `wallet:${alice.id}:KES` }),
      ad: await rows('SELECT status, price_minor::text AS price, terms FROM p2p_ads WHERE id = :id', { id: hers.ad_id }),
      review: await rows('SELECT status, decided_by FROM screening_hits WHERE id = :id', { id: hers.review_id }),
      balanceQuery: await rows('SELECT status FROM rail_balance_queries WHERE id = :id', { id: hers.query_id }),
    };
  }

  describe('when user B calls every operation that takes an object id in its path with user A’s ids', () => {
    it('then every such operation of the spec has an expected outcome (so a new one cannot slip through)', async () => {
      const withIds = (await specOperations()).filter((op) => pathParameters(op.path).length > 0).map((op) => op.key);
      expect(
        withIds.filter((k) => !(k in FOREIGN_ID_OUTCOME)),
        'operations without a BOLA expectation',
      ).to.deep.equal([]);
      const names = new Set((await specOperations()).flatMap((op) => pathParameters(op.path)));
      expect(
        [...names].filter((n) => !(n in hers)),
        'path parameters without an object of A',
      ).to.deep.equal([]);
    });

    it('then B gets 404 for A’s objects (403 for deciding appeals), and A’s objects are unchanged', async () => {
      const before = await aliceState();
      for (const op of (await specOperations()).filter((o) => pathParameters(o.path).length > 0)) {
        const expected = FOREIGN_ID_OUTCOME[op.key];
        const res = await call(op.method, fillPath(op.path, hers), { token: bob.token, body: bodyFor(op) });
        const what = `B: ${op.key}`;
        if (expected === 'not_found') expectProblem(res, 404, 'not_found', what);
        else if (expected === 'forbidden') expectProblem(res, 403, 'forbidden', what);
        else if (expected === 'public') expect(res.status, `${what}: ${res.text}`).to.equal(200);
        else if (expected === 'own') {
          expect(res.status, `${what}: ${res.text}`).to.equal(200);
          for (const secret of [alice.id, hers.deposit_id]) expect(res.text, `${what} reveals ${secret}`).not.to.include(secret);
        } else {
          expect(res.status, what).to.equal(200);
          expect((res.body as { ResultCode: number }).ResultCode, `${what}: a callback without A's token is ignored`).to.equal(1);
        }
        // A 404 says nothing about the object: it reads like the answer for an id that names nothing.
        if (expected === 'not_found') expect(JSON.stringify(res.body)).not.to.include(alice.email);
      }
      expect(await aliceState()).to.deep.equal(before);
    });

    it('then A herself, and compliance staff, do read them (control: the ids are real)', async () => {
      for (const [path, reader] of [
        [`/payments/orders/${hers.order_id}`, alice],
        [`/users/${alice.id}`, alice],
        [`/appeals/${hers.appeal_id}`, alice],
        [`/webhooks/endpoints/${hers.endpoint_id}/deliveries`, alice],
        [`/payments/orders/${hers.order_id}`, staff],
        [`/users/${alice.id}`, staff],
        [`/appeals/${hers.appeal_id}`, staff],
        [`/wallets/deposits/${hers.deposit_id}`, alice],
        [`/wallets/deposits/${hers.deposit_id}`, staff],
      ] as [string, TestUser][]) {
        const res = await call('get', path, { token: reader.token });
        expect(res.status, `${path}: ${res.text}`).to.equal(200);
      }
    });
  });

  describe('when user B lists things, with or without ?user_id= naming A', () => {
    it('then no list B can read mentions any of A’s objects', async () => {
      const lists = (await specOperations()).filter(
        (op) => op.method === 'get' && pathParameters(op.path).length === 0 && op.roles?.length === 0,
      );
      expect(lists.map((l) => l.key)).to.include.members(['GET /payments/history', 'GET /p2p/history', 'GET /webhooks/endpoints']);
      const secrets = [alice.id, alice.email, hers.order_id, hers.appeal_id, hers.endpoint_id, hers.deposit_id, hers.batch_id];
      for (const op of lists) {
        const takesUserId = op.parameters.some((p) => p.in === 'query' && p.name === 'user_id');
        for (const query of takesUserId ? ['', `?user_id=${alice.id}`] : ['']) {
          const res = await call('get', `${op.path}${query}`, { token: bob.token });
          expect([200, 404], `${op.key}${query}: ${res.text}`).to.include(res.status);
          for (const secret of secrets) expect(res.text, `${op.key}${query} reveals ${secret}`).not.to.include(secret);
        }
      }
    });

    it('then the audit trail, which names everyone’s objects, is refused to B whatever it filters on', async () => {
      for (const query of ['', `?actor=${alice.id}`, `?subject_type=user&subject_id=${alice.id}`]) {
        const res = await call('get', `/compliance/audit${query}`, { token: bob.token });
        expectProblem(res, 403, 'forbidden');
        expect(res.text).not.to.include(alice.email);
      }
    });

    it('then staff filtering by ?user_id= do see A’s objects (control)', async () => {
      const payments = await call('get', `/payments/history?user_id=${alice.id}`, { token: staff.token });
      expect(payments.status).to.equal(200);
      expect(payments.text).to.include(hers.order_id);
      const p2p = await call('get', `/p2p/history?user_id=${alice.id}`, { token: staff.token });
      expect(p2p.status).to.equal(200);
      expect(p2p.text).to.include(hers.ad_id);
    });
  });

  describe('when user B names A’s objects inside a request body', () => {
    it('then every id property of the spec’s request bodies is classified as owned or public', async () => {
      const spec = await servedSpec();
      const ids = bodyIdProperties(spec, await specOperations());
      expect(ids.length).to.be.greaterThan(0);
      expect(
        ids.filter((name) => !(name in BODY_IDS)),
        'body ids without a BOLA classification',
      ).to.deep.equal([]);
    });

    it('then an appeal on A’s order is a 404 and creates nothing', async () => {
      const count = async () =>
        (await rows<{ n: number }>('SELECT count(*)::int AS n FROM appeals WHERE order_id = :id', { id: hers.order_id }))[0].n;
      const before = await count();
      const res = await call('post', '/appeals', {
        token: bob.token,
        body: { order_id: hers.order_id, reason: 'unauthorized', description: 'not my order, but let us try' },
      });
      expectProblem(res, 404, 'not_found', 'B appeals A’s order');
      expect(await count()).to.equal(before);
    });
  });
});
