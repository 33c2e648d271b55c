import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { expect } from 'chai';
import { RUN_ID } from './support/env';
import { newUser, type OrderBody, type TestUser } from './support/api';
import { freePort, until } from './support/processes';
import { stack } from './support/stack';
import { startRailFakes, type RailFakes } from './fakes/rails';

/**
 * The real connectors (Jenga, Daraja) in real processes: an api and a Temporal worker started from the
 * build with the rails switched to the fakes, on their own task queue, sharing the suite's database.
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

describe('real rails against local provider fakes', function () {
  this.timeout(60_000);
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
      TEMPORAL_TASK_QUEUE: `paygate-rails-${RUN_ID}`,
      PAYMENT_POLL_AFTER_MS: '500',
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
    await fakes.close();
  });

  const initiate = (user: TestUser, body: Record<string, unknown>) =>
    rails().post('/api/v1/payments/initiate').set(user.auth).set('Idempotency-Key', randomUUID()).send(body);

  async function settled(user: TestUser, orderId: string): Promise<OrderBody> {
    return until(
      `order ${orderId} to settle`,
      async () => {
        const res = await rails().get(`/api/v1/payments/orders/${orderId}`).set(user.auth);
        const order = res.body as OrderBody;
        return ['completed', 'failed', 'rejected'].includes(order.status) ? order : undefined;
      },
      30_000,
      100,
    );
  }

  const mpesa = (phone: string, amount = '1500.00') => ({
    amount,
    currency: 'KES',
    method: 'mobile_money',
    destination: { provider: 'mpesa', phone },
    description: 'rails test',
  });
  const bank = (bankCode: string, accountNumber: string, amount = '2500.00') => ({
    amount,
    currency: 'KES',
    method: 'bank_transfer',
    destination: { bank_code: bankCode, account_number: accountNumber, account_name: 'Jane Doe' },
  });

  describe('when /readyz is asked', () => {
    it('then it names the selected connector of each method', async () => {
      const res = await rails().get('/readyz');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ rails: { bank_transfer: 'jenga', mobile_money: 'daraja', crypto: 'sandbox' } });
    });
  });

  describe('when an M-Pesa payment goes through Daraja', () => {
    it('then the STK push is paid and the callback completes the order with the CheckoutRequestID', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesa('+254712345678'));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const order = await settled(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
      expect(order.rail_reference).to.match(/^ws_CO_/);
      const push = fakes.daraja.calls.find((c) => c.path === '/mpesa/stkpush/v1/processrequest' && c.body.PhoneNumber === '254712345678');
      expect(push?.body).to.include({
        BusinessShortCode: '174379',
        TransactionType: 'CustomerPayBillOnline',
        Amount: 1500,
        PartyB: '174379',
      });
    });

    for (const [phone, code, failureCode] of [
      ['+254700000001', '1', 'insufficient_funds'],
      ['+254700001032', '1032', 'cancelled_by_user'],
      ['+254700001037', '1037', 'subscriber_unreachable'],
      ['+254700002001', '2001', 'invalid_pin'],
    ]) {
      it(`then ResultCode ${code} fails the payment with ${failureCode}`, async () => {
        const user = await newUser();
        const res = await initiate(user, mpesa(phone));
        const order = await settled(user, (res.body as { order_id: string }).order_id);
        expect(order.status).to.equal('failed');
        expect(order.failure_code).to.equal(failureCode);
        expect(order.failure_reason).to.be.a('string').and.not.empty;
      });
    }

    for (const busy of ['17', '26']) {
      it(`then a busy answer (${busy}) is retried and the payment completes`, async () => {
        const user = await newUser();
        const res = await initiate(user, mpesa(`+2547000000${busy}`));
        const order = await settled(user, (res.body as { order_id: string }).order_id);
        expect(order.status).to.equal('completed');
        const pushes = fakes.daraja.calls.filter(
          (c) => c.path === '/mpesa/stkpush/v1/processrequest' && c.body.PhoneNumber === `2547000000${busy}`,
        );
        expect(pushes.length).to.be.greaterThan(1);
      });
    }

    it('then a late callback is resolved by the STK query', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesa('+254700000999'));
      const order = await settled(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
      expect(
        fakes.daraja.calls.some((c) => c.path === '/mpesa/stkpushquery/v1/query' && c.body.CheckoutRequestID === order.rail_reference),
      ).to.equal(true);
    });

    it('then a forged callback is ignored and the real outcome stands', async () => {
      const user = await newUser();
      fakes.daraja.silentPhones.add('254700002001');
      try {
        const res = await initiate(user, mpesa('+254700002001'));
        const orderId = (res.body as { order_id: string }).order_id;
        const checkout = await until('the STK push', async () => {
          const o = (await rails().get(`/api/v1/payments/orders/${orderId}`).set(user.auth)).body as OrderBody;
          return o.rail_reference ?? undefined;
        });
        const forged = {
          Body: { stkCallback: { MerchantRequestID: 'forged', CheckoutRequestID: checkout, ResultCode: 0, ResultDesc: 'paid' } },
        };
        const withoutToken = await rails().post(`/api/v1/callbacks/mpesa/stk/${orderId}`).send(forged);
        expect(withoutToken.status).to.equal(200);
        expect(withoutToken.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
        const wrongToken = await rails()
          .post(`/api/v1/callbacks/mpesa/stk/${orderId}?token=${'x'.repeat(32)}`)
          .send(forged);
        expect(wrongToken.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
        const order = await settled(user, orderId);
        expect(order.status).to.equal('failed');
        expect(order.failure_code).to.equal('invalid_pin');
      } finally {
        fakes.daraja.silentPhones.delete('254700002001');
      }
    });

    it('then an amount with cents is refused: M-Pesa takes whole shillings', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesa('+254712345678', '250.50'));
      const order = await settled(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('failed');
      expect(order.failure_code).to.equal('invalid_amount');
    });
  });

  describe('when a bank transfer goes through Jenga', () => {
    for (const [label, bankCode, account, amount, path_] of [
      ['an Equity account (internal transfer)', '68', '0123456789', '2500.00', '/remittance/internalBankTransfer'],
      ['a PesaLink bank', '01', '1234567890', '2500.00', '/remittance/pesalinkacc'],
      ['a large amount (RTGS)', '01', '1234567891', '999999.50', '/remittance/rtgs'],
    ] as const) {
      it(`then a payment to ${label} is signed, sent and settled`, async () => {
        const user = await newUser({ kycStatus: 'verified' });
        const res = await initiate(user, bank(bankCode, account, amount));
        expect(res.status, JSON.stringify(res.body)).to.equal(202);
        const order = await settled(user, (res.body as { order_id: string }).order_id);
        expect(order.status, JSON.stringify(order)).to.equal('completed');
        expect(order.rail_reference).to.match(/^\d{12}$/);
        const sent = fakes.jenga.transfers.get(order.rail_reference!);
        expect(sent?.body.destination).to.include({ accountNumber: account, bankCode });
        expect(fakes.jenga.calls.filter((c) => c.path.endsWith(path_)).every((c) => c.signatureValid)).to.equal(true);
      });
    }

    it('then admins read the balance and mini statement, and users are 403', async () => {
      const admin = await newUser({ roles: ['admin'] });
      const user = await newUser();
      const balance = await rails().get('/api/v1/platforms/banks/primary/balance').set(admin.auth);
      expect(balance.status, JSON.stringify(balance.body)).to.equal(200);
      expect(balance.body).to.include({
        bank_code: '68',
        connector: 'jenga',
        currency: 'KES',
        available: '997382.57',
        current: '997382.57',
      });
      const statement = await rails().get('/api/v1/platforms/banks/primary/transactions').set(admin.auth);
      expect(statement.status).to.equal(200);
      const lines = (statement.body as { data: { type: string; amount: string }[] }).data;
      expect(lines.map((l) => [l.type, l.amount])).to.deep.equal([
        ['Credit', '150000.00'],
        ['Debit', '2500.00'],
      ]);
      const forbidden = await rails().get('/api/v1/platforms/banks/primary/balance').set(user.auth);
      expect(forbidden.status).to.equal(403);
      expect(forbidden.body).to.include({ code: 'forbidden' });
    });

    it('then an unknown account is refused with account_not_found', async () => {
      const user = await newUser();
      const res = await initiate(user, bank('01', '1234560000'));
      const order = await settled(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('failed');
      expect(order.failure_code).to.equal('account_not_found');
    });

    it('then a transfer the bank fails for funds ends with insufficient_funds', async () => {
      const user = await newUser();
      const res = await initiate(user, bank('01', '1234567892', '250.13'));
      const order = await settled(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('failed');
      expect(order.failure_code).to.equal('insufficient_funds');
    });

    it('then a bad signature is rejected by the bank and the payment fails with signature_rejected', async () => {
      const user = await newUser();
      fakes.jenga.setPublicKey(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey);
      try {
        const res = await initiate(user, bank('01', '1234567893'));
        const order = await settled(user, (res.body as { order_id: string }).order_id);
        expect(order.status).to.equal('failed');
        expect(order.failure_code).to.equal('signature_rejected');
        expect(order.failure_reason).to.match(/signature/);
        expect(fakes.jenga.calls.some((c) => !c.signatureValid)).to.equal(true);
      } finally {
        fakes.jenga.setPublicKey(fakes.jengaPublicKey);
      }
    });
  });
});
