import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  api,
  completedPayment,
  freshScreeningReview,
  mpesaPayment,
  newUser,
  oneItemBatch,
  postAppeal,
  sellAd,
  type TestUser,
} from '../support/api';
import { creditIncoming } from '../../services/money-in';
import { recordClaim } from '../../repositories/deposit-claims';
import { realRails } from '../support/rails';
import { fundWallets } from '../support/funding';
import { rows } from '../support/db';
import { dispatchWebhookEvents } from '../../workers/webhook-delivery';
import { requestApproval } from '../../services/approvals';
import { strandedPayout } from '../support/unresolved';
import { recordBreaks } from '../../repositories/reconciliation';
import { expectSafeProblem as expectProblem } from '../support/problems';
import { storedGoamlReport } from '../support/goaml';
import { openCaseAbout } from '../support/cases';
import { call, specOperations, UNKNOWN_ID, type Method } from './support';
import { DEFAULT_RULE_SET } from '../../domain/monitoring/rule-set';

/**
 * OWASP API5 (broken function level authorisation): every operation of the spec, and the admin pages
 * outside it, called as each role of docs/access.md#role-matrix. The matrix below is that table; an operation without a row
 * fails the suite, so a new endpoint cannot ship without deciding who may call it.
 */

const ROLES = ['anonymous', 'user', 'compliance', 'admin'] as const;
type Role = (typeof ROLES)[number];

/**
 * allow: no object involved, the call succeeds; own: on the caller's own object, it succeeds; all: on another
 * user's object, it succeeds; 401/403: refused; signed: a provider callback, refused without the provider's
 * signature or token whatever the caller's role.
 */
type Cell = 'allow' | 'own' | 'all' | 401 | 403 | 'signed';

