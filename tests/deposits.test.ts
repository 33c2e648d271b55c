import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { signSandboxCallback } from '../connectors/sandbox';
import { config } from '../platform/config';
import { api, blocklist, newUser, uniqueKenyanPhone, type TestUser } from './support/api';
import { rows } from './support/db';
import { until } from './support/processes';
import { currentRailFakes } from './support/stack';

/**
 * Deposits by M-Pesa STK Push (docs/wallets.md#m-pesa-stk-push): `POST /wallets/deposits` starts workflow `deposit-<id>`, which asks
 * the payer's phone, awaits the callback or the STK query, and credits the wallet once. On the sandbox rail,
 * and under TEST_RAILS=real through the Daraja connector against the local Daraja.
 */

interface DepositBody {
  deposit_id: string;
  status: string;
  failure_code: string | null;
  provider_reference: string | null;
  amount: string;
}

const deposit = (user: TestUser, body: Record<string, unknown>, key: string = randomUUID()) =>
  api().post('/api/v1/wallets/deposits').set(user.auth).set('Idempotency-Key', key).send(body);

const stk = (phone: string, amount = '2000.00') => ({ amount, currency: 'KES', method: 'mobile_money', phone });

async function settled(user: TestUser, depositId: string): Promise<DepositBody> {
  return until(
    `deposit ${depositId} to settle`,
    async () => {
      const res = await api().get(`/api/v1/wallets/deposits/${depositId}`).set(user.auth);
      const body = res.body as DepositBody;
      return body.status === 'pending' ? undefined : body;
    },
    20_000,
    100,
  );
}

async function kes(user: TestUser): Promise<string | undefined> {
  const res = await api().get('/api/v1/wallets').set(user.auth);
  return (res.body as { data: { currency: string; available: string }[] }).data.find((d) => d.currency === 'KES')?.available;
}

/** Deliver the rail's callback for the deposit again, as the provider would on a retry. */
async function replayCallback(depositId: string): Promise<void> {
  const fakes = currentRailFakes();
  if (fakes) {
    const sent = fakes.daraja.posted.filter((p) => p.url.includes(`/callbacks/mpesa/stk/${depositId}`));
    expect(sent, 'the STK callback Daraja sent').to.have.length.greaterThan(0);
    const res = await fetch(sent[0].url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sent[0].body),
    });
    expect(res.status).to.equal(200);
    return;
  }
  const [row] = await rows<{ rail_reference: string }>('SELECT rail_reference FROM deposits WHERE id = :id', { id: depositId });
  const raw = JSON.stringify({
    reference: row.rail_reference,
    merchant_reference: depositId,
    status: 'succeeded',
    failure_code: null,
    provider_code: null,
  });
  const res = await api()
    .post('/api/v1/callbacks/sandbox')
    .set('Content-Type', 'application/json')
    .set('X-Sandbox-Signature', signSandboxCallback(config().sandbox.callbackSecret, raw))
    .send(raw);
  expect(res.status, res.text).to.equal(204);
}

