import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { expect } from 'chai';
import { newUser, type TestUser } from './support/api';
import { rows } from './support/db';
import {
  freePort,
  startApiProcess,
  startJobsProcess,
  stopApiProcess,
  until,
  untilHealthy,
  type ApiProcess,
  type JobsProcess,
} from './support/processes';
import { RUN_ID } from './support/env';
import { startRailFakes, type RailFakes } from './fakes/rails';
import { callbackToken } from '../connectors/daraja';
import { database } from '../platform/database';

/**
 * Money in is proven before it is credited (docs/wallets.md#money-in-is-proven): an api started from the
 * build with M-Pesa on Daraja (the local fake), behind a trusted local proxy so that X-Forwarded-For names
 * the source address. A paybill confirmation is taken only from Safaricom's addresses and with a standing
 * URL token, and credits nothing until Daraja's Transaction Status confirms it; everything else is listed
 * for staff. A payment that comes after its STK deposit was given up is credited or listed, never dropped.
 */

const GRACE_MS = 2_000;
const SAFARICOM = '196.201.214.200';
/** The back-off of paybill status queries (the api counts the first query, the jobs the re-asks). */
const RECHECK_AFTER_MS = 300;

interface Unproven {
  claim_id: string;
  status: string;
  reason: string | null;
  channel: string;
  provider_reference: string | null;
  amount: string | null;
  source_address: string | null;
}

