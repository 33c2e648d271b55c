import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { expect } from 'chai';
import { RUN_ID } from './support/env';
import { newUser, type OrderBody, type TestUser } from './support/api';
import { freePort, until } from './support/processes';
import { stack } from './support/stack';
import { ledgerKindsOf } from './support/db';
import { startRailFakes, type RailFakes } from './fakes/rails';
import type { FakeFaults } from './fakes/http';

/**
 * An outcome Paygate does not know is not a failure (docs/payments.md#unknown-outcomes): the real
 * connectors (Jenga, Daraja, ccxt) in real processes against their fakes, each fake executing the transfer
 * and then losing its answer, answering 5xx, or refusing the retry as a duplicate. In every case the fake
 * makes one transfer, the order keeps its hold until the rail's definite answer, and it settles once.
 */

const DIST = path.resolve(__dirname, '..');

function spawnProcess(entry: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [path.join(DIST, entry)], {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const UNRESOLVED_AFTER_MS = 1500;

describe('unknown rail outcomes against the provider fakes', function () {
  this.timeout(90_000);
  let fakes: RailFakes;
  let apiProcess: ChildProcess | undefined;
  let workerProcess: ChildProcess | undefined;
  let baseUrl = '';
  const rails = () => request(baseUrl);

  before(async function () {
    this.timeout(90_000);
    fakes = await startRailFakes();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const env = {
      ...fakes.env,
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      TEMPORAL_TASK_QUEUE: `paygate-unknown-${RUN_ID}`,
      PAYMENT_POLL_AFTER_MS: '500',
      PAYMENT_POLL_MAX_INTERVAL_MS: '1000',
      PAYMENT_UNRESOLVED_AFTER_MS: String(UNRESOLVED_AFTER_MS),
    };
    apiProcess = spawnProcess('api/server.js', env);
    workerProcess = spawnProcess('workers/temporal-worker.js', env);
    await until(
      'the rails api',
      async () => {
        const res = await fetch(`${baseUrl}/readyz`).catch(() => undefined);
        return res?.status === 200 ? true : undefined;
      },
      60_000,
      200,
    );
  });

  after(async () => {
    await Promise.all([stopProcess(apiProcess), stopProcess(workerProcess)]);
    await fakes?.close();
  });

  const initiate = async (user: TestUser, body: Record<string, unknown>): Promise<string> => {
    const res = await rails().post('/api/v1/payments/initiate').set(user.auth).set('Idempotency-Key', randomUUID()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return (res.body as { order_id: string }).order_id;
  };

  const orderOf = async (user: TestUser, orderId: string): Promise<OrderBody> =>
    (await rails().get(`/api/v1/payments/orders/${orderId}`).set(user.auth)).body as OrderBody;

  async function settled(user: TestUser, orderId: string): Promise<OrderBody> {
    return until(
      `order ${orderId} to settle`,
      async () => {
        const order = await orderOf(user, orderId);
        return ['completed', 'failed', 'rejected'].includes(order.status) ? order : undefined;
      },
      45_000,
      100,
    );
  }

  const cases: { label: string; faults: Partial<FakeFaults>; asked: boolean }[] = [
    { label: 'the provider executed it and the answer was lost (timeout)', faults: { afterExecuting: ['drop'] }, asked: false },
    { label: 'the provider executed it and answered 5xx', faults: { afterExecuting: ['5xx'] }, asked: false },
    {
      label: 'the answer was lost and the retry was refused as a duplicate',
      faults: { afterExecuting: ['drop'], refuseDuplicates: true },
      asked: true,
    },
  ];

  const switchFaults = (target: FakeFaults, faults: Partial<FakeFaults>) => {
    target.afterExecuting.splice(0, target.afterExecuting.length, ...(faults.afterExecuting ?? []));
    target.refuseDuplicates = faults.refuseDuplicates ?? false;
  };

  /** One transfer at the rail, settled once, and a hold that was never released. */
  async function expectSettledOnce(user: TestUser, orderId: string, asked: boolean) {
    const order = await settled(user, orderId);
    expect(order.status, JSON.stringify(order)).to.equal('completed');
    expect(order.events.map((e) => e.status)).to.not.include('failed');
    if (asked) expect(order.events.map((e) => e.status)).to.include('outcome_unknown');
    expect((await ledgerKindsOf(orderId)).sort()).to.deep.equal(['hold', 'settle']);
    return order;
  }

  describe('when a bank transfer goes through Jenga', () => {
    for (const c of cases) {
      it(`then, when ${c.label}, the bank makes one transfer and the order settles once`, async () => {
        const user = await newUser({ kycStatus: 'verified' });
        const account = `77${String(Date.now()).slice(-8)}`;
        switchFaults(fakes.jenga.faults, c.faults);
        try {
          const orderId = await initiate(user, {
            amount: '2500.00',
            currency: 'KES',
            method: 'bank_transfer',
            destination: { bank_code: '01', account_number: account, account_name: 'Jane Doe' },
          });
          const order = await expectSettledOnce(user, orderId, c.asked);
          const sent = [...fakes.jenga.transfers.values()].filter((t) => t.body.destination.accountNumber === account);
          expect(sent).to.have.length(1);
          expect(order.rail_reference)
            .to.equal(sent[0].body.transfer.reference)
            .and.match(/^\d{12}$/);
        } finally {
          switchFaults(fakes.jenga.faults, {});
        }
      });
    }

    it('then every transfer carries a reference of its own, never derived from the order id', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      const ids = await Promise.all(
        ['1', '2', '3'].map((n) =>
          initiate(user, {
            amount: '100.00',
            currency: 'KES',
            method: 'bank_transfer',
            destination: { bank_code: '01', account_number: `12345678${n}9`, account_name: 'Jane Doe' },
          }),
        ),
      );
      const references = await Promise.all(ids.map(async (id) => (await settled(user, id)).rail_reference));
      expect(new Set(references).size).to.equal(3);
    });
  });

  describe('when an M-Pesa payout goes through Daraja (B2C)', () => {
    for (const c of cases) {
      it(`then, when ${c.label}, M-Pesa makes one payout and the order settles once`, async () => {
        const user = await newUser();
        const phone = `25471${String(Date.now()).slice(-7)}`;
        switchFaults(fakes.daraja.faults, c.faults);
        try {
          const orderId = await initiate(user, {
            amount: '1500.00',
            currency: 'KES',
            method: 'mobile_money',
            destination: { provider: 'mpesa', phone: `+${phone}` },
          });
          await expectSettledOnce(user, orderId, c.asked);
          expect([...fakes.daraja.payouts.values()].filter((p) => p.originator === orderId)).to.have.length(1);
        } finally {
          switchFaults(fakes.daraja.faults, {});
        }
      });
    }

    it('then a Transaction Status query that fails on its own leaves the payout processing with its hold, until a query tells', async () => {
      const user = await newUser();
      const phone = `25471${String(Date.now()).slice(-7)}`;
      fakes.daraja.silentPhones.add(phone);
      fakes.daraja.faults.statusQueryError = { code: 2001, desc: 'The initiator information is invalid.' };
      try {
        const orderId = await initiate(user, {
          amount: '1500.00',
          currency: 'KES',
          method: 'mobile_money',
          destination: { provider: 'mpesa', phone: `+${phone}` },
        });
        // Two of the query's own failures arrive and are taken as saying nothing.
        await until(
          'two failed status queries',
          () => Promise.resolve(fakes.daraja.posted.filter((p) => p.url.includes(`/b2c/${orderId}/status`)).length >= 2 || undefined),
          20_000,
          100,
        );
        const waiting = await orderOf(user, orderId);
        expect(waiting.status).to.equal('processing');
        expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold']);

        // Past PAYMENT_UNRESOLVED_AFTER_MS it is listed for operators, for staff only.
        const staff = await newUser({ roles: ['compliance'] });
        const listed = await until(
          'the payout listed as unresolved',
          async () => {
            const res = await rails().get('/api/v1/operations/unresolved-payouts?limit=100').set(staff.auth);
            expect(res.status, JSON.stringify(res.body)).to.equal(200);
            return (res.body as { data: { order_id: string }[] }).data.find((o) => o.order_id === orderId);
          },
          20_000,
          200,
        );
        expect(listed).to.deep.include({
          rail: 'daraja',
          reference: orderId,
          submission: 'accepted',
          method: 'mobile_money',
          amount: '1500.00',
        });
        expect((await rails().get('/api/v1/operations/unresolved-payouts').set(user.auth)).status).to.equal(403);
        expect((await rails().get('/api/v1/operations/unresolved-payouts')).status).to.equal(401);

        fakes.daraja.faults.statusQueryError = undefined;
        await expectSettledOnce(user, orderId, false);
        const after = await rails().get('/api/v1/operations/unresolved-payouts?limit=100').set(staff.auth);
        expect((after.body as { data: { order_id: string }[] }).data.map((o) => o.order_id)).to.not.include(orderId);
      } finally {
        fakes.daraja.faults.statusQueryError = undefined;
        fakes.daraja.silentPhones.delete(phone);
      }
    });
  });

  describe('when a crypto withdrawal goes through ccxt to the exchange', () => {
    for (const c of cases) {
      it(`then, when ${c.label}, the exchange makes one withdrawal and the order settles once`, async () => {
        const user = await newUser();
        switchFaults(fakes.binance.faults, c.faults);
        try {
          const orderId = await initiate(user, {
            amount: '12.000000',
            currency: 'USDT',
            method: 'crypto',
            destination: { address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', network: 'TRC20' },
          });
          const order = await expectSettledOnce(user, orderId, c.asked);
          const sent = fakes.binance.withdrawals.filter((w) => w.withdrawOrderId === orderId);
          expect(sent).to.have.length(1);
          expect(order.rail_reference).to.equal(sent[0].id);
        } finally {
          switchFaults(fakes.binance.faults, {});
        }
      });
    }
  });

  describe('when operators resolve an unresolved payout (four eyes, whatever the amount)', () => {
    interface ApprovalBody {
      request_id: string;
      kind: string;
      subject_id: string;
      status: string;
      payload: { outcome?: string; evidence?: string };
      requested_by: string;
      decided_by: string | null;
      result: { order_id?: string; outcome?: string; evidence?: string; requested_by?: string; approved_by?: string } | null;
    }

    let maker: TestUser;
    let checker: TestUser;
    before(async () => {
      maker = await newUser({ roles: ['compliance'], funded: false });
      checker = await newUser({ roles: ['admin'], funded: false });
    });

    const resolve = (staff: TestUser, orderId: string, body: Record<string, unknown>) =>
      rails().post(`/api/v1/operations/unresolved-payouts/${orderId}/resolve`).set(staff.auth).send(body);
    const approve = (staff: TestUser, requestId: string) =>
      rails().post(`/api/v1/compliance/approvals/${requestId}/approve`).set(staff.auth).send({ note: 'statement checked' });
    const kesAvailableOf = async (user: TestUser) =>
      ((await rails().get('/api/v1/wallets').set(user.auth)).body as { data: { currency: string; available: string }[] }).data.find(
        (w) => w.currency === 'KES',
      )?.available;

    /**
     * An M-Pesa payout that Daraja took and never reports on (no result, and every Transaction Status query
     * failing on its own), listed as unresolved.
     */
    async function stuckPayout(payer: TestUser): Promise<{ orderId: string; phone: string }> {
      const phone = `25472${String(Date.now()).slice(-7)}`;
      fakes.daraja.silentPhones.add(phone);
      fakes.daraja.faults.statusQueryError = { code: 2001, desc: 'The initiator information is invalid.' };
      const orderId = await initiate(payer, {
        amount: '1500.00',
        currency: 'KES',
        method: 'mobile_money',
        destination: { provider: 'mpesa', phone: `+${phone}` },
      });
      await until(
        'the payout listed as unresolved',
        async () => {
          const res = await rails().get('/api/v1/operations/unresolved-payouts?limit=100').set(maker.auth);
          return (res.body as { data: { order_id: string }[] }).data.some((o) => o.order_id === orderId) || undefined;
        },
        20_000,
        200,
      );
      return { orderId, phone };
    }

    const unstick = (phone: string) => {
      fakes.daraja.faults.statusQueryError = undefined;
      fakes.daraja.silentPhones.delete(phone);
    };

    it('then "sent", once a second staff member approves it, completes the order once with its settlement', async () => {
      const user = await newUser();
      const { orderId, phone } = await stuckPayout(user);
      try {
        const asked = await resolve(maker, orderId, { outcome: 'sent', evidence: 'M-Pesa org portal: receipt SKL7Q2X4PA, 1,500.00 paid' });
        expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
        const request = asked.body as ApprovalBody;
        expect(request).to.deep.include({
          kind: 'resolve_unresolved_payout',
          subject_id: orderId,
          status: 'pending',
          requested_by: maker.id,
        });
        expect(request.payload).to.deep.include({ outcome: 'sent', evidence: 'M-Pesa org portal: receipt SKL7Q2X4PA, 1,500.00 paid' });
        // Nothing moved yet: the order waits with its hold.
        expect((await orderOf(user, orderId)).status).to.equal('processing');
        expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold']);
        // The one who asked never approves, nor does a user.
        expect((await approve(maker, request.request_id)).status).to.equal(403);
        expect((await approve(user, request.request_id)).status).to.equal(403);

        const approved = await approve(checker, request.request_id);
        expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
        expect(approved.body as ApprovalBody).to.deep.include({ status: 'approved', requested_by: maker.id, decided_by: checker.id });
        expect((approved.body as ApprovalBody).result).to.deep.include({
          order_id: orderId,
          outcome: 'sent',
          evidence: 'M-Pesa org portal: receipt SKL7Q2X4PA, 1,500.00 paid',
          requested_by: maker.id,
          approved_by: checker.id,
        });

        const order = await settled(user, orderId);
        expect(order.status, JSON.stringify(order)).to.equal('completed');
        expect(order.events.filter((e) => e.status === 'completed')).to.have.length(1);
        expect(order.events.map((e) => e.status)).to.not.include('failed');
        expect((await ledgerKindsOf(orderId)).sort()).to.deep.equal(['hold', 'settle']);
        expect([...fakes.daraja.payouts.values()].filter((p) => p.originator === orderId)).to.have.length(1);
        // Decided once: a second approval is refused, and the order is no longer listed.
        expect((await approve(checker, request.request_id)).status).to.equal(409);
        const listed = await rails().get('/api/v1/operations/unresolved-payouts?limit=100').set(maker.auth);
        expect((listed.body as { data: { order_id: string }[] }).data.map((o) => o.order_id)).to.not.include(orderId);
      } finally {
        unstick(phone);
      }
    });

    it('then "not_sent", once approved, gives the hold back once and fails the order with resolved_not_sent', async () => {
      const user = await newUser();
      const before = await kesAvailableOf(user);
      const { orderId, phone } = await stuckPayout(user);
      try {
        expect(await kesAvailableOf(user)).to.not.equal(before);
        const asked = await resolve(maker, orderId, { outcome: 'not_sent', evidence: 'Daraja support ticket 88213: no such payout' });
        expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
        const approved = await approve(checker, (asked.body as ApprovalBody).request_id);
        expect(approved.status, JSON.stringify(approved.body)).to.equal(200);

        const order = await settled(user, orderId);
        expect(order).to.deep.include({ status: 'failed', failure_code: 'resolved_not_sent' });
        expect((await ledgerKindsOf(orderId)).sort()).to.deep.equal(['hold', 'release']);
        expect(await kesAvailableOf(user)).to.equal(before);
      } finally {
        unstick(phone);
      }
    });

    it('then a rail answer that arrives before the approval wins, and the approval is 409', async () => {
      const user = await newUser();
      const { orderId, phone } = await stuckPayout(user);
      try {
        const asked = await resolve(maker, orderId, { outcome: 'not_sent', evidence: 'nothing on the statement yet' });
        expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
        // The status query works again: Daraja says the payout was made.
        fakes.daraja.faults.statusQueryError = undefined;
        expect((await settled(user, orderId)).status).to.equal('completed');

        const approved = await approve(checker, (asked.body as ApprovalBody).request_id);
        expect(approved.status, JSON.stringify(approved.body)).to.equal(409);
        expect((await ledgerKindsOf(orderId)).sort()).to.deep.equal(['hold', 'settle']);
        const request = await rails()
          .get(`/api/v1/compliance/approvals/${(asked.body as ApprovalBody).request_id}`)
          .set(checker.auth);
        expect((request.body as ApprovalBody).status).to.equal('pending');
      } finally {
        unstick(phone);
      }
    });

    it('then a user (not staff) asking to resolve it is 403, and an order that is not listed is 409', async () => {
      const user = await newUser();
      const { orderId, phone } = await stuckPayout(user);
      try {
        expect((await resolve(user, orderId, { outcome: 'not_sent', evidence: 'I never got it' })).status).to.equal(403);
        expect((await resolve(user, orderId, { outcome: 'not_sent', evidence: 'I never got it' })).body).to.include({
          code: 'forbidden',
        });
        expect((await resolve(maker, orderId, { outcome: 'sent' })).status).to.equal(400);
        expect((await resolve(maker, randomUUID(), { outcome: 'sent', evidence: 'x' })).status).to.equal(404);
      } finally {
        unstick(phone);
      }
      const done = await settled(user, orderId);
      expect(done.status).to.equal('completed');
      expect((await resolve(maker, orderId, { outcome: 'not_sent', evidence: 'too late' })).status).to.equal(409);
    });

    it('then a staff member who is the payer can neither ask nor approve', async () => {
      const payer = await newUser({ roles: ['user', 'compliance'] });
      const { orderId, phone } = await stuckPayout(payer);
      try {
        expect((await resolve(payer, orderId, { outcome: 'not_sent', evidence: 'my own' })).status).to.equal(403);
        const asked = await resolve(maker, orderId, { outcome: 'sent', evidence: 'receipt SKL7Q2X4PB' });
        expect(asked.status, JSON.stringify(asked.body)).to.equal(202);
        expect((await approve(payer, (asked.body as ApprovalBody).request_id)).status).to.equal(403);
        expect((await orderOf(payer, orderId)).status).to.equal('processing');
        expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold']);
      } finally {
        unstick(phone);
      }
      expect((await settled(payer, orderId)).status).to.equal('completed');
    });
  });

  describe('when the unresolved list is paged', () => {
    it('then a cursor that is not one of its own is a 400', async () => {
      const staff = await newUser({ roles: ['admin'] });
      const res = await rails().get('/api/v1/operations/unresolved-payouts?cursor=bm90LWEtY3Vyc29y').set(staff.auth);
      expect(res.status).to.equal(400);
    });
  });
});
