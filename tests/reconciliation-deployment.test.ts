import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import request from 'supertest';
import { balanceQueryToken } from '../connectors/daraja';
import { ensureDatabase, migrateUp } from '../models/migrate';
import { reloadConfig } from '../platform/config';
import { createSequelize } from '../platform/database';
import { startRailFakes, type RailFakes } from './fakes/rails';
import { TEST_PASSWORD } from './support/api';
import { RUN_ID } from './support/env';
import { dropDatabase } from './support/local-tools';
import {
  freePort,
  startApiProcess,
  startJobsProcess,
  startWorkerProcess,
  stopApiProcess,
  until,
  untilHealthy,
  type ApiProcess,
  type JobsProcess,
} from './support/processes';

/**
 * Reconciliation of a whole deployment (docs/wallets.md#reconciliation-line-by-line): a deployment of its
 * own (its own database, api, Temporal worker and jobs processes) on the real connectors, against provider
 * fakes that start as new accounts holding nothing. Everything the rails hold then came through this
 * deployment, so a clean history must have no break from its first line, and every rail's balance must be
 * explained by the ledger to zero: the opening float, customers' money in and out, and the bank's charges.
 */

interface RunBody {
  rails: { rail: string; method: string; rail_lines: number | null; ledger_lines: number; note?: string }[];
  breaks: { kind: string; reference: string }[];
}

interface FloatBody {
  data: {
    currency: string;
    ledger_difference: string;
    rails: { method: string; connector: string | null; ledger: string; reported: string | null; difference: string | null }[];
  }[];
}