describe('money in, proven before it is credited', function () {
  this.timeout(60_000);
  let fakes: RailFakes;
  let api: ApiProcess | undefined;
  let port = 0;
  let staff: TestUser;
  const paygate = () => request(`http://127.0.0.1:${port}`);

  async function startApi(): Promise<string> {
    const before = fakes.daraja.c2b?.confirmationUrl;
    api = startApiProcess(
      {
        ...fakes.env,
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        TRUST_PROXY: 'loopback',
        DARAJA_C2B_TOKEN_GRACE_MS: String(GRACE_MS),
        C2B_STATUS_RECHECK_AFTER_MS: String(RECHECK_AFTER_MS),
        C2B_STATUS_RECHECK_MAX_INTERVAL_MS: String(2 * RECHECK_AFTER_MS),
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      },
      port,
    );
    await untilHealthy(api, 'the money-in api');
    const registered = await until(
      'a new paybill registration',
      () => Promise.resolve(fakes.daraja.c2b && fakes.daraja.c2b.confirmationUrl !== before ? fakes.daraja.c2b : undefined),
      20_000,
      50,
    );
    return new URL(registered.confirmationUrl).searchParams.get('token') ?? '';
  }

  let token = '';
  before(async function () {
    this.timeout(90_000);
    fakes = await startRailFakes();
    port = await freePort();
    token = await startApi();
    staff = await newUser({ roles: ['user', 'compliance'], funded: false });
  });

  after(async () => {
    await stopApiProcess(api);
    await fakes.close();
  });

  const walletOf = async (user: TestUser) =>
    (await paygate().get('/api/v1/wallets').set(user.auth)).body as {
      deposit_reference: string;
      data: { currency: string; available: string }[];
    };
  const kes = async (user: TestUser) => (await walletOf(user)).data.find((d) => d.currency === 'KES')?.available;
  const transId = () => `T${randomUUID().replace(/-/g, '').slice(0, 9).toUpperCase()}`;
  const confirmation = (id: string, reference: string, amount: string) => ({
    TransactionType: 'Pay Bill',
    TransID: id,
    TransTime: '20261126080000',
    TransAmount: amount,
    BusinessShortCode: fakes.env.DARAJA_SHORTCODE,
    BillRefNumber: reference,
    MSISDN: '254712345678',
    FirstName: 'John',
  });
  const confirm = (body: Record<string, unknown>, opts: { token?: string; from?: string } = {}) => {
    let req = paygate().post(`/api/v1/callbacks/mpesa/c2b/confirmation?token=${encodeURIComponent(opts.token ?? token)}`);
    if (opts.from) req = req.set('X-Forwarded-For', opts.from);
    return req.send(body);
  };
  /** M-Pesa took this payment: Transaction Status reports it. */
  const mpesaTook = (id: string, reference: string, amount: string) =>
    fakes.daraja.c2bPayments.set(id, { transId: id, amount, billRef: reference, msisdn: '254712345678', firstName: 'John' });
  const unproven = async (status?: string): Promise<Unproven[]> => {
    const res = await paygate()
      .get(`/api/v1/wallets/unproven-deposits?limit=100${status ? `&status=${status}` : ''}`)
      .set(staff.auth);
    expect(res.status, res.text).to.equal(200);
    return (res.body as { data: Unproven[] }).data;
  };
  const claimOf = (id: string, status?: string) =>
    until(`the claim for ${id}${status ? ` to be ${status}` : ''}`, async () =>
      (await unproven()).find((c) => c.provider_reference === id && (!status || c.status === status)),
    );

  describe('when a paybill confirmation comes from an address outside the allow-list', () => {
    it('then it credits nothing, even for a real payment, and is listed for staff as rejected', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const id = transId();
      mpesaTook(id, reference, '700.00');
      const res = await confirm(confirmation(id, reference, '700.00'), { from: '203.0.113.9' });
      expect(res.body).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
      expect(await kes(user)).to.equal('0.00');
      const claim = await claimOf(id, 'rejected');
      expect(claim).to.include({
        reason: 'source_address_not_allowed',
        source_address: '203.0.113.9',
        amount: '700.00',
        channel: 'mpesa_c2b',
      });
      expect(
        fakes.daraja.calls.filter((c) => c.path === '/mpesa/transactionstatus/v1/query' && c.body.TransactionID === id),
      ).to.have.length(0);
    });

    it("then the same confirmation from one of Safaricom's addresses is proven with the rail and credited once", async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const id = transId();
      mpesaTook(id, reference, '450.00');
      const res = await confirm(confirmation(id, reference, '450.00'), { from: SAFARICOM });
      expect(res.body).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
      await until('the proven credit', async () => ((await kes(user)) === '450.00' ? true : undefined));
      await confirm(confirmation(id, reference, '450.00'), { from: SAFARICOM });
      await new Promise((r) => setTimeout(r, 400));
      expect(await kes(user)).to.equal('450.00');
      const query = fakes.daraja.calls.find((c) => c.path === '/mpesa/transactionstatus/v1/query' && c.body.TransactionID === id);
      expect(query?.body).to.include({ CommandID: 'TransactionStatusQuery', PartyA: fakes.env.DARAJA_SHORTCODE, IdentifierType: '4' });
    });
  });

  describe('when a confirmation names a TransID that Transaction Status does not confirm', () => {
    it('then it is recorded, credits nothing, and is listed for staff as unconfirmed with the rail’s words', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const id = transId();
      const res = await confirm(confirmation(id, reference, '9999.00'));
      expect(res.body).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
      const claim = await claimOf(id, 'unconfirmed');
      expect(claim.reason).to.match(/does not exist/);
      expect(await kes(user)).to.equal('0.00');
      expect(await rows('SELECT id FROM deposits WHERE provider_reference = :id', { id })).to.deep.equal([]);
    });

    it('then one whose amount differs from what the rail reports credits nothing, and the genuine one still credits', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const id = transId();
      mpesaTook(id, reference, '100.00');
      await confirm(confirmation(id, reference, '5000.00'));
      const claim = await claimOf(id, 'unconfirmed');
      expect(claim.reason).to.match(/100\.00/);
      expect(await kes(user)).to.equal('0.00');
      await confirm(confirmation(id, reference, '100.00'));
      await until('the genuine credit', async () => ((await kes(user)) === '100.00' ? true : undefined));
    });

    it('then staff can only ask the rail again: once M-Pesa knows the payment, the recheck credits it', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const id = transId();
      await confirm(confirmation(id, reference, '320.00'));
      const claim = await claimOf(id, 'unconfirmed');
      const plain = await newUser({ funded: false });
      expect((await paygate().post(`/api/v1/wallets/unproven-deposits/${claim.claim_id}/recheck`).set(plain.auth)).status).to.equal(403);
      mpesaTook(id, reference, '320.00');
      const res = await paygate().post(`/api/v1/wallets/unproven-deposits/${claim.claim_id}/recheck`).set(staff.auth);
      expect(res.status, res.text).to.equal(200);
      expect((res.body as Unproven).status).to.equal('checking');
      await until('the credit proven on recheck', async () => ((await kes(user)) === '320.00' ? true : undefined));
      expect((await unproven()).map((c) => c.claim_id)).not.to.include(claim.claim_id);
    });
  });

  describe("when Daraja's Transaction Status gives no answer about a paybill payment", () => {
    // Two jobs processes on queues of their own, each running `recheck-c2b-claims`: two re-askers at once.
    let rechecks: JobsProcess[] = [];
    before(() => {
      const quiet = Object.fromEntries(
        ['MATCH_BANK_DEPOSITS_EVERY_MS', 'MATCH_CRYPTO_DEPOSITS_EVERY_MS', 'RECONCILE_RAILS_EVERY_MS', 'RECONCILE_INTERVAL_MS'].map((s) => [
          s,
          '3600000',
        ]),
      );
      rechecks = ['a', 'b'].map((n) =>
        startJobsProcess({
          ...fakes.env,
          ...quiet,
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
          QUEUE_PREFIX: `paygate-c2b-recheck-${n}-${RUN_ID}`,
          C2B_STATUS_RECHECK_AFTER_MS: String(RECHECK_AFTER_MS),
          C2B_STATUS_RECHECK_MAX_INTERVAL_MS: String(2 * RECHECK_AFTER_MS),
        }),
      );
    });
    after(async () => {
      fakes.daraja.faults.c2bStatusUnavailable = false;
      fakes.daraja.faults.statusQueryError = undefined;
      for (const code of await Promise.all(rechecks.map((j) => j.stop()))) expect(code, 'a jobs process exits cleanly').to.equal(0);
    });

    const statusQueriesAbout = (id: string) =>
      fakes.daraja.calls.filter((c) => c.path === '/mpesa/transactionstatus/v1/query' && c.body.TransactionID === id).length;
    const askedAgain = (id: string, times: number) =>
      until(`${times} status queries about ${id}`, () => Promise.resolve(statusQueriesAbout(id) >= times || undefined), 20_000, 50);

    it('then, when the query fails at first and later confirms the payment, the claim stays checking until it is asked again, and is credited once', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const id = transId();
      mpesaTook(id, reference, '275.00');
      fakes.daraja.faults.c2bStatusUnavailable = true;
      try {
        expect((await confirm(confirmation(id, reference, '275.00'))).body).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
        // The first query and at least two re-asks are refused: the claim waits, listed, nothing credited.
        await askedAgain(id, 3);
        expect((await claimOf(id)).status).to.equal('checking');
        expect(await kes(user)).to.equal('0.00');
      } finally {
        fakes.daraja.faults.c2bStatusUnavailable = false;
      }
      await until('the credit once Daraja answers', async () => ((await kes(user)) === '275.00' ? true : undefined), 20_000, 100);
      // More re-asks would have had their time by now: the receipt is still credited once.
      await new Promise((r) => setTimeout(r, 4 * RECHECK_AFTER_MS));
      expect(await kes(user)).to.equal('275.00');
      expect(await rows('SELECT id FROM deposits WHERE provider_reference = :id', { id })).to.have.length(1);
      const [claim] = await rows<{ status: string; deposit_id: string | null }>(
        'SELECT status, deposit_id FROM deposit_claims WHERE provider_reference = :id',
        { id },
      );
      expect(claim.status).to.equal('credited');
      expect((await unproven()).map((c) => c.provider_reference)).not.to.include(id);
    });

    it('then, when the query fails on its own and later M-Pesa says the receipt does not exist, the claim is listed as unconfirmed and nothing is credited', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const id = transId();
      fakes.daraja.faults.statusQueryError = { code: 2001, desc: 'The initiator information is invalid.' };
      try {
        await confirm(confirmation(id, reference, '640.00'));
        await askedAgain(id, 3);
        // The query's own failure says nothing of the payment: still checking, with why.
        const waiting = await claimOf(id, 'checking');
        expect(waiting.reason).to.match(/initiator information is invalid/);
        expect(await kes(user)).to.equal('0.00');
      } finally {
        fakes.daraja.faults.statusQueryError = undefined;
      }
      const refused = await claimOf(id, 'unconfirmed');
      expect(refused.reason).to.match(/does not exist/);
      const queries = statusQueriesAbout(id);
      await new Promise((r) => setTimeout(r, 4 * RECHECK_AFTER_MS));
      expect(statusQueriesAbout(id), 'a refused claim is not asked again by itself').to.equal(queries);
      expect(await kes(user)).to.equal('0.00');
      expect(await rows('SELECT id FROM deposits WHERE provider_reference = :id', { id })).to.deep.equal([]);
    });
  });

  describe('when the api registers the paybill URLs again (a restart)', () => {
    it('then the token is new, the old one is taken within its grace period, and refused after it', async () => {
      const old = token;
      await stopApiProcess(api);
      token = await startApi();
      expect(token).not.to.equal(old);
      expect(token.length).to.be.at.least(24);

      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const withinGrace = transId();
      mpesaTook(withinGrace, reference, '60.00');
      expect((await confirm(confirmation(withinGrace, reference, '60.00'), { token: old })).body).to.deep.equal({
        ResultCode: 0,
        ResultDesc: 'Accepted',
      });
      await until('the credit within the grace period', async () => ((await kes(user)) === '60.00' ? true : undefined));

      await new Promise((r) => setTimeout(r, GRACE_MS + 300));
      const late = transId();
      mpesaTook(late, reference, '80.00');
      expect((await confirm(confirmation(late, reference, '80.00'), { token: old })).body).to.deep.equal({
        ResultCode: 1,
        ResultDesc: 'Ignored',
      });
      expect((await claimOf(late, 'rejected')).reason).to.equal('token_expired');
      expect((await confirm(confirmation(transId(), reference, '1.00'), { token: 'never-registered' })).body).to.include({ ResultCode: 1 });
      await new Promise((r) => setTimeout(r, 300));
      expect(await kes(user)).to.equal('60.00');

      const current = transId();
      mpesaTook(current, reference, '15.00');
      await confirm(confirmation(current, reference, '15.00'));
      await until('the credit with the current token', async () => ((await kes(user)) === '75.00' ? true : undefined));
    });
  });

  describe('when an STK payment arrives after its deposit was given up', () => {
    async function givenUpDeposit(user: TestUser, checkout: string): Promise<string> {
      const depositId = randomUUID();
      await database().query(
        `INSERT INTO deposits (id, user_id, channel, rail, currency, amount_minor, status, rail_reference, payer_phone, failure_code, failure_reason)
         VALUES (:depositId, :userId, 'mpesa_stk', 'daraja', 'KES', 130000, 'failed', :checkout, '+254712345678', 'rail_timeout', 'given up')`,
        { replacements: { depositId, userId: user.id, checkout } },
      );
      return depositId;
    }
    const paid = (checkout: string) => ({
      Body: {
        stkCallback: {
          MerchantRequestID: 'm-1',
          CheckoutRequestID: checkout,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          CallbackMetadata: { Item: [{ Name: 'MpesaReceiptNumber', Value: 'RCPLATE001' }] },
        },
      },
    });

    it('then the late callback credits the wallet once', async () => {
      const user = await newUser({ funded: false });
      const checkout = `ws_CO_late${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      const depositId = await givenUpDeposit(user, checkout);
      await database().query(
        `INSERT INTO rail_requests (id, rail, order_id, kind, provider_reference, merchant_reference)
         VALUES (:id, 'daraja', :depositId, 'stk', :checkout, 'm-1')`,
        { replacements: { id: randomUUID(), depositId, checkout } },
      );
      const url = `/api/v1/callbacks/mpesa/stk/${depositId}?token=${callbackToken(fakes.env.DARAJA_CALLBACK_SECRET, depositId)}`;
      expect((await paygate().post(url).send(paid(checkout))).body).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
      await paygate().post(url).send(paid(checkout));
      expect(await kes(user)).to.equal('1300.00');
      const deposits = await rows<{ status: string; provider_reference: string | null }>(
        'SELECT status, provider_reference FROM deposits WHERE user_id = :id ORDER BY created_at',
        { id: user.id },
      );
      expect(deposits).to.deep.equal([
        { status: 'failed', provider_reference: null },
        { status: 'completed', provider_reference: checkout },
      ]);
    });

    it('then a paid callback for a prompt Paygate has no record of, which the STK query cannot confirm, is listed for staff', async () => {
      const user = await newUser({ funded: false });
      const depositId = await givenUpDeposit(user, `ws_CO_first${randomUUID().slice(0, 8)}`);
      const second = `ws_CO_second${randomUUID().replace(/-/g, '').slice(0, 10)}`;
      const url = `/api/v1/callbacks/mpesa/stk/${depositId}?token=${callbackToken(fakes.env.DARAJA_CALLBACK_SECRET, depositId)}`;
      expect((await paygate().post(url).send(paid(second))).body).to.deep.equal({ ResultCode: 0, ResultDesc: 'Accepted' });
      const claim = await claimOf(second, 'unconfirmed');
      expect(claim).to.include({ channel: 'mpesa_stk', amount: '1300.00' });
      expect(await kes(user)).to.equal('0.00');
    });
  });
});
