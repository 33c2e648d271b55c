import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { temporalClient } from '../platform/temporal';
import { api, initiate, mpesaPayment, newUser, waitForOrder } from './support/api';
import { rows } from './support/db';

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
      expect(await rows('SELECT 1 FROM orders WHERE user_id = :id', { id: user.id })).to.have.length(1);
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
});