const MATRIX: Record<string, [Cell, Cell, Cell, Cell]> = {
  //                                                  anonymous user    compliance admin
  'POST /auth/register': ['allow', 'allow', 'allow', 'allow'],
  'POST /auth/login': ['allow', 'allow', 'allow', 'allow'],
  'GET /auth/me': [401, 'own', 'own', 'own'],
  'GET /platforms/exchanges': ['allow', 'allow', 'allow', 'allow'],
  'GET /platforms/banks': ['allow', 'allow', 'allow', 'allow'],
  'GET /p2p/ads': ['allow', 'allow', 'allow', 'allow'],
  'GET /p2p/ads/{ad_id}': ['allow', 'allow', 'allow', 'allow'],
  'POST /payments/initiate': [401, 'own', 'own', 'own'],
  // Bulk payouts (docs/payments.md#bulk-payouts): staff read anyone's; only the owner cancels.
  'POST /payouts/batches': [401, 'own', 'own', 'own'],
  // The list is the caller's own batches, staff included (staff read any batch by id).
  'GET /payouts/batches': [401, 'own', 'own', 'own'],
  'GET /payouts/batches/{batch_id}': [401, 'own', 'all', 'all'],
  'GET /payouts/batches/{batch_id}/items': [401, 'own', 'all', 'all'],
  'GET /payouts/batches/{batch_id}/results.csv': [401, 'own', 'all', 'all'],
  'POST /payouts/batches/{batch_id}/cancel': [401, 'own', 'own', 'own'],
  'POST /p2p/ads': [401, 'own', 'own', 'own'],
  // Changing an ad is its owner's alone, staff included (BOLA covers others' ads: 403).
  'PATCH /p2p/ads/{ad_id}': [401, 'own', 'own', 'own'],
  'POST /appeals': [401, 'own', 'own', 'own'],
  'GET /payments/orders/{order_id}': [401, 'own', 'all', 'all'],
  'GET /payments/history': [401, 'own', 'all', 'all'],
  'GET /p2p/history': [401, 'own', 'all', 'all'],
  'GET /appeals/{appeal_id}': [401, 'own', 'all', 'all'],
  'GET /users': [401, 403, 'all', 'all'],
  'GET /users/{user_id}': [401, 'own', 'all', 'all'],
  'PUT /users/{user_id}/kyc': [401, 'own', 'all', 'all'],
  'PUT /appeals/{appeal_id}/approve': [401, 403, 'all', 'all'],
  'PUT /appeals/{appeal_id}/reject': [401, 403, 'all', 'all'],
  'POST /compliance/blocklist': [401, 403, 'allow', 'allow'],
  'GET /compliance/blocklist': [401, 403, 'allow', 'allow'],
  'GET /compliance/report': [401, 403, 'allow', 'allow'],
  'GET /compliance/reconciliation': [401, 403, 'allow', 'allow'],
  'GET /compliance/screen': [401, 403, 'allow', 'allow'],
  'GET /compliance/reviews': [401, 403, 'allow', 'allow'],
  'POST /compliance/reviews/{review_id}/decision': [401, 403, 'all', 'all'],
  // Four-eyes requests: staff only, decided by a staff member other than the one who asked.
  'GET /compliance/approvals': [401, 403, 'allow', 'allow'],
  'GET /appeals': [401, 403, 'allow', 'allow'],
  'GET /compliance/approvals/{request_id}': [401, 403, 'all', 'all'],
  'POST /compliance/approvals/{request_id}/approve': [401, 403, 'all', 'all'],
  'POST /compliance/approvals/{request_id}/reject': [401, 403, 'all', 'all'],
  // The audit trail of staff actions (docs/compliance.md#audit-trail): admins only.
  'GET /compliance/audit': [401, 403, 403, 'allow'],
  // Monitoring rules (docs/monitoring.md#rules-as-data): compliance staff read and change them.
  'GET /compliance/monitoring/rules': [401, 403, 'allow', 'allow'],
  'PUT /compliance/monitoring/rules': [401, 403, 'allow', 'allow'],
  // Reconciliation breaks (docs/wallets.md#reconciliation-line-by-line): staff only.
  'GET /compliance/reconciliation/breaks': [401, 403, 'allow', 'allow'],
  'POST /compliance/reconciliation/breaks/{break_id}/resolve': [401, 403, 'all', 'all'],
  'POST /compliance/reconciliation/runs': [401, 403, 'allow', 'allow'],
  // goAML reports to the FRC (docs/compliance.md#goaml-reports): staff only, with their login.
  'POST /compliance/goaml/ctr': [401, 403, 'allow', 'allow'],
  'GET /compliance/goaml/{report_id}.xml': [401, 403, 'all', 'all'],
  // Monitoring cases (docs/compliance.md#cases): staff only, with their login; closing takes a second one.
  'GET /compliance/cases': [401, 403, 'allow', 'allow'],
  'GET /compliance/cases/{case_id}': [401, 403, 'all', 'all'],
  'POST /compliance/cases/{case_id}/assign': [401, 403, 'all', 'all'],
  'POST /compliance/cases/{case_id}/notes': [401, 403, 'all', 'all'],
  'POST /compliance/cases/{case_id}/close': [401, 403, 'all', 'all'],
  // Unresolved payouts (docs/payments.md#unknown-outcomes): staff only; resolving one is a four-eyes request.
  'GET /operations/unresolved-payouts': [401, 403, 'allow', 'allow'],
  'POST /operations/unresolved-payouts/{order_id}/resolve': [401, 403, 'all', 'all'],
  // Extensions: the primary bank's account (admin only), webhooks (each caller's own), provider callbacks.
  'GET /platforms/banks/primary/balance': [401, 403, 403, 'allow'],
  'GET /platforms/banks/primary/transactions': [401, 403, 403, 'allow'],
  'POST /webhooks/endpoints': [401, 'own', 'own', 'own'],
  'GET /webhooks/endpoints': [401, 'own', 'own', 'own'],
  'DELETE /webhooks/endpoints/{endpoint_id}': [401, 'own', 'own', 'own'],
  'GET /webhooks/endpoints/{endpoint_id}/deliveries': [401, 'own', 'own', 'own'],
  // API keys (docs/access.md#api-keys): each caller's own, made and revoked signed in; what a key itself may
  // do (never make or revoke keys, never a staff operation or the queue dashboard) is least-privilege-keys.test.ts.
  'POST /api-keys': [401, 'own', 'own', 'own'],
  'GET /api-keys': [401, 'own', 'own', 'own'],
  'DELETE /api-keys/{key_id}': [401, 'own', 'own', 'own'],
  // Events (docs/events.md#listing-events): each caller's own; retrying a delivery, on the caller's own endpoint.
  'GET /events': [401, 'own', 'own', 'own'],
  'POST /webhooks/endpoints/{endpoint_id}/deliveries/{delivery_id}/retry': [401, 'own', 'own', 'own'],
  'POST /callbacks/sandbox': ['signed', 'signed', 'signed', 'signed'],
  // Wallets (docs/wallets.md#wallets): each caller's own, staff anyone's; unmatched money is staff's; simulators admin's.
  'GET /wallets': [401, 'own', 'all', 'all'],
  'POST /wallets/deposits': [401, 'own', 'own', 'own'],
  'GET /wallets/{currency}/transactions': [401, 'own', 'all', 'all'],
  'GET /wallets/{currency}/deposit-address': [401, 'own', 'own', 'own'],
  'GET /wallets/deposits/{deposit_id}': [401, 'own', 'all', 'all'],
  'GET /wallets/unmatched-deposits': [401, 403, 'allow', 'allow'],
  'POST /wallets/unmatched-deposits/{deposit_id}/assign': [401, 403, 'all', 'all'],
  // Unproven money in (docs/wallets.md#money-in-is-proven): staff's, and asking the rail again is all they can do.
  'GET /wallets/unproven-deposits': [401, 403, 'allow', 'allow'],
  'POST /wallets/unproven-deposits/{claim_id}/recheck': [401, 403, 'allow', 'allow'],
  'POST /sandbox/c2b': [401, 403, 403, 'allow'],
  'POST /sandbox/bank-credits': [401, 403, 403, 'allow'],
  'POST /sandbox/crypto-deposits': [401, 403, 403, 'allow'],
  'POST /callbacks/mpesa/stk/{order_id}': ['signed', 'signed', 'signed', 'signed'],
  'POST /callbacks/mpesa/b2c/{order_id}/result': ['signed', 'signed', 'signed', 'signed'],
  'POST /callbacks/mpesa/b2c/{order_id}/status': ['signed', 'signed', 'signed', 'signed'],
  'POST /callbacks/mpesa/b2c/{order_id}/timeout': ['signed', 'signed', 'signed', 'signed'],
  'POST /callbacks/mpesa/c2b/validation': ['signed', 'signed', 'signed', 'signed'],
  'POST /callbacks/mpesa/c2b/confirmation': ['signed', 'signed', 'signed', 'signed'],
  'POST /callbacks/mpesa/c2b/status/{claim_id}': ['signed', 'signed', 'signed', 'signed'],
  'POST /callbacks/mpesa/balance/{query_id}': ['signed', 'signed', 'signed', 'signed'],
};

