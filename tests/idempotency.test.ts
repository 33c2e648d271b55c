import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { config, reloadConfig } from '../platform/config';
import { database } from '../platform/database';
import { closeTemporal, temporalClient } from '../platform/temporal';
import { reconcileUnstartedOrders } from '../workflows/client';
import { api, initiate, mpesaPayment, newUser, p2pTrade, postAd, sellAd, waitForOrder, type TestUser } from './support/api';
import { rows } from './support/db';
import { realRails, SELLER_PHONE } from './support/rails';

interface KeyRow {
  state: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
}

/** The key as stored for this user's login. */
async function storedKey(user: TestUser, key: string): Promise<KeyRow | undefined> {
  const [row] = await rows<KeyRow>(
    `SELECT state, response_status, response_headers, response_body FROM idempotency_keys
      WHERE scope = :scope AND method = 'POST' AND path = '/payments/initiate' AND key = :key`,
    { scope: `user:${user.id}`, key },
  );
  return row;
}

/** The request fingerprint as docs/conventions.md#idempotency keeps it: SHA-256 of the body's JSON, keys sorted. */
function fingerprint(body: unknown): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
          )
        : value;
  return createHash('sha256')
    .update(JSON.stringify(canonical(body)))
    .digest('hex');
}

/** A first request with this key and body still running (claimed `lockedSecondsAgo` ago), as the api records one. */
async function claimedElsewhere(user: TestUser, key: string, body: unknown, lockedSecondsAgo: number): Promise<void> {
  await database().query(
    `INSERT INTO idempotency_keys (scope, method, path, key, request_hash, locked_at, expires_at)
     VALUES (:scope, 'POST', '/payments/initiate', :key, :hash, now() - make_interval(secs => :ago), now() + interval '1 day')`,
    { replacements: { scope: `user:${user.id}`, key, hash: fingerprint(body), ago: lockedSecondsAgo } },
  );
}

type Query = (...args: unknown[]) => unknown;

/** Every SQL statement this process sends while `work` runs (other work of the process included). */
async function statementsDuring<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const prototype = pg.Client.prototype as unknown as { query: Query };
  const original = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const [query] = args;
    const text = typeof query === 'string' ? query : (query as { text?: unknown } | undefined)?.text;
    statements.push(typeof text === 'string' ? text : '');
    return original.apply(this, args);
  };
  try {
    return { result: await work(), statements };
  } finally {
    prototype.query = original;
  }
}

