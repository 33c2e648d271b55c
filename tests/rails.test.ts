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
import { callbackToken, DarajaConnector } from '../connectors/daraja';
import { signSandboxCallback } from '../connectors/sandbox';
import { loadConfig } from '../platform/config';
import { database } from '../platform/database';
import { rows } from './support/db';
import { askRail, collectAndRecord, submitAndRecord } from '../workflows/activities/rail';

/**
 * The real connectors (Jenga, Daraja, ccxt) in real processes: an api and a Temporal worker started from the
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
      expect(res.body).to.deep.include({ rails: { bank_transfer: 'jenga', mobile_money: 'daraja', crypto: 'ccxt' } });
    });
  });

  const payoutOf = (orderId: string) => [...fakes.daraja.payouts.values()].find((p) => p.originator === orderId);
  const b2cCalls = (phone: string) =>
    fakes.daraja.calls.filter((c) => c.path === '/mpesa/b2c/v3/paymentrequest' && c.body.PartyB === phone);
  const secret = () => fakes.env.DARAJA_CALLBACK_SECRET;

  describe('when an M-Pesa payment goes through Daraja', () => {
    it('then it is a B2C payout, and the result at the ResultURL completes the order with the ConversationID', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesa('+254712345678'));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const orderId = (res.body as { order_id: string }).order_id;
      const order = await settled(user, orderId);
      expect(order.status).to.equal('completed');
      expect(order.rail_reference).to.match(/^AG_\d{8}_/);
      const [payout] = b2cCalls('254712345678').filter((c) => c.body.OriginatorConversationID === orderId);
      expect(payout?.body).to.include({
        InitiatorName: 'paygate_api',
        SecurityCredential: fakes.env.DARAJA_B2C_SECURITY_CREDENTIAL,
        CommandID: 'BusinessPayment',
        Amount: 1500,
        PartyA: '174379',
      });
      expect(String(payout?.body.ResultURL)).to.equal(
        `${baseUrl}/api/v1/callbacks/mpesa/b2c/${orderId}/result?token=${callbackToken(secret(), orderId)}`,
      );
      expect(String(payout?.body.QueueTimeOutURL)).to.match(new RegExp(`/api/v1/callbacks/mpesa/b2c/${orderId}/timeout\\?token=`));
      // The result is taken, unless the workflow's status query (sent when the result is slow) resolved the
      // payout first: then the result is a repeat and is ignored. Either way exactly one of them was taken.
      const accepted = JSON.stringify({ ResultCode: 0, ResultDesc: 'Accepted' });
      const forOrder = () => fakes.daraja.posted.filter((p) => p.url.includes(`/b2c/${orderId}/`));
      await until('the result, and one accepted answer', () =>
        Promise.resolve(
          forOrder().some((p) => p.url.includes('/result?')) && forOrder().some((p) => JSON.stringify(p.answer) === accepted)
            ? true
            : undefined,
        ),
      );
      expect(forOrder().filter((p) => JSON.stringify(p.answer) === accepted)).to.have.length(1);
      expect(
        fakes.daraja.calls.some((c) => c.path === '/mpesa/stkpush/v1/processrequest' && c.body.PhoneNumber === '254712345678'),
      ).to.equal(false);
    });

    for (const [phone, code, failureCode] of [
      ['+254700000001', '1', 'insufficient_funds'],
      ['+254700001032', '1032', 'cancelled_by_user'],
      ['+254700001037', '1037', 'subscriber_unreachable'],
      ['+254700002001', '2001', 'invalid_pin'],
    ]) {
      it(`then B2C ResultCode ${code} fails the payment with ${failureCode}`, async () => {
        const user = await newUser();
        const res = await initiate(user, mpesa(phone));
        const order = await settled(user, (res.body as { order_id: string }).order_id);
        expect(order.status).to.equal('failed');
        expect(order.failure_code).to.equal(failureCode);
        expect(order.failure_reason).to.be.a('string').and.not.empty;
      });
    }

    for (const busy of ['17', '26']) {
      it(`then a busy answer (${busy}) is retried and the payout completes`, async () => {
        const user = await newUser();
        const res = await initiate(user, mpesa(`+2547000000${busy}`));
        const orderId = (res.body as { order_id: string }).order_id;
        const order = await settled(user, orderId);
        expect(order.status).to.equal('completed');
        expect(b2cCalls(`2547000000${busy}`).filter((c) => c.body.OriginatorConversationID === orderId).length).to.be.greaterThan(1);
      });
    }

    it('then a late result is resolved by the Transaction Status query, whose result arrives at its own ResultURL', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesa('+254700000999'));
      const orderId = (res.body as { order_id: string }).order_id;
      const order = await settled(user, orderId);
      expect(order.status).to.equal('completed');
      expect(fakes.daraja.posted.some((p) => p.url.includes(`/b2c/${orderId}/result`))).to.equal(false);
      const query = fakes.daraja.calls.find(
        (c) => c.path === '/mpesa/transactionstatus/v1/query' && c.body.OriginalConversationID === orderId,
      );
      expect(query?.body).to.include({ CommandID: 'TransactionStatusQuery', PartyA: '174379', Initiator: 'paygate_api' });
      const taken = await until('the status result, taken', () =>
        Promise.resolve(
          fakes.daraja.posted.find(
            (p) => p.url.includes(`/b2c/${orderId}/status`) && (p.answer as { ResultCode?: number }).ResultCode === 0,
          ),
        ),
      );
      expect(taken.body).to.deep.nested.include({ 'Result.ResultCode': 0 });
    });

    it('then forged and unknown results are acknowledged, ignored, and the real outcome stands', async () => {
      const user = await newUser();
      fakes.daraja.silentPhones.add('254700002001');
      try {
        const res = await initiate(user, mpesa('+254700002001'));
        const orderId = (res.body as { order_id: string }).order_id;
        const conversation = await until('the B2C payout', () => Promise.resolve(payoutOf(orderId)?.conversation));
        const forged = (conversationId: string) => ({
          Result: {
            ResultType: 0,
            ResultCode: 0,
            ResultDesc: 'paid',
            OriginatorConversationID: orderId,
            ConversationID: conversationId,
            TransactionID: 'FORGED0001',
          },
        });
        const post = (path: string, body: unknown) =>
          rails()
            .post(`/api/v1/callbacks/mpesa/b2c/${orderId}/${path}`)
            .send(body as object);
        const withoutToken = await post('result', forged(conversation));
        expect(withoutToken.status).to.equal(200);
        expect(withoutToken.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
        const wrongToken = await post(`result?token=${'x'.repeat(32)}`, forged(conversation));
        expect(wrongToken.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
        // The order's own token, but a ConversationID Paygate never got: a replay from another request.
        const token = callbackToken(secret(), orderId);
        const unknown = await post(`result?token=${token}`, forged('AG_20261123_0000000000unknown'));
        expect(unknown.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
        const otherOrder = await rails()
          .post(`/api/v1/callbacks/mpesa/b2c/${randomUUID()}/result?token=${token}`)
          .send(forged(conversation));
        expect(otherOrder.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
        const order = await settled(user, orderId);
        expect(order.status).to.equal('failed');
        expect(order.failure_code).to.equal('invalid_pin');
        const [request] = await rows<{ status: string; receipt: string | null }>(
          `SELECT status, receipt FROM rail_requests WHERE order_id = :orderId AND kind = 'b2c'`,
          { orderId },
        );
        expect(request).to.deep.equal({ status: 'failed', receipt: payoutOf(orderId)?.receipt });
      } finally {
        fakes.daraja.silentPhones.delete('254700002001');
      }
    });

    it('then a queue timeout decides nothing, and a result after the order settled is ignored', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesa('+254712345678'));
      const orderId = (res.body as { order_id: string }).order_id;
      const order = await settled(user, orderId);
      const token = callbackToken(secret(), orderId);
      const late = {
        Result: {
          ResultType: 0,
          ResultCode: 1,
          ResultDesc: 'late',
          OriginatorConversationID: orderId,
          ConversationID: order.rail_reference,
        },
      };
      const timeout = await rails().post(`/api/v1/callbacks/mpesa/b2c/${orderId}/timeout?token=${token}`).send(late);
      expect(timeout.status).to.equal(200);
      const replay = await rails().post(`/api/v1/callbacks/mpesa/b2c/${orderId}/result?token=${token}`).send(late);
      expect(replay.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
      const after = (await rails().get(`/api/v1/payments/orders/${orderId}`).set(user.auth)).body as OrderBody;
      expect([after.status, after.failure_code]).to.deep.equal(['completed', null]);
    });

    it('then a payout sent with a wrong security credential is answered ResultCode 2001 and fails', async () => {
      const wrong = new DarajaConnector({
        baseUrl: fakes.daraja.url,
        consumerKey: fakes.env.DARAJA_CONSUMER_KEY,
        consumerSecret: fakes.env.DARAJA_CONSUMER_SECRET,
        shortcode: fakes.env.DARAJA_SHORTCODE,
        passkey: fakes.env.DARAJA_PASSKEY,
        transactionType: 'CustomerPayBillOnline',
        callbackSecret: secret(),
        publicBaseUrl: baseUrl,
        b2c: { initiatorName: fakes.env.DARAJA_B2C_INITIATOR_NAME, securityCredential: 'bm90LXRoZS1yaWdodC1wYXNzd29yZA==' },
      });
      const orderId = randomUUID();
      const { reference } = await submitAndRecord(wrong, {
        idempotencyKey: orderId,
        orderId,
        method: 'mobile_money',
        amount: '1500.00',
        currency: 'KES',
        destination: { provider: 'mpesa', phone: '+254712345678' },
        description: null,
      });
      // The fake records a result once Paygate has answered it, i.e. after Paygate took it.
      const posted = await until('the B2C result and its acknowledgement', () =>
        Promise.resolve(fakes.daraja.posted.find((p) => p.url.includes(`/b2c/${orderId}/result`))),
      );
      expect(await askRail(wrong, reference)).to.deep.include({ state: 'failed', failureCode: 'invalid_pin', providerCode: '2001' });
      expect(posted.body).to.deep.nested.include({
        'Result.ResultCode': 2001,
        'Result.ResultDesc': 'The initiator information is invalid.',
      });
    });

    it('then a signed sandbox callback cannot fail the payout: no method uses the sandbox, so its endpoint is gone', async () => {
      const user = await newUser();
      fakes.daraja.silentPhones.add('254712000771');
      try {
        const res = await initiate(user, mpesa('+254712000771'));
        const orderId = (res.body as { order_id: string }).order_id;
        const conversation = await until('the B2C payout', () => Promise.resolve(payoutOf(orderId)?.conversation));
        const raw = JSON.stringify({
          reference: conversation,
          merchant_reference: orderId,
          status: 'failed',
          failure_code: 'insufficient_funds',
          provider_code: null,
        });
        const forged = await rails()
          .post('/api/v1/callbacks/sandbox')
          .set('Content-Type', 'application/json')
          .set('X-Sandbox-Signature', signSandboxCallback(loadConfig({}).sandbox.callbackSecret, raw))
          .send(raw);
        expect(forged.status, forged.text).to.equal(404);
        expect((forged.body as { detail?: string }).detail).to.equal('no route for POST /api/v1/callbacks/sandbox');
        // M-Pesa paid: the order completes and the money stays spent, never released back to the payer.
        const order = await settled(user, orderId);
        expect([order.status, order.failure_code]).to.deep.equal(['completed', null]);
        const [recorded] = await rows<{ rail: string }>('SELECT rail FROM orders WHERE id = :orderId', { orderId });
        expect(recorded?.rail).to.equal('daraja');
      } finally {
        fakes.daraja.silentPhones.delete('254712000771');
      }
    });

    it('then a status result whose ConversationID matches no status query is refused and changes nothing', async () => {
      const user = await newUser();
      fakes.daraja.silentPhones.add('254712000772');
      try {
        const res = await initiate(user, mpesa('+254712000772'));
        const orderId = (res.body as { order_id: string }).order_id;
        await until('the B2C payout', () => Promise.resolve(payoutOf(orderId)?.conversation));
        // The fake has the payout as soon as it answers; Paygate records the request once the answer is back.
        const pending = await until('the B2C request recorded', async () => {
          const [row] = await rows<{ status: string }>(`SELECT status FROM rail_requests WHERE order_id = :orderId AND kind = 'b2c'`, {
            orderId,
          });
          return row;
        });
        expect(pending.status).to.equal('pending');
        // The order's own token (it travels in every URL Paygate hands out), but ids of no query Paygate sent.
        const forged = await rails()
          .post(`/api/v1/callbacks/mpesa/b2c/${orderId}/status?token=${callbackToken(secret(), orderId)}`)
          .send({
            Result: {
              ResultType: 0,
              ResultCode: 0,
              ResultDesc: 'The service request is processed successfully.',
              OriginatorConversationID: 'forged-originator-1',
              ConversationID: 'AG_20261123_forgedforgedforged',
              ResultParameters: { ResultParameter: [{ Key: 'TransactionStatus', Value: 'Failed' }] },
            },
          });
        expect(forged.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
        const order = await settled(user, orderId);
        expect([order.status, order.failure_code]).to.deep.equal(['completed', null]);
      } finally {
        fakes.daraja.silentPhones.delete('254712000772');
      }
    });

    it('then a result for a payout whose order already closed is recorded as a late result that contradicts it', async () => {
      const user = await newUser();
      const orderId = randomUUID();
      const conversation = `AG_20261123_late${randomUUID().replace(/-/g, '').slice(0, 16)}`;
      await database().query(
        `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination, status,
                             failure_code, rail, rail_reference, workflow_id, workflow_started_at)
         VALUES (:orderId, :userId, :key, 150000, 150000, 'KES', 'mobile_money', '{"provider":"mpesa","phone":"+254712345678"}',
                 'failed', 'rail_timeout', 'daraja', :conversation, :workflowId, now())`,
        { replacements: { orderId, userId: user.id, key: randomUUID(), conversation, workflowId: `payment-${orderId}` } },
      );
      await database().query(
        `INSERT INTO rail_requests (id, rail, order_id, kind, provider_reference, merchant_reference)
         VALUES (:id, 'daraja', :orderId, 'b2c', :conversation, :orderId)`,
        { replacements: { id: randomUUID(), orderId, conversation } },
      );
      const res = await rails()
        .post(`/api/v1/callbacks/mpesa/b2c/${orderId}/result?token=${callbackToken(secret(), orderId)}`)
        .send({
          Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'paid', OriginatorConversationID: orderId, ConversationID: conversation },
        });
      expect(res.body).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
      const late = await rows<{ rail: string; order_status: string; verdict: string }>(
        'SELECT rail, order_status, verdict FROM late_rail_results WHERE order_id = :orderId',
        { orderId },
      );
      expect(late).to.deep.equal([{ rail: 'daraja', order_status: 'failed', verdict: 'contradicts' }]);
    });

    it('then an amount with cents is refused: M-Pesa takes whole shillings', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesa('+254712345678', '250.50'));
      const order = await settled(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('failed');
      expect(order.failure_code).to.equal('invalid_amount');
    });
  });

  describe('when customers pay in through the M-Pesa paybill (C2B)', () => {
    const walletOf = async (user: TestUser) =>
      (await rails().get('/api/v1/wallets').set(user.auth)).body as {
        deposit_reference: string;
        data: { currency: string; available: string }[];
      };
    const kes = (w: { data: { currency: string; available: string }[] }) => w.data.find((d) => d.currency === 'KES')?.available;

    it('then the api registered the paybill URLs at boot, under its public URL and with their token', async () => {
      const registered = await until('the paybill registration', () => Promise.resolve(fakes.daraja.c2b), 20_000, 100);
      expect(registered.responseType).to.equal('Completed');
      expect(registered.confirmationUrl).to.match(new RegExp(`^${baseUrl}/api/v1/callbacks/mpesa/c2b/confirmation\\?token=.+`));
      expect(registered.validationUrl).to.match(new RegExp(`^${baseUrl}/api/v1/callbacks/mpesa/c2b/validation\\?token=.+`));
    });

    it('then a payment quoting the deposit reference is validated, and its confirmation, delivered three times, credits once', async () => {
      await until('the paybill registration', () => Promise.resolve(fakes.daraja.c2b), 20_000, 100);
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const paid = await fakes.daraja.payBill({ billRef: reference.toLowerCase(), amount: '2000.00', msisdn: '254712345678' });
      expect(paid.validation).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
      expect(paid.confirmation).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
      for (let i = 0; i < 2; i++)
        expect(await fakes.daraja.confirmAgain(paid.body)).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
      expect(kes(await walletOf(user))).to.equal('2000.00');
      const statement = await rails().get('/api/v1/wallets/KES/transactions').set(user.auth);
      expect((statement.body as { data: { kind: string; amount: string; balance_after: string }[] }).data).to.have.length(1);
      const [deposit] = await rows<{ provider_reference: string; rail: string; payer_phone: string; payer_name: string }>(
        `SELECT provider_reference, rail, payer_phone, payer_name FROM deposits WHERE user_id = :id`,
        { id: user.id },
      );
      expect(deposit).to.deep.equal({ provider_reference: paid.transId, rail: 'daraja', payer_phone: '+254712345678', payer_name: 'John' });
    });

    it('then a reference nobody has is refused at validation, and money M-Pesa completed anyway waits unmatched', async () => {
      await until('the paybill registration', () => Promise.resolve(fakes.daraja.c2b), 20_000, 100);
      const refused = await fakes.daraja.payBill({ billRef: 'NOBODY-123', amount: '500.00', msisdn: '254712345678' });
      expect(refused.validation).to.deep.include({ ResultCode: 'C2B00012' });
      expect(refused.confirmation).to.equal(undefined);
      // Validation is optional on Daraja's side; when it was not asked, the confirmation still arrives.
      const completed = await fakes.daraja.confirmAgain({ ...refused.body, TransID: `${refused.transId.slice(0, 9)}Z` });
      expect(completed).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
      const [row] = await rows<{ status: string; user_id: string | null }>(
        `SELECT status, user_id FROM deposits WHERE provider_reference = :ref`,
        {
          ref: `${refused.transId.slice(0, 9)}Z`,
        },
      );
      expect(row).to.deep.equal({ status: 'unmatched', user_id: null });
    });

    it('then a confirmation without the registered token credits nothing', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const forged = await rails()
        .post('/api/v1/callbacks/mpesa/c2b/confirmation?token=forged')
        .send({ TransID: 'FORGED1234', TransAmount: '9999.00', BillRefNumber: reference, MSISDN: '254712345678' });
      expect(forged.status).to.equal(200);
      expect(forged.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
      expect(kes(await walletOf(user))).to.equal('0.00');
    });
  });

  describe('when M-Pesa collects from a payer by STK Push', () => {
    let daraja: DarajaConnector;
    const collect = (orderId: string, phone: string) =>
      collectAndRecord(daraja, {
        idempotencyKey: orderId,
        orderId,
        method: 'mobile_money',
        direction: 'collection',
        amount: '1300.00',
        currency: 'KES',
        destination: { provider: 'mpesa', phone },
        description: 'P2P fiat',
      });

    before(() => {
      daraja = new DarajaConnector({
        baseUrl: fakes.daraja.url,
        consumerKey: fakes.env.DARAJA_CONSUMER_KEY,
        consumerSecret: fakes.env.DARAJA_CONSUMER_SECRET,
        shortcode: fakes.env.DARAJA_SHORTCODE,
        passkey: fakes.env.DARAJA_PASSKEY,
        transactionType: 'CustomerPayBillOnline',
        callbackSecret: secret(),
        publicBaseUrl: baseUrl,
        b2c: { initiatorName: fakes.env.DARAJA_B2C_INITIATOR_NAME, securityCredential: fakes.env.DARAJA_B2C_SECURITY_CREDENTIAL },
      });
    });

    it('then the push carries the password scheme, and its callback resolves the request', async () => {
      const orderId = randomUUID();
      const { reference } = await collect(orderId, '+254712345679');
      expect(reference).to.match(/^ws_CO_/);
      const push = fakes.daraja.calls.find(
        (c) =>
          c.path === '/mpesa/stkpush/v1/processrequest' && c.body.CheckoutRequestID === undefined && c.body.PhoneNumber === '254712345679',
      );
      const timestamp = String(push?.body.Timestamp);
      expect(push?.body).to.include({
        BusinessShortCode: '174379',
        Password: Buffer.from(`174379${fakes.env.DARAJA_PASSKEY}${timestamp}`).toString('base64'),
        TransactionType: 'CustomerPayBillOnline',
        Amount: 1300,
        PartyA: '254712345679',
        PartyB: '174379',
      });
      const resolved = await until('the STK callback', async () => {
        const [row] = await rows<{ status: string }>(`SELECT status FROM rail_requests WHERE order_id = :orderId`, { orderId });
        return row?.status === 'succeeded' ? row : undefined;
      });
      expect(resolved.status).to.equal('succeeded');
      expect(await askRail(daraja, reference)).to.deep.include({ state: 'succeeded', reference });
      expect(await collect(orderId, '+254712345679')).to.deep.equal({ reference });
    });

    it('then a late callback is resolved by the STK query', async () => {
      const orderId = randomUUID();
      const { reference } = await collect(orderId, '+254700000999');
      const outcome = await until('the STK query to tell the outcome', async () => {
        const status = await askRail(daraja, reference);
        return status.state === 'pending' ? undefined : status;
      });
      expect(outcome).to.deep.include({ state: 'succeeded', reference });
      expect(fakes.daraja.calls.some((c) => c.path === '/mpesa/stkpushquery/v1/query' && c.body.CheckoutRequestID === reference)).to.equal(
        true,
      );
      expect(fakes.daraja.posted.some((p) => p.url.includes(`/stk/${orderId}`))).to.equal(false);
    });

    it('then a forged callback is ignored and the query tells the real outcome', async () => {
      const orderId = randomUUID();
      fakes.daraja.silentPhones.add('254700002001');
      try {
        const { reference } = await collect(orderId, '+254700002001');
        const forged = {
          Body: { stkCallback: { MerchantRequestID: 'forged', CheckoutRequestID: reference, ResultCode: 0, ResultDesc: 'paid' } },
        };
        const withoutToken = await rails().post(`/api/v1/callbacks/mpesa/stk/${orderId}`).send(forged);
        expect(withoutToken.status).to.equal(200);
        expect(withoutToken.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
        const wrongToken = await rails()
          .post(`/api/v1/callbacks/mpesa/stk/${orderId}?token=${'x'.repeat(32)}`)
          .send(forged);
        expect(wrongToken.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
        const outcome = await until('the STK query', async () => {
          const status = await askRail(daraja, reference);
          return status.state === 'pending' ? undefined : status;
        });
        expect(outcome).to.deep.include({ state: 'failed', failureCode: 'invalid_pin' });
      } finally {
        fakes.daraja.silentPhones.delete('254700002001');
      }
    });
  });

  describe('when a crypto payment goes through ccxt to the exchange', () => {
    const crypto = (destination: Record<string, string>, amount = '25.500000', currency = 'USDT') => ({
      amount,
      currency,
      method: 'crypto',
      destination,
    });

    it('then the withdrawal is signed as Binance checks it, names the network, and settles', async () => {
      const user = await newUser();
      const res = await initiate(user, crypto({ address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', network: 'TRC20' }));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const orderId = (res.body as { order_id: string }).order_id;
      const order = await settled(user, orderId);
      expect(order.status, JSON.stringify(order)).to.equal('completed');
      const withdrawal = fakes.binance.withdrawals.find((w) => w.withdrawOrderId === orderId);
      expect(withdrawal).to.deep.include({ coin: 'USDT', network: 'TRX', address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', amount: '25.5' });
      expect(order.rail_reference).to.equal(withdrawal?.id);
      expect(fakes.binance.signed.filter((c) => c.path.startsWith('/sapi/v1/capital/'))).to.not.be.empty;
      expect(fakes.binance.signed.every((c) => c.valid)).to.equal(true);
    });

    it('then a withdrawal the exchange fails ends failed with exchange_rejected', async () => {
      const user = await newUser();
      const res = await initiate(user, crypto({ address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcFAIL', network: 'TRC20' }));
      const order = await settled(user, (res.body as { order_id: string }).order_id);
      expect([order.status, order.failure_code]).to.deep.equal(['failed', 'exchange_rejected']);
    });

    it('then more than the account holds is refused with insufficient_funds', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      const res = await initiate(
        user,
        crypto({ address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72', network: 'ERC20' }, '2500.000000', 'USDC'),
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const order = await settled(user, (res.body as { order_id: string }).order_id);
      expect([order.status, order.failure_code]).to.deep.equal(['failed', 'insufficient_funds']);
    });

    it('then a bad signature is rejected by the exchange and the payment fails with provider_auth_failed', async () => {
      const user = await newUser();
      fakes.binance.setSecret('another-secret');
      try {
        const res = await initiate(user, crypto({ address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', network: 'TRC20' }));
        const order = await settled(user, (res.body as { order_id: string }).order_id);
        expect([order.status, order.failure_code]).to.deep.equal(['failed', 'provider_auth_failed']);
        expect(order.failure_reason).to.match(/[Ss]ignature/);
        expect(fakes.binance.signed.some((c) => !c.valid)).to.equal(true);
      } finally {
        fakes.binance.setSecret(fakes.env.CCXT_SECRET);
      }
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
      // The bank's own books: its opening lines, then every transfer it executed above, each with its charge.
      expect(balance.body).to.include({
        bank_code: '68',
        connector: 'jenga',
        currency: 'KES',
        available: fakes.jenga.balance(),
        current: fakes.jenga.balance(),
      });
      const statement = await rails().get('/api/v1/platforms/banks/primary/transactions').set(admin.auth);
      expect(statement.status).to.equal(200);
      const lines = (statement.body as { data: { type: string; amount: string }[] }).data;
      expect(lines.map((l) => [l.type, l.amount])).to.deep.equal(fakes.jenga.statement().map((l) => [l.type, l.amount]));
      expect(lines.slice(-2).map((l) => [l.type, l.amount])).to.deep.equal([
        ['Debit', '2500.00'],
        ['Credit', '150000.00'],
      ]);
      const sent = [...fakes.jenga.transfers.values()].filter((t) => t.status === 'SUCCESS');
      expect(sent.length, 'transfers executed above').to.be.greaterThan(0);
      const debits = lines.filter((l) => l.type === 'Debit').length;
      expect(debits, 'each executed transfer and its charge debit the account').to.equal(1 + 2 * sent.length);
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
        expect(order.failure_reason).to.equal('the bank refused our request signature');
        expect(fakes.jenga.calls.some((c) => !c.signatureValid)).to.equal(true);
      } finally {
        fakes.jenga.setPublicKey(fakes.jengaPublicKey);
      }
    });
  });
});