describe('deposits by M-Pesa STK Push', () => {
  describe('when a user deposits KES 2,000 from their phone', () => {
    it('then the deposit is accepted pending, completes through its workflow, and the wallet and statement show it', async () => {
      const user = await newUser({ funded: false });
      const res = await deposit(user, stk(uniqueKenyanPhone()));
      expect(res.status, res.text).to.equal(202);
      const accepted = res.body as { deposit_id: string; status: string; links: { self: string } };
      expect(accepted.status).to.equal('pending');
      expect(res.headers.location).to.equal(accepted.links.self);
      const done = await settled(user, accepted.deposit_id);
      expect(done).to.include({ status: 'completed', amount: '2000.00', failure_code: null });
      expect(done.provider_reference).to.be.a('string');
      expect(await kes(user)).to.equal('2000.00');
      const statement = await api().get('/api/v1/wallets/KES/transactions').set(user.auth);
      expect(
        (statement.body as { data: { kind: string; amount: string; balance_after: string; deposit_id: string }[] }).data,
      ).to.deep.equal([
        {
          ...(statement.body as { data: Record<string, unknown>[] }).data[0],
          kind: 'deposit',
          amount: '2000.00',
          balance_after: '2000.00',
          deposit_id: accepted.deposit_id,
        },
      ]);
      const [workflow] = await rows<{ n: number }>(`SELECT count(*)::int AS n FROM deposits WHERE id = :id AND channel = 'mpesa_stk'`, {
        id: accepted.deposit_id,
      });
      expect(workflow.n).to.equal(1);
    });

    it('then a duplicate callback credits nothing more', async () => {
      const user = await newUser({ funded: false });
      const res = await deposit(user, stk(uniqueKenyanPhone(), '300.00'));
      const id = (res.body as { deposit_id: string }).deposit_id;
      expect((await settled(user, id)).status).to.equal('completed');
      await replayCallback(id);
      await replayCallback(id);
      await new Promise((r) => setTimeout(r, 300));
      expect(await kes(user)).to.equal('300.00');
    });

    it('then the same Idempotency-Key replays the same deposit and asks the phone once', async () => {
      const user = await newUser({ funded: false });
      const key = randomUUID();
      const body = stk(uniqueKenyanPhone(), '50.00');
      const [a, b] = [await deposit(user, body, key), await deposit(user, body, key)];
      expect(a.status).to.equal(202);
      expect(b.body).to.deep.equal(a.body);
      await settled(user, (a.body as { deposit_id: string }).deposit_id);
      expect(await kes(user)).to.equal('50.00');
    });
  });

  describe('when the payer cancels, or the phone never calls back', () => {
    it('then a cancelled prompt ends failed with cancelled_by_user and credits nothing', async () => {
      const user = await newUser({ funded: false });
      const res = await deposit(user, stk('+254700001032'));
      const done = await settled(user, (res.body as { deposit_id: string }).deposit_id);
      expect(done).to.include({ status: 'failed', failure_code: 'cancelled_by_user' });
      expect(await kes(user)).to.equal('0.00');
    });

    it('then a phone that never calls back is settled by the STK query', async () => {
      const user = await newUser({ funded: false });
      const res = await deposit(user, stk('+254700000999', '120.00'));
      const done = await settled(user, (res.body as { deposit_id: string }).deposit_id);
      expect(done.status).to.equal('completed');
      expect(await kes(user)).to.equal('120.00');
    });
  });

  describe('when the request is not one Paygate can collect', () => {
    it('then cents, another currency or method, a bad phone and a missing key are 400s naming the field', async () => {
      const user = await newUser({ funded: false });
      for (const [body, field] of [
        [stk(uniqueKenyanPhone(), '10.50'), 'amount'],
        [{ ...stk(uniqueKenyanPhone()), currency: 'USD' }, 'currency'],
        [{ ...stk(uniqueKenyanPhone()), method: 'bank_transfer' }, 'method'],
        [stk('+1 555 0100'), 'phone'],
      ] as [Record<string, unknown>, string][]) {
        const res = await deposit(user, body);
        expect(res.status, `${field}: ${res.text}`).to.equal(400);
        expect(JSON.stringify(res.body), field).to.include(field);
      }
      const keyless = await api().post('/api/v1/wallets/deposits').set(user.auth).send(stk(uniqueKenyanPhone()));
      expect(keyless.status).to.equal(400);
      expect(await rows('SELECT 1 FROM deposits WHERE user_id = :id', { id: user.id })).to.have.length(0);
    });

    it('then a blocklisted phone is refused with blocked_by_compliance before any prompt', async () => {
      const admin = await newUser({ roles: ['admin'], funded: false });
      const user = await newUser({ funded: false });
      const phone = uniqueKenyanPhone();
      await blocklist(admin, { type: 'phone', value: phone, reason: 'deposit test' });
      const res = await deposit(user, stk(phone));
      expect(res.status).to.equal(422);
      expect((res.body as { code: string }).code).to.equal('blocked_by_compliance');
      expect(await rows('SELECT 1 FROM deposits WHERE user_id = :id', { id: user.id })).to.have.length(0);
    });

    it('then anonymous callers are 401', async () => {
      expect(
        (await api().post('/api/v1/wallets/deposits').set('Idempotency-Key', randomUUID()).send(stk(uniqueKenyanPhone()))).status,
      ).to.equal(401);
    });
  });
});