describe('idempotency of POST /payments/initiate', () => {
  describe('when the Idempotency-Key header is missing', () => {
    it('then the request is a 400 idempotency_key_missing and nothing is created', async () => {
      const user = await newUser();
      const res = await api().post('/api/v1/payments/initiate').set(user.auth).send(mpesaPayment());
      expect(res.status).to.equal(400);
      expect((res.body as { code: string }).code).to.equal('idempotency_key_missing');
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(0);
    });
  });

  describe('when the same key is sent again with the same body', () => {
    it('then the first response is replayed byte for byte with Idempotent-Replayed: true', async () => {
      const user = await newUser();
      const key = randomUUID();
      const first = await initiate(user, mpesaPayment(), key);
      expect(first.status).to.equal(202);
      expect(first.headers['idempotent-replayed']).to.equal(undefined);
      const again = await initiate(user, mpesaPayment(), key);
      expect(again.status).to.equal(202);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.text).to.equal(first.text);
      expect(again.headers.location).to.equal(first.headers.location);
      expect(again.headers['content-type']).to.equal(first.headers['content-type']);
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(1);
    });

    it('then what is stored for the key is what was sent: status, headers and body byte for byte', async () => {
      const user = await newUser();
      const key = randomUUID();
      const first = await initiate(user, mpesaPayment(), key);
      expect(first.status, first.text).to.equal(202);
      expect(await storedKey(user, key)).to.deep.equal({
        state: 'completed',
        response_status: 202,
        response_headers: { 'content-type': first.headers['content-type'], location: first.headers.location },
        response_body: first.text,
      });
    });
  });

  describe('when a payment is accepted', () => {
    it('then the key is claimed and its answer stored by the statement that records the order, and by no other', async () => {
      const user = await newUser();
      const key = randomUUID();
      const { result: res, statements } = await statementsDuring(() => initiate(user, mpesaPayment(), key));
      expect(res.status, res.text).to.equal(202);
      const onKeys = statements.filter((sql) => /idempotency_keys/.test(sql));
      expect(onKeys, onKeys.join('\n---\n')).to.have.length(1);
      expect(onKeys[0]).to.match(/INSERT INTO orders/);
      expect((await storedKey(user, key))?.response_body).to.equal(res.text);
    });
  });

  describe('when a P2P trade is accepted (its order and trade recorded in one transaction)', () => {
    it('then its answer is stored with them and replayed byte for byte, and one trade exists', async () => {
      const seller = await newUser({ kycStatus: 'verified', phone: SELLER_PHONE });
      const buyer = await newUser({ kycStatus: 'verified' });
      const ad = await postAd(seller, sellAd());
      expect(ad.status, ad.text).to.equal(201);
      const key = randomUUID();
      const body = p2pTrade((ad.body as { ad_id: string }).ad_id, '1300.00');
      const first = await initiate(buyer, body, key);
      expect(first.status, first.text).to.equal(202);
      expect((await storedKey(buyer, key))?.response_body).to.equal(first.text);
      const again = await initiate(buyer, body, key);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.text).to.equal(first.text);
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: buyer.id })).to.have.length(1);
      expect(await rows('SELECT 1 FROM p2p_trades WHERE taker_id = :id', { id: buyer.id })).to.have.length(1);
      await waitForOrder(buyer, (first.body as { order_id: string }).order_id);
    });
  });

  describe('when a payment is refused', () => {
    it('then a refusal judged with the order (short of funds) is kept and replayed byte for byte', async () => {
      const user = await newUser({ funded: false });
      const key = randomUUID();
      const first = await initiate(user, mpesaPayment(), key);
      expect(first.status, first.text).to.equal(422);
      expect((first.body as { code: string }).code).to.equal('insufficient_funds');
      const again = await initiate(user, mpesaPayment(), key);
      expect(again.status).to.equal(422);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.text).to.equal(first.text);
      expect((await storedKey(user, key))?.response_body).to.equal(first.text);
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(0);
    });

    it('then a refusal before the order is judged (an invalid body, over the tier) is kept and replayed too', async () => {
      const user = await newUser();
      for (const body of [mpesaPayment({ amount: '-5.00' }), mpesaPayment({ amount: '10000.01' })]) {
        const key = randomUUID();
        const first = await initiate(user, body, key);
        expect([400, 422]).to.include(first.status);
        const again = await initiate(user, body, key);
        expect(again.status).to.equal(first.status);
        expect(again.headers['idempotent-replayed']).to.equal('true');
        expect(again.text).to.equal(first.text);
      }
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(0);
    });

    it('then the same key with another body after a refusal is a 422 idempotency_key_reused, not a payment', async () => {
      const user = await newUser({ funded: false });
      const key = randomUUID();
      expect((await initiate(user, mpesaPayment(), key)).status).to.equal(422);
      for (const other of [mpesaPayment({ amount: '99.00' }), mpesaPayment({ amount: 'abc' })]) {
        const reused = await initiate(user, other, key);
        expect(reused.status).to.equal(422);
        expect((reused.body as { code: string }).code).to.equal('idempotency_key_reused');
      }
    });
  });

  describe('when the same key is sent with a different body', () => {
    it('then it is a 422 idempotency_key_reused and no second order exists', async () => {
      const user = await newUser();
      const key = randomUUID();
      expect((await initiate(user, mpesaPayment(), key)).status).to.equal(202);
      const reused = await initiate(user, mpesaPayment({ amount: '99.00' }), key);
      expect(reused.status).to.equal(422);
      expect((reused.body as { code: string }).code).to.equal('idempotency_key_reused');
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(1);
    });
  });

  describe('when the same key is sent with another, invalid body after an acceptance', () => {
    it('then it is a 422 idempotency_key_reused, not the validation problem', async () => {
      const user = await newUser();
      const key = randomUUID();
      expect((await initiate(user, mpesaPayment(), key)).status).to.equal(202);
      const reused = await initiate(user, mpesaPayment({ amount: 'abc' }), key);
      expect(reused.status).to.equal(422);
      expect((reused.body as { code: string }).code).to.equal('idempotency_key_reused');
    });
  });

  describe('when the first request with the key is still running', () => {
    it('then a repeat is a 409 idempotency_in_progress with Retry-After, and records nothing', async () => {
      const user = await newUser();
      const key = randomUUID();
      await claimedElsewhere(user, key, mpesaPayment(), 0);
      const res = await initiate(user, mpesaPayment(), key);
      expect(res.status, res.text).to.equal(409);
      expect((res.body as { code: string }).code).to.equal('idempotency_in_progress');
      expect(res.headers['retry-after']).to.equal('1');
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(0);
      expect((await storedKey(user, key))?.state).to.equal('in_progress');
    });

    it('then a repeat after its claim went stale takes the key over and is accepted, its answer kept', async () => {
      const user = await newUser();
      const key = randomUUID();
      await claimedElsewhere(user, key, mpesaPayment(), 120);
      const res = await initiate(user, mpesaPayment(), key);
      expect(res.status, res.text).to.equal(202);
      expect((await storedKey(user, key))?.response_body).to.equal(res.text);
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(1);
    });

    it('then a stale claim is not taken over with another body: 422 idempotency_key_reused', async () => {
      const user = await newUser();
      const key = randomUUID();
      await claimedElsewhere(user, key, mpesaPayment(), 120);
      const res = await initiate(user, mpesaPayment({ amount: '99.00' }), key);
      expect(res.status, res.text).to.equal(422);
      expect((res.body as { code: string }).code).to.equal('idempotency_key_reused');
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(0);
    });
  });

  describe('when two POSTs with one key arrive at once', () => {
    it('then one order is recorded and both are answered with it, byte for byte', async () => {
      const user = await newUser();
      const key = randomUUID();
      const [a, b] = await Promise.all([initiate(user, mpesaPayment(), key), initiate(user, mpesaPayment(), key)]);
      expect([a.status, b.status], `${a.text} ${b.text}`).to.deep.equal([202, 202]);
      expect(a.text).to.equal(b.text);
      expect([a.headers['idempotent-replayed'], b.headers['idempotent-replayed']].filter((h) => h === 'true')).to.have.length(1);
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(1);
    });
  });

  describe("when the user's login and API key send the same key at once", () => {
    it('then one order is recorded, each credential is answered with it and keeps its own answer', async () => {
      const user = await newUser();
      const created = await api()
        .post('/api/v1/api-keys')
        .set(user.auth)
        .send({ name: 'shop backend', mode: realRails ? 'live' : 'test', scopes: ['payments:write'] });
      expect(created.status, created.text).to.equal(201);
      const secret = (created.body as { secret: string }).secret;
      const key = randomUUID();
      const viaKey = () =>
        api().post('/api/v1/payments/initiate').set('Authorization', `Bearer ${secret}`).set('Idempotency-Key', key).send(mpesaPayment());
      const [login, apiKey] = await Promise.all([initiate(user, mpesaPayment(), key), viaKey()]);
      expect([login.status, apiKey.status], `${login.text} ${apiKey.text}`).to.deep.equal([202, 202]);
      const orderId = (login.body as { order_id: string }).order_id;
      expect((apiKey.body as { order_id: string }).order_id).to.equal(orderId);
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(1);
      const again = await viaKey();
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.text).to.equal(apiKey.text);
    });
  });

  describe('when two users use the same key', () => {
    it('then each gets their own order: keys are scoped to the caller', async () => {
      const [alice, bob] = [await newUser(), await newUser()];
      const key = randomUUID();
      const a = await initiate(alice, mpesaPayment(), key);
      const b = await initiate(bob, mpesaPayment(), key);
      expect(a.status).to.equal(202);
      expect(b.status).to.equal(202);
      expect(b.headers['idempotent-replayed']).to.equal(undefined);
      expect((a.body as { order_id: string }).order_id).to.not.equal((b.body as { order_id: string }).order_id);
    });
  });

  describe('when 50 identical requests arrive at once', () => {
    it('then exactly one order and one workflow exist, and every answer is that order or "in progress"', async () => {
      const user = await newUser();
      const key = randomUUID();
      const responses = await Promise.all(Array.from({ length: 50 }, () => initiate(user, mpesaPayment(), key)));
      const statuses = new Set(responses.map((r) => r.status));
      expect(
        [...statuses].every((s) => s === 202 || s === 409),
        `statuses ${[...statuses].join(',')}`,
      ).to.equal(true);
      for (const conflict of responses.filter((r) => r.status === 409)) {
        expect((conflict.body as { code: string }).code).to.equal('idempotency_in_progress');
      }
      const orderIds = new Set(responses.filter((r) => r.status === 202).map((r) => (r.body as { order_id: string }).order_id));
      expect(orderIds.size).to.equal(1);

      const orders = await rows<{ id: string }>('SELECT id FROM orders WHERE user_id = :id', { id: user.id });
      expect(orders).to.have.length(1);
      const [orderId] = [...orderIds];
      expect(orders[0].id).to.equal(orderId);

      await waitForOrder(user, orderId);
      const workflows = [];
      for await (const wf of temporalClient().workflow.list({ query: `WorkflowId = 'payment-${orderId}'` })) workflows.push(wf);
      expect(workflows).to.have.length(1);
      expect(
        await rows('SELECT 1 FROM ledger_transactions WHERE order_id = :orderId AND kind = :kind', { orderId, kind: 'settle' }),
      ).to.have.length(1);
    });
  });

  // Last: a failed start leaves the api backing off its next starts for a few seconds.
  describe('when Temporal cannot be reached once the payment is accepted', () => {
    it('then the payment is still accepted, and the answer kept is the one sent', async function () {
      this.timeout(60_000);
      const user = await newUser();
      const key = randomUUID();
      const realAddress = config().temporal.address;
      process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
      reloadConfig();
      await closeTemporal();
      let first;
      try {
        first = await initiate(user, mpesaPayment(), key);
      } finally {
        process.env.TEMPORAL_ADDRESS = realAddress;
        reloadConfig();
        await closeTemporal();
      }
      expect(first.status, first.text).to.equal(202);
      const orderId = (first.body as { order_id: string }).order_id;
      expect(await rows('SELECT 1 FROM orders WHERE id = :orderId AND workflow_started_at IS NULL', { orderId })).to.have.length(1);
      expect((await storedKey(user, key))?.response_body).to.equal(first.text);
      const again = await initiate(user, mpesaPayment(), key);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.text).to.equal(first.text);
      await reconcileUnstartedOrders(0);
      expect((await waitForOrder(user, orderId)).status).to.equal('completed');
    });
  });
});