/** Served only while their rail is the sandbox: with every method on a real rail they are gone (404). */
const SANDBOX_ONLY = ['POST /callbacks/sandbox', 'POST /sandbox/c2b', 'POST /sandbox/bank-credits', 'POST /sandbox/crypto-deposits'];

/** Money in for `userId` (or, without one, quoting a reference nobody has), through the one crediting path. */
async function depositFor(userId: string | undefined): Promise<string> {
  const { deposit } = await creditIncoming({
    channel: 'mpesa_c2b',
    rail: 'sandbox',
    providerReference: `BFLA${randomUUID()}`,
    currency: 'KES',
    amountMinor: 10_000n,
    ...(userId ? { userId } : { quotedReference: 'PGUNKNOWNREF' }),
    payer: {},
  });
  return deposit.deposit_id;
}

/** An open reconciliation break below the four-eyes threshold, as a run records one, for staff to resolve. */
async function openBreak(): Promise<string> {
  const [row] = await recordBreaks('sandbox', 'bank_transfer', [
    {
      kind: 'missing_in_ledger',
      direction: 'in',
      reference: `BFLA-${randomUUID()}`,
      currency: 'KES',
      railAmountMinor: 1_000n,
      ledgerAmountMinor: null,
      railLines: 1,
      ledgerLines: 0,
      day: new Date().toISOString().slice(0, 10),
      depositIds: [],
      orderIds: [],
    },
  ]);
  return row.id;
}

/** A paybill confirmation refused at the door (kept for staff), readable, so that staff can ask the rail about it. */
async function unprovenClaim(): Promise<string> {
  const { row } = await recordClaim({
    channel: 'mpesa_c2b',
    status: 'rejected',
    reason: 'token_unknown',
    providerReference: `BF${randomUUID().replace(/-/g, '').slice(0, 8).toUpperCase()}`,
    amountMinor: '10000',
    accountReference: 'PGUNKNOWNREF',
    payerPhone: '+254712345678',
    payerName: null,
    sourceAddress: '203.0.113.7',
    body: {},
  });
  return row.id;
}

/** Admin pages outside /api/v1 (not in the spec), in the same matrix. */
const OUTSIDE_API: Record<string, [Cell, Cell, Cell, Cell]> = {
  'GET /admin/queues': [401, 403, 403, 'allow'],
  'GET /admin/queues/api/queues': [401, 403, 403, 'allow'],
};

interface Built {
  method: Method;
  /** Full path from the server root. */
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Acts as another account holding the same role (an action a principal can take only once). */
  as?: TestUser;
}

const ROLE_SETS: Record<Exclude<Role, 'anonymous'>, ('user' | 'compliance' | 'admin')[]> = {
  user: ['user'],
  compliance: ['user', 'compliance'],
  admin: ['user', 'compliance', 'admin'],
};