describe('reconciliation of a whole deployment on the real rails, from its first line', function () {
  this.timeout(180_000);
  const url = (() => {
    const u = new URL(reloadConfig().databaseUrl);
    u.pathname = `${u.pathname}_deployment`;
    return u.toString();
  })();
  let fakes: RailFakes;
  let db: Sequelize;
  let api: ApiProcess | undefined;
  let worker: JobsProcess | undefined;
  let jobs: JobsProcess | undefined;
  let deployedAt: Date;

  const call = () => request(api?.url ?? '');
  const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
    db.query<T>(sql, { replacements, type: QueryTypes.SELECT });

  /** Register and log in through this deployment's api, with KYC and roles set directly for the arrangement. */
  async function person(tag: string, roles: string[] = []): Promise<{ id: string; auth: { Authorization: string } }> {
    const email = `${tag}-${RUN_ID}@example.com`;
    const registered = await call().post('/api/v1/auth/register').send({ email, password: TEST_PASSWORD, full_name: 'Jane Doe' });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
    const id = (registered.body as { user_id: string }).user_id;
    await db.query(`UPDATE users SET kyc_status = 'verified', roles = CAST(:roles AS text[]) WHERE id = :id`, {
      replacements: { id, roles: `{${roles.join(',')}}` },
    });
    const login = await call().post('/api/v1/auth/login').send({ email, password: TEST_PASSWORD });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    return { id, auth: { Authorization: `Bearer ${(login.body as { access_token: string }).access_token}` } };
  }

  before(async () => {
    await dropDatabase(url);
    await ensureDatabase(url);
    await migrateUp(url);
    db = createSequelize(url, 2);
    fakes = await startRailFakes({ fresh: true });
    const port = await freePort();
    const env = {
      ...fakes.env,
      DATABASE_URL: url,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      QUEUE_PREFIX: `paygate-deployment-${RUN_ID}`,
      TEMPORAL_TASK_QUEUE: `paygate-deployment-${RUN_ID}`,
    };
    deployedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    jobs = startJobsProcess({
      ...env,
      MATCH_BANK_DEPOSITS_EVERY_MS: '200',
      MATCH_CRYPTO_DEPOSITS_EVERY_MS: '3600000',
      RECONCILE_INTERVAL_MS: '3600000',
      RECONCILE_RAILS_EVERY_MS: '3600000',
      REFRESH_EXCHANGES_EVERY_MS: '3600000',
      REFRESH_BANKS_EVERY_MS: '3600000',
    });
    worker = startWorkerProcess(env);
    api = startApiProcess(env, port);
    await untilHealthy(api, "the deployment's api");
  });

  after(async () => {
    await stopApiProcess(api);
    await worker?.stop();
    await jobs?.stop();
    await fakes?.close();
    await db?.close();
    await dropDatabase(url);
  });

  it('then a clean history has no break, and the bank, M-Pesa and the exchange are each explained to zero', async () => {
    // The operator's opening float arrives at the bank, marked as such: the bank job books it to operator:float.
    const float = fakes.jenga.topUp('100000.00');
    await until('the opening float booked', async () =>
      (await q<{ status: string }>('SELECT status FROM deposits WHERE provider_reference = :float', { float })).at(0),
    );
    // A customer's deposit arrives at the bank, quoting their deposit reference; then they pay out by bank.
    const payer = await person('payer');
    const { deposit_reference: reference } = (await call().get('/api/v1/wallets').set(payer.auth)).body as { deposit_reference: string };
    fakes.jenga.credit({ reference: `FT${RUN_ID.toUpperCase()}`, amount: '5000.00', description: `pesalink from jane ${reference}` });
    await until('the deposit credited', async () => {
      const wallets = (await call().get('/api/v1/wallets').set(payer.auth)).body as { data: { currency: string; available: string }[] };
      return wallets.data.find((w) => w.currency === 'KES')?.available === '5000.00' ? true : undefined;
    });
    const paid = await call()
      .post('/api/v1/payments/initiate')
      .set(payer.auth)
      .set('Idempotency-Key', `deployment-${RUN_ID}`)
      .send({
        amount: '1500.00',
        currency: 'KES',
        method: 'bank_transfer',
        destination: { bank_code: '01', account_number: '1234567810', account_name: 'Jane Doe' },
      });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(202);
    const orderId = (paid.body as { order_id: string }).order_id;
    const order = await until('the payout settled', async () => {
      const o = (await call().get(`/api/v1/payments/orders/${orderId}`).set(payer.auth)).body as { status: string; rail_reference: string };
      return ['completed', 'failed', 'rejected'].includes(o.status) ? o : undefined;
    });
    expect(order.status).to.equal('completed');
    expect(fakes.jenga.balance(), "the bank's own books: float + deposit - payout - its charge").to.equal('103475.00');

    // The whole history of the deployment, from before its first line to now: no break.
    const officer = await person('officer', ['compliance']);
    const res = await call()
      .post('/api/v1/compliance/reconciliation/runs')
      .set(officer.auth)
      .send({ from: new Date(deployedAt.getTime() - 60_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const run = res.body as RunBody;
    expect(run.breaks, JSON.stringify(run.breaks)).to.deep.equal([]);
    const bank = run.rails.find((r) => r.method === 'bank_transfer');
    expect(bank, JSON.stringify(run.rails)).to.include({ rail: 'jenga', rail_lines: 4, ledger_lines: 4 });
    for (const r of run.rails) expect(r.rail_lines, `${r.rail}: ${r.note ?? ''}`).to.not.equal(null);
    // The charge was posted once, to the operator's expense.
    expect(await q('SELECT amount_minor::text AS amount FROM rail_charges')).to.deep.equal([{ amount: '2500' }]);
    expect(await q(`SELECT balance_minor::text AS b FROM accounts WHERE account = 'expense:rail_fees'`)).to.deep.equal([{ b: '-2500' }]);

    // Every rail's own balance is what the ledger says it holds (M-Pesa's once its Account Balance answer came).
    const float_ = await until('every rail reported its balance', async () => {
      const body = (await call().get('/api/v1/compliance/reconciliation').set(officer.auth)).body as FloatBody;
      const kes = body.data.find((d) => d.currency === 'KES');
      return kes?.rails.every((r) => r.reported !== null) && kes.rails.length >= 2 ? body : undefined;
    });
    const kes = float_.data.find((d) => d.currency === 'KES');
    expect(kes?.rails.map((r) => [r.method, r.connector, r.ledger, r.reported, r.difference])).to.deep.equal([
      ['bank_transfer', 'jenga', '103475.00', '103475.00', '0.00'],
      ['mobile_money', 'daraja', '0.00', '0.00', '0.00'],
    ]);
    for (const c of float_.data) {
      expect(c.ledger_difference, c.currency).to.match(/^0(\.0+)?$/);
      for (const r of c.rails) expect(r.difference, `${c.currency} ${r.method}`).to.match(/^0(\.0+)?$/);
    }
  });

  describe("when M-Pesa's Account Balance answer fails, or someone else posts one", () => {
    const mpesaLine = async (staff: { auth: { Authorization: string } }) => {
      const body = (await call().get('/api/v1/compliance/reconciliation').set(staff.auth)).body as FloatBody;
      return body.data.find((d) => d.currency === 'KES')?.rails.find((r) => r.method === 'mobile_money');
    };

    it('then a failed query is recorded as failed and a forged answer is ignored, and the last true answer stands', async () => {
      const officer = await person('balance-officer', ['compliance']);
      const answered = await until('a first answer', async () => {
        const line = await mpesaLine(officer);
        return line?.reported != null ? line : undefined;
      });
      // The query itself fails at Daraja (a bad initiator): that says nothing of the balance.
      fakes.daraja.faults.statusQueryError = { code: 2001, desc: 'The initiator information is invalid.' };
      try {
        const failedBefore = (await q<{ n: number }>(`SELECT count(*)::int AS n FROM rail_balance_queries WHERE status = 'failed'`))[0].n;
        expect((await mpesaLine(officer))?.reported).to.equal(answered.reported);
        await until('the failed answer recorded', async () => {
          const [{ n }] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM rail_balance_queries WHERE status = 'failed'`);
          return n > failedBefore ? true : undefined;
        });
      } finally {
        fakes.daraja.faults.statusQueryError = undefined;
      }
      // A query waiting for its answer, answered with its own token but other ids, or with no token: ignored.
      const pending = { id: randomUUID() };
      await db.query(
        `INSERT INTO rail_balance_queries (id, rail, method, conversation_id, originator_conversation_id)
         VALUES (:id, 'daraja', 'mobile_money', 'AG_sent', 'sent-1')`,
        { replacements: pending },
      );
      const answer = (ids: { ConversationID: string; OriginatorConversationID: string }) => ({
        Result: {
          ResultType: 0,
          ResultCode: 0,
          ResultDesc: 'ok',
          ...ids,
          ResultParameters: { ResultParameter: [{ Key: 'AccountBalance', Value: 'Utility Account|KES|9999999.00|9999999.00|0.00|0.00' }] },
        },
      });
      const token = balanceQueryToken(fakes.env.DARAJA_CALLBACK_SECRET, pending.id);
      for (const [path, body] of [
        // the query's token, another query's ids
        [
          `/api/v1/callbacks/mpesa/balance/${pending.id}?token=${token}`,
          answer({ ConversationID: 'AG_other', OriginatorConversationID: 'other-1' }),
        ],
        // the query's ids, without its token or with a forged one
        [`/api/v1/callbacks/mpesa/balance/${pending.id}`, answer({ ConversationID: 'AG_sent', OriginatorConversationID: 'sent-1' })],
        [
          `/api/v1/callbacks/mpesa/balance/${pending.id}?token=forged`,
          answer({ ConversationID: 'AG_sent', OriginatorConversationID: 'sent-1' }),
        ],
      ] as const) {
        const res = await call().post(path).send(body);
        expect(res.status, path).to.equal(200);
        expect(res.body, path).to.deep.equal({ ResultCode: 1, ResultDesc: 'Ignored' });
      }
      expect(await q(`SELECT status FROM rail_balance_queries WHERE id = :id`, pending)).to.deep.equal([{ status: 'pending' }]);
      expect((await mpesaLine(officer))?.reported).to.equal(answered.reported);
    });
  });
});