describe('security: function level authorisation (BFLA), the role matrix of docs/access.md#role-matrix', function () {
  this.timeout(120_000);
  const principals = {} as Record<Exclude<Role, 'anonymous'>, TestUser>;
  let victim: TestUser;
  let victimOrder: string;
  let victimAppeal: string;
  let victimAd: string;
  let victimDeposit: string;
  let victimBatch: string;
  /** Lists the names the reviews to decide are made from. */
  let reviewer: TestUser;

  before(async () => {
    reviewer = await newUser({ roles: ['user', 'compliance'] });
    for (const role of ['user', 'compliance', 'admin'] as const)
      principals[role] = await newUser({ kycStatus: 'verified', roles: ROLE_SETS[role] });
    victim = await newUser({ kycStatus: 'verified' });
    victimOrder = (await completedPayment(victim)).order_id;
    const appeal = await postAppeal(victim, { order_id: victimOrder, reason: 'other', description: 'for reading' });
    expect(appeal.status, appeal.text).to.equal(201);
    victimAppeal = (appeal.body as { appeal_id: string }).appeal_id;
    const ad = await call('post', '/p2p/ads', { token: victim.token, body: sellAd(), headers: { 'Idempotency-Key': randomUUID() } });
    expect(ad.status, ad.text).to.equal(201);
    victimAd = (ad.body as { ad_id: string }).ad_id;
    victimDeposit = await depositFor(victim.id);
    victimBatch = await ownBatch(victim);
  });

  /** An open appeal on a completed payment of a fresh user: something staff can decide once. */
  async function freshAppeal(): Promise<string> {
    const owner = await newUser();
    const order = await completedPayment(owner);
    const res = await postAppeal(owner, { order_id: order.order_id, reason: 'payment_not_received', description: 'decide me' });
    expect(res.status, res.text).to.equal(201);
    return (res.body as { appeal_id: string }).appeal_id;
  }

  async function ownAd(user: TestUser): Promise<string> {
    const res = await call('post', '/p2p/ads', { token: user.token, body: sellAd(), headers: { 'Idempotency-Key': randomUUID() } });
    expect(res.status, res.text).to.equal(201);
    return (res.body as { ad_id: string }).ad_id;
  }

  async function ownEndpoint(user: TestUser): Promise<string> {
    const res = await call('post', '/webhooks/endpoints', { token: user.token, body: { url: 'https://93.184.215.14/bfla' } });
    expect(res.status, res.text).to.equal(201);
    return (res.body as { endpoint_id: string }).endpoint_id;
  }

  /** A delivery to a fresh endpoint of the user: money comes in after it is registered, and is dispatched. */
  async function ownDelivery(user: TestUser): Promise<string> {
    const endpointId = await ownEndpoint(user);
    await fundWallets(user.id, { KES: 100n });
    await dispatchWebhookEvents(1_000_000);
    const [delivery] = await rows<{ id: string }>('SELECT id FROM webhook_deliveries WHERE endpoint_id = :endpointId LIMIT 1', {
      endpointId,
    });
    return `/webhooks/endpoints/${endpointId}/deliveries/${delivery.id}/retry`;
  }

  /** A four-eyes request to assign fresh unmatched money to the victim, asked by a staff member of its own. */
  async function pendingRequest(): Promise<string> {
    const maker = await newUser({ roles: ['compliance'], funded: false });
    const depositId = await depositFor(undefined);
    const request = await requestApproval(
      { id: maker.id, roles: ['compliance'] },
      { kind: 'assign_unmatched_deposit', subjectId: depositId, currency: 'KES', amountMinor: 10_000n, payload: { user_id: victim.id } },
    );
    return request.request_id;
  }

  const payoutBatch = () => ({ items: [{ ...mpesaPayment({ amount: '10.00' }), reference: 'BFLA-1' }] });

  /** A fresh bulk payout of the user's own, of one item. */
  const ownBatch = (user: TestUser) => oneItemBatch(user, 'BFLA-1');

  async function ownKey(user: TestUser): Promise<string> {
    const res = await call('post', '/api-keys', { token: user.token, body: { name: 'bfla', mode: 'test', scopes: ['wallets:read'] } });
    expect(res.status, res.text).to.equal(201);
    return (res.body as { key_id: string }).key_id;
  }

  /** A well-formed request of the operation for `role`, on its own objects or (staff) on the victim's. */
  async function build(key: string, role: Role): Promise<Built> {
    const me = role === 'anonymous' ? undefined : principals[role];
    const any = me ?? principals.user;
    const v1 = (method: Method, path: string, extra: Omit<Built, 'method' | 'url'> = {}): Built => ({
      method,
      url: `/api/v1${path}`,
      ...extra,
    });
    switch (key) {
      case 'POST /auth/register':
        return v1('post', '/auth/register', {
          body: { email: `bfla-${randomUUID()}@example.com`, password: 'a-long-enough-password', full_name: 'Matrix Cell' },
        });
      case 'POST /auth/login':
        return v1('post', '/auth/login', { body: { email: any.email, password: any.password } });
      case 'GET /auth/me':
        return v1('get', '/auth/me');
      case 'GET /platforms/exchanges':
        return v1('get', '/platforms/exchanges?limit=5');
      case 'GET /platforms/banks':
        return v1('get', '/platforms/banks');
      case 'GET /p2p/ads':
        return v1('get', '/p2p/ads');
      case 'GET /p2p/ads/{ad_id}':
        return v1('get', `/p2p/ads/${victimAd}`);
      case 'POST /payments/initiate':
        return v1('post', '/payments/initiate', { body: mpesaPayment(), headers: { 'Idempotency-Key': randomUUID() } });
      case 'POST /payouts/batches':
        return v1('post', '/payouts/batches', { body: payoutBatch(), headers: { 'Idempotency-Key': randomUUID() } });
      case 'GET /payouts/batches':
        return v1('get', '/payouts/batches');
      case 'GET /payouts/batches/{batch_id}':
        return v1('get', `/payouts/batches/${role === 'user' ? await ownBatch(any) : victimBatch}`);
      case 'GET /payouts/batches/{batch_id}/items':
        return v1('get', `/payouts/batches/${role === 'user' ? await ownBatch(any) : victimBatch}/items`);
      case 'GET /payouts/batches/{batch_id}/results.csv':
        return v1('get', `/payouts/batches/${role === 'user' ? await ownBatch(any) : victimBatch}/results.csv`);
      case 'POST /payouts/batches/{batch_id}/cancel':
        return v1('post', `/payouts/batches/${me ? await ownBatch(me) : victimBatch}/cancel`);
      case 'POST /p2p/ads':
        return v1('post', '/p2p/ads', { body: sellAd(), headers: { 'Idempotency-Key': randomUUID() } });
      case 'PATCH /p2p/ads/{ad_id}':
        return v1('patch', `/p2p/ads/${await ownAd(any)}`, { body: { terms: 'release within 5 minutes', status: 'paused' } });
      case 'POST /appeals': {
        const order = me ? (await completedPayment(me)).order_id : UNKNOWN_ID;
        return v1('post', '/appeals', { body: { order_id: order, reason: 'other', description: 'my own order' } });
      }
      case 'GET /payments/orders/{order_id}': {
        const order = role === 'user' ? (await completedPayment(any)).order_id : victimOrder;
        return v1('get', `/payments/orders/${order}`);
      }
      case 'GET /payments/history':
        return v1('get', role === 'compliance' || role === 'admin' ? `/payments/history?user_id=${victim.id}` : '/payments/history');
      case 'GET /p2p/history':
        return v1('get', role === 'compliance' || role === 'admin' ? `/p2p/history?user_id=${victim.id}` : '/p2p/history');
      case 'GET /appeals/{appeal_id}': {
        if (role !== 'user') return v1('get', `/appeals/${victimAppeal}`);
        const order = await completedPayment(any);
        const own = await postAppeal(any, { order_id: order.order_id, reason: 'other', description: 'mine' });
        return v1('get', `/appeals/${(own.body as { appeal_id: string }).appeal_id}`);
      }
      case 'GET /users':
        return v1('get', '/users?limit=5');
      case 'GET /users/{user_id}':
        return v1('get', `/users/${role === 'user' ? any.id : victim.id}`);
      case 'PUT /users/{user_id}/kyc': {
        const submission = {
          id_type: 'national_id',
          id_number: String(20_000_000 + Math.floor(Math.random() * 70_000_000)),
          date_of_birth: '1990-04-12',
        };
        if (role === 'anonymous') return v1('put', `/users/${victim.id}/kyc`, { body: submission });
        if (role === 'user') {
          // Self-submission, by an account that has not been verified yet.
          const fresh = await newUser();
          return v1('put', `/users/${fresh.id}/kyc`, { body: submission, as: fresh });
        }
        // A decision on someone else's pending submission.
        const applicant = await newUser();
        const submitted = await call('put', `/users/${applicant.id}/kyc`, { token: applicant.token, body: submission });
        expect(submitted.status, submitted.text).to.equal(200);
        const submissionId = (submitted.body as { kyc: { submission_id: string } }).kyc.submission_id;
        return v1('put', `/users/${applicant.id}/kyc`, {
          body: { status: 'verified', reason: 'documents match', submission_id: submissionId },
        });
      }
      case 'PUT /appeals/{appeal_id}/approve':
        return v1('put', `/appeals/${role === 'compliance' || role === 'admin' ? await freshAppeal() : victimAppeal}/approve`, {
          body: { note: 'refund it', action: 'refund' },
        });
      case 'PUT /appeals/{appeal_id}/reject':
        return v1('put', `/appeals/${role === 'compliance' || role === 'admin' ? await freshAppeal() : victimAppeal}/reject`, {
          body: { note: 'nothing wrong' },
        });
      case 'GET /wallets':
        return v1('get', role === 'compliance' || role === 'admin' ? `/wallets?user_id=${victim.id}` : '/wallets');
      case 'POST /wallets/deposits':
        return v1('post', '/wallets/deposits', {
          body: { amount: '100.00', currency: 'KES', method: 'mobile_money', phone: '+254712345678' },
          headers: { 'Idempotency-Key': randomUUID() },
        });
      case 'GET /wallets/{currency}/transactions':
        return v1(
          'get',
          role === 'compliance' || role === 'admin' ? `/wallets/KES/transactions?user_id=${victim.id}` : '/wallets/KES/transactions',
        );
      case 'GET /wallets/{currency}/deposit-address':
        return v1('get', '/wallets/USDT/deposit-address');
      case 'GET /wallets/deposits/{deposit_id}':
        return v1('get', `/wallets/deposits/${role === 'user' ? await depositFor(any.id) : victimDeposit}`);
      case 'GET /wallets/unmatched-deposits':
        return v1('get', '/wallets/unmatched-deposits?limit=5');
      case 'POST /wallets/unmatched-deposits/{deposit_id}/assign':
        return v1('post', `/wallets/unmatched-deposits/${await depositFor(undefined)}/assign`, { body: { user_id: victim.id } });
      case 'GET /compliance/approvals':
        return v1('get', '/compliance/approvals?status=pending&limit=5');
      case 'GET /compliance/monitoring/rules':
        return v1('get', '/compliance/monitoring/rules');
      case 'PUT /compliance/monitoring/rules': {
        // The change is made from the current version, read by staff (a stale one would be a 409).
        const current = await call('get', '/compliance/monitoring/rules', { token: principals.compliance.token });
        const version = (current.body as { version: number }).version;
        return v1('put', '/compliance/monitoring/rules', { body: { based_on_version: version, ...DEFAULT_RULE_SET } });
      }
      case 'GET /compliance/audit':
        return v1('get', `/compliance/audit?actor=${victim.id}&limit=5`);
      case 'GET /appeals':
        return v1('get', '/appeals?awaiting_second_approval=true&limit=5');
      case 'GET /compliance/approvals/{request_id}':
        return v1('get', `/compliance/approvals/${await pendingRequest()}`);
      case 'POST /compliance/approvals/{request_id}/approve':
        return v1('post', `/compliance/approvals/${await pendingRequest()}/approve`, { body: { note: 'checked' } });
      case 'POST /compliance/approvals/{request_id}/reject':
        return v1('post', `/compliance/approvals/${await pendingRequest()}/reject`, { body: { note: 'not ours' } });
      case 'GET /wallets/unproven-deposits':
        return v1('get', '/wallets/unproven-deposits?limit=5');
      case 'POST /wallets/unproven-deposits/{claim_id}/recheck':
        return v1('post', `/wallets/unproven-deposits/${await unprovenClaim()}/recheck`);
      case 'POST /callbacks/mpesa/c2b/status/{claim_id}':
        return v1('post', `/callbacks/mpesa/c2b/status/${await unprovenClaim()}?token=forged`, {
          body: { Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'ok', OriginatorConversationID: 'o', ConversationID: 'c' } },
        });
      case 'GET /compliance/reconciliation/breaks':
        return v1('get', '/compliance/reconciliation/breaks?limit=5');
      case 'POST /compliance/reconciliation/breaks/{break_id}/resolve':
        return v1('post', `/compliance/reconciliation/breaks/${await openBreak()}/resolve`, { body: { note: 'journal 118' } });
      case 'POST /compliance/reconciliation/runs':
        return v1('post', '/compliance/reconciliation/runs', { body: { from: new Date(Date.now() - 60_000).toISOString() } });
      case 'GET /operations/unresolved-payouts':
        return v1('get', '/operations/unresolved-payouts?limit=5');
      case 'POST /operations/unresolved-payouts/{order_id}/resolve':
        return v1('post', `/operations/unresolved-payouts/${await strandedPayout(victim.id)}/resolve`, {
          body: { outcome: 'not_sent', evidence: 'no such transfer on the statement' },
        });
      case 'POST /sandbox/c2b':
        return v1('post', '/sandbox/c2b', { body: { deposit_reference: 'PGUNKNOWNREF', amount: '1.00', phone: '+254712345678' } });
      case 'POST /sandbox/bank-credits':
        return v1('post', '/sandbox/bank-credits', { body: { deposit_reference: 'PGUNKNOWNREF', amount: '1.00' } });
      case 'POST /sandbox/crypto-deposits':
        return v1('post', '/sandbox/crypto-deposits', { body: { user_id: victim.id, currency: 'USDT', amount: '1.000000' } });
      case 'POST /callbacks/mpesa/c2b/validation':
      case 'POST /callbacks/mpesa/c2b/confirmation':
        return v1('post', `/callbacks/mpesa/c2b/${key.endsWith('validation') ? 'validation' : 'confirmation'}`, {
          body: { TransID: 'BFLA123456', TransAmount: '100.00', BillRefNumber: 'PGUNKNOWNREF', MSISDN: '254712345678' },
        });
      case 'POST /compliance/blocklist':
        return v1('post', '/compliance/blocklist', {
          body: { type: 'crypto_address', value: `bc1q${randomUUID().replace(/-/g, '')}`, reason: 'matrix' },
        });
      case 'GET /compliance/blocklist':
        return v1('get', '/compliance/blocklist?limit=5');
      case 'POST /compliance/goaml/ctr':
        // The last hour holds the victim's completed payment, above the test CTR threshold: a report is made.
        return v1('post', '/compliance/goaml/ctr', {
          body: { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString() },
        });
      case 'GET /compliance/goaml/{report_id}.xml':
        return v1('get', `/compliance/goaml/${await storedGoamlReport(victim.id)}.xml`);
      case 'GET /compliance/cases':
        return v1('get', '/compliance/cases?limit=5');
      case 'GET /compliance/cases/{case_id}':
        return v1('get', `/compliance/cases/${await openCaseAbout((await newUser({ funded: false })).id)}`);
      case 'POST /compliance/cases/{case_id}/assign':
        return v1('post', `/compliance/cases/${await openCaseAbout((await newUser({ funded: false })).id)}/assign`, {
          body: { assignee_id: me?.id ?? any.id },
        });
      case 'POST /compliance/cases/{case_id}/notes':
        return v1('post', `/compliance/cases/${await openCaseAbout((await newUser({ funded: false })).id)}/notes`, {
          body: { text: 'matrix' },
        });
      case 'POST /compliance/cases/{case_id}/close':
        return v1('post', `/compliance/cases/${await openCaseAbout((await newUser({ funded: false })).id)}/close`, {
          body: { outcome: 'false_positive', note: 'matrix' },
        });
      case 'GET /compliance/report':
        return v1('get', '/compliance/report?from=2020-01-01&to=2020-01-02');
      case 'GET /compliance/reconciliation':
        return v1('get', '/compliance/reconciliation');
      case 'GET /compliance/screen':
        return v1('get', '/compliance/screen?name=John%20Kamau');
      case 'GET /compliance/reviews':
        return v1('get', '/compliance/reviews?limit=5');
      case 'POST /compliance/reviews/{review_id}/decision':
        return v1(
          'post',
          `/compliance/reviews/${role === 'compliance' || role === 'admin' ? await freshScreeningReview(reviewer) : UNKNOWN_ID}/decision`,
          {
            body: { decision: 'clear', note: 'matrix' },
          },
        );
      case 'GET /platforms/banks/primary/balance':
        return v1('get', '/platforms/banks/primary/balance');
      case 'GET /platforms/banks/primary/transactions':
        return v1('get', '/platforms/banks/primary/transactions');
      case 'POST /webhooks/endpoints':
        return v1('post', '/webhooks/endpoints', { body: { url: 'https://93.184.215.14/matrix' } });
      case 'GET /webhooks/endpoints':
        return v1('get', '/webhooks/endpoints');
      case 'DELETE /webhooks/endpoints/{endpoint_id}':
        return v1('delete', `/webhooks/endpoints/${await ownEndpoint(any)}`);
      case 'GET /webhooks/endpoints/{endpoint_id}/deliveries':
        return v1('get', `/webhooks/endpoints/${await ownEndpoint(any)}/deliveries`);
      case 'POST /api-keys':
        return v1('post', '/api-keys', { body: { name: 'bfla', mode: 'test', scopes: ['wallets:read'] } });
      case 'GET /api-keys':
        return v1('get', '/api-keys');
      case 'GET /events':
        return v1('get', '/events');
      case 'POST /webhooks/endpoints/{endpoint_id}/deliveries/{delivery_id}/retry':
        return v1('post', await ownDelivery(any));
      case 'DELETE /api-keys/{key_id}':
        return v1('delete', `/api-keys/${await ownKey(any)}`);
      case 'POST /callbacks/sandbox':
        return v1('post', '/callbacks/sandbox', {
          body: {
            reference: 'r',
            merchant_reference: victimOrder,
            status: 'failed',
            failure_code: 'insufficient_funds',
            provider_code: null,
          },
        });
      case 'POST /callbacks/mpesa/stk/{order_id}':
        return v1('post', `/callbacks/mpesa/stk/${victimOrder}`, {
          body: { Body: { stkCallback: { MerchantRequestID: 'm', CheckoutRequestID: 'c', ResultCode: 1032, ResultDesc: 'cancelled' } } },
        });
      case 'POST /callbacks/mpesa/b2c/{order_id}/result':
        return v1('post', `/callbacks/mpesa/b2c/${victimOrder}/result`, {
          body: {
            Result: { ResultType: 0, ResultCode: 2001, ResultDesc: 'initiator', OriginatorConversationID: 'o', ConversationID: 'c' },
          },
        });
      case 'POST /callbacks/mpesa/b2c/{order_id}/status':
        return v1('post', `/callbacks/mpesa/b2c/${victimOrder}/status`, {
          body: {
            Result: { ResultType: 0, ResultCode: 2001, ResultDesc: 'initiator', OriginatorConversationID: 'o', ConversationID: 'c' },
          },
        });
      case 'POST /callbacks/mpesa/balance/{query_id}':
        return v1('post', `/callbacks/mpesa/balance/${randomUUID()}?token=forged`, {
          body: { Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'ok', OriginatorConversationID: 'o', ConversationID: 'c' } },
        });
      case 'POST /callbacks/mpesa/b2c/{order_id}/timeout':
        return v1('post', `/callbacks/mpesa/b2c/${victimOrder}/timeout`, {
          body: {
            Result: { ResultType: 0, ResultCode: 2001, ResultDesc: 'initiator', OriginatorConversationID: 'o', ConversationID: 'c' },
          },
        });
      case 'GET /admin/queues':
        return { method: 'get', url: '/admin/queues' };
      case 'GET /admin/queues/api/queues':
        return { method: 'get', url: '/admin/queues/api/queues' };
      default:
        throw new Error(`no request for ${key}`);
    }
  }

  it('then every operation of the spec has a row, and every row is an operation of the spec', async () => {
    const ops = (await specOperations()).map((op) => op.key).sort();
    expect(
      ops.filter((k) => !(k in MATRIX)),
      'operations without a row in the role matrix',
    ).to.deep.equal([]);
    // With every method on a real rail the sandbox callback is neither served nor documented.
    const unmounted = realRails ? SANDBOX_ONLY : [];
    expect(
      Object.keys(MATRIX).filter((k) => !ops.includes(k) && !unmounted.includes(k)),
      'rows for operations the spec does not have',
    ).to.deep.equal([]);
  });

  it('then the matrix agrees with what the spec declares: public operations have no security, staff ones name their roles', async () => {
    for (const op of await specOperations()) {
      const [anonymous, user, compliance] = MATRIX[op.key];
      if (anonymous === 'allow' || anonymous === 'signed') expect(op.roles, `${op.key} is public`).to.equal(undefined);
      else expect(op.roles, `${op.key} needs a token`).to.be.an('array');
      if (user === 403) expect(op.roles, `${op.key} names the roles it admits`).to.be.an('array').that.is.not.empty.and.not.include('user');
      if (compliance === 403) expect(op.roles, `${op.key} is admin only`).to.deep.equal(['admin']);
    }
  });

  for (const [key, cells] of Object.entries({ ...MATRIX, ...OUTSIDE_API })) {
    describe(`when ${key} is called by each role`, () => {
      it(`then the answers are ${cells.join(' / ')} for ${ROLES.join(' / ')}`, async () => {
        const documents503 = (await specOperations()).find((op) => op.key === key)?.responses.includes('503') ?? false;
        for (const [i, role] of ROLES.entries()) {
          const cell = cells[i];
          const built = await build(key, role);
          const caller = built.as ?? (role === 'anonymous' ? undefined : principals[role]);
          let req = api()[built.method](built.url);
          if (caller) req = req.set('Authorization', `Bearer ${caller.token}`);
          for (const [name, value] of Object.entries(built.headers ?? {})) req = req.set(name, value);
          const res = await (built.body === undefined ? req : req.send(built.body as object));
          const what = `${role}: ${key} (${res.status} ${res.text.slice(0, 200)})`;
          if (realRails && SANDBOX_ONLY.includes(key) && key !== 'POST /callbacks/sandbox') expectProblem(res, 404, 'not_found', what);
          else if (cell === 401) expectProblem(res, 401, 'unauthenticated', what);
          else if (cell === 403) expectProblem(res, 403, 'forbidden', what);
          else if (cell === 'signed') {
            // With every method on a real rail the sandbox callback is not mounted at all.
            if (key === 'POST /callbacks/sandbox') {
              if (realRails) expectProblem(res, 404, 'not_found', what);
              else expectProblem(res, 401, 'unauthenticated', what);
            } else expect((res.body as { ResultCode?: number }).ResultCode, what).to.equal(1);
          } else {
            const unavailable = documents503 && res.status === 503 && (res.body as { code?: string }).code === 'dependency_unavailable';
            expect((res.status >= 200 && res.status < 300) || res.status === 303 || unavailable, what).to.equal(true);
          }
        }
      });
    });
  }

  it('then no provider callback changed the victim’s completed order', async () => {
    const order = await call('get', `/payments/orders/${victimOrder}`, { token: victim.token });
    expect((order.body as { status: string }).status).to.equal('completed');
  });
});
