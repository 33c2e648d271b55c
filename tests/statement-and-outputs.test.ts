import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import { isBankCharge, isOperatorTopUp, returnedPayoutReferences } from '../domain/bank-statement';
import { matchLines, type LedgerRailLine, type RailLine } from '../domain/reconciliation-lines';
import { readAccountBalance } from '../connectors/daraja';
import { depositOutput } from '../workers/crypto-deposits';
import { ensureDatabase, migrateUp } from '../models/migrate';
import { reloadConfig } from '../platform/config';
import { createSequelize } from '../platform/database';
import { startRailFakes, type RailFakes } from './fakes/rails';
import { initiate, kesAvailable as kes, newUser, waitForOrder, walletOf, type TestUser } from './support/api';
import { rows } from './support/db';
import { dropDatabase } from './support/local-tools';
import { startJobsProcess, until, type JobsProcess } from './support/processes';
import { jobsAgainstRailFakes } from './support/rail-jobs';
import { RUN_ID } from './support/env';

/**
 * Money in that is not a customer's deposit, and deposits told apart by output
 * (docs/wallets.md#money-in-is-proven): a bank credit returning one of our payouts is matched to it, the
 * operator's top-up goes to `operator:float`, and each output of a batched crypto transaction counts once.
 */

describe('unit: what a statement credit is, and which output a crypto deposit is', () => {
  it('then the PGFLOAT marker, however written, makes a top-up, and a return names its payout', () => {
    expect(isOperatorTopUp({ description: 'pg-float top up', reference: null })).to.equal(true);
    expect(isOperatorTopUp({ description: 'school fees', reference: 'PGFLOAT01' })).to.equal(true);
    expect(isOperatorTopUp({ description: 'PG7K2M9QXR4T', reference: 'FT1' })).to.equal(false);
    expect(returnedPayoutReferences({ description: 'RETURN 123456789012 ACCOUNT CLOSED', reference: 'FTA1' })).to.deep.equal([
      '123456789012',
      'FTA1',
    ]);
    expect(returnedPayoutReferences({ description: 'rvsl: SBX-ABC123', reference: null })).to.deep.equal(['SBX-ABC123']);
  });

  it('then a debit the bank narrates as its charge is a charge, and a payout or a credit is not', () => {
    expect(isBankCharge({ type: 'Debit', description: 'TRANSACTION CHARGES 123456789012' })).to.equal(true);
    expect(isBankCharge({ type: 'Debit', description: 'Excise duty on commission' })).to.equal(true);
    expect(isBankCharge({ type: 'Debit', description: 'PESALINK TRANSFER 123456789012' })).to.equal(false);
    expect(isBankCharge({ type: 'Credit', description: 'refund of charges' })).to.equal(false);
  });

  it("then M-Pesa's AccountBalance is the sum of the shortcode's accounts, and a failed query says nothing", () => {
    const answered = readAccountBalance({
      ResultCode: 0,
      ResultParameters: {
        ResultParameter: [
          {
            Key: 'AccountBalance',
            Value:
              'Working Account|KES|0.00|0.00|0.00|0.00&Utility Account|KES|4810.50|4810.50|0.00|0.00&Charges Paid Account|KES|-220.00|-220.00|0.00|0.00',
          },
        ],
      },
    });
    expect(answered).to.deep.include({ answered: true, totalMinor: 459050n, currency: 'KES' });
    expect(readAccountBalance({ ResultCode: 2001, ResultDesc: 'The initiator information is invalid.' })).to.deep.equal({
      answered: false,
      reason: 'the query failed: 2001 The initiator information is invalid.',
    });
    expect(readAccountBalance({ ResultCode: 0 })).to.include({ answered: false });
    const garbled = readAccountBalance({
      ResultCode: 0,
      ResultParameters: { ResultParameter: { Key: 'AccountBalance', Value: 'Utility|KES|1e9' } },
    });
    expect(garbled).to.include({ answered: false });
  });

  it("then a batched transaction's outputs pair off by amount, and an output the ledger doubled does not", () => {
    const at = new Date('2026-11-26T10:00:00Z');
    const period = { from: new Date('2026-11-26T00:00:00Z'), to: new Date('2026-11-27T00:00:00Z') };
    const rail = (amountMinor: bigint): RailLine => ({ reference: 'tx1', direction: 'in', currency: 'USDT', amountMinor, at });
    const ledger = (amountMinor: bigint): LedgerRailLine => ({ ...rail(amountMinor), depositId: null, orderId: null });
    expect(matchLines(period, [rail(5n), rail(7n)], [ledger(7n), ledger(5n)])).to.deep.equal([]);
    expect(matchLines(period, [rail(5n), rail(7n)], [ledger(5n), ledger(8n)]).map((b) => b.kind)).to.deep.equal(['amount_mismatch']);
    expect(matchLines(period, [rail(5n)], [ledger(5n), ledger(5n)]).map((b) => b.kind)).to.deep.equal(['duplicate']);
  });

  it('then two outputs of one transaction are two outputs, and the same output is the same', () => {
    const a = depositOutput({ id: '1', address: 'T1', tag: 'PGA' });
    expect(a).to.equal(depositOutput({ id: 'other', address: 'T1', tag: 'PGA' }));
    expect(a).not.to.equal(depositOutput({ id: '2', address: 'T1', tag: 'PGB' }));
    expect(depositOutput({ id: '9', address: null, tag: null })).to.equal('id:9');
  });
});

describe('a payout that comes back to the primary bank', function () {
  this.timeout(60_000);
  const rail = jobsAgainstRailFakes('payout-returns', 'MATCH_BANK_DEPOSITS_EVERY_MS');

  it('then it is matched to the payout, which is reversed once, and no deposit is made for anyone to assign', async () => {
    const payer = await newUser();
    const before = await kes(payer);
    const res = await initiate(payer, {
      amount: '700.00',
      currency: 'KES',
      method: 'bank_transfer',
      destination: { bank_code: '01', account_number: '1234567801', account_name: 'Jane Doe' },
    });
    expect(res.status, res.text).to.equal(202);
    const order = await waitForOrder(payer, (res.body as { order_id: string }).order_id);
    expect(order.status).to.equal('completed');
    const spent = (await kes(payer)) ?? '0';
    expect(spent).not.to.equal(before);

    const bankReference = rail().fakes.jenga.returnPayout({ payoutReference: order.rail_reference ?? '', amount: '700.00' });
    const claim = await until('the return matched', async () =>
      (
        await rows<{ status: string; order_id: string }>(`SELECT status, order_id FROM deposit_claims WHERE provider_reference = :ref`, {
          ref: bankReference,
        })
      ).at(0),
    );
    expect(claim).to.deep.equal({ status: 'returned', order_id: order.order_id });
    expect((await waitForOrder(payer, order.order_id)).status).to.equal('reversed');
    expect(await kes(payer)).to.equal(before);
    expect(await rows('SELECT id FROM deposits WHERE provider_reference = :ref', { ref: bankReference })).to.deep.equal([]);
    const reversals = await rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_transactions WHERE order_id = :id AND kind = 'reverse'`,
      { id: order.order_id },
    );
    expect(reversals).to.deep.equal([{ n: 1 }]);
  });
});

describe('batched crypto deposits', function () {
  this.timeout(60_000);
  const rail = jobsAgainstRailFakes('batched-deposits', 'MATCH_CRYPTO_DEPOSITS_EVERY_MS');

  it('then each output of one transaction is credited once, to its own memo’s wallet', async () => {
    const first = await newUser({ funded: false });
    const second = await newUser({ funded: false });
    const usdt = async (u: TestUser) => (await walletOf(u)).data.find((d) => d.currency === 'USDT')?.available;
    const txId = `0x${randomUUID().replace(/-/g, '')}${randomUUID().replace(/-/g, '')}`;
    rail().fakes.binance.deposit({ coin: 'USDT', amount: '25.5', tag: (await walletOf(first)).deposit_reference, txId });
    rail().fakes.binance.deposit({ coin: 'USDT', amount: '4', tag: (await walletOf(second)).deposit_reference, txId });
    await until('both outputs credited', async () =>
      (await usdt(first)) === '25.500000' && (await usdt(second)) === '4.000000' ? true : undefined,
    );
    const deposits = await rows<{ n: number }>(`SELECT count(*)::int AS n FROM deposits WHERE provider_reference = :txId`, { txId });
    expect(deposits).to.deep.equal([{ n: 2 }]);
  });
});

describe("the operator's top-up of the primary bank account", function () {
  this.timeout(90_000);
  // A database of its own: the operator's float is not customers' money, so the suite's float check (rails
  // against liabilities) is kept for the suite's own ledger.
  const url = (() => {
    const u = new URL(reloadConfig().databaseUrl);
    u.pathname = `${u.pathname}_float`;
    return u.toString();
  })();
  let fakes: RailFakes;
  let jobs: JobsProcess;
  let db: Sequelize;

  before(async () => {
    await dropDatabase(url);
    await ensureDatabase(url);
    await migrateUp(url);
    db = createSequelize(url, 2);
    fakes = await startRailFakes();
    jobs = startJobsProcess({
      ...fakes.env,
      DATABASE_URL: url,
      QUEUE_PREFIX: `paygate-float-${RUN_ID}`,
      MATCH_BANK_DEPOSITS_EVERY_MS: '200',
      MATCH_CRYPTO_DEPOSITS_EVERY_MS: '3600000',
      RECONCILE_INTERVAL_MS: '3600000',
      REFRESH_EXCHANGES_EVERY_MS: '3600000',
      REFRESH_BANKS_EVERY_MS: '3600000',
    });
  });

  after(async () => {
    expect(await jobs.stop(), 'the jobs process exits cleanly').to.equal(0);
    await fakes.close();
    await db.close();
    await dropDatabase(url);
  });

  it('then it is posted to operator:float once, owned by nobody, and nobody can be assigned it', async () => {
    const reference = fakes.jenga.topUp('250000.00');
    const q = <T extends object>(sql: string) => db.query<T>(sql, { replacements: { reference }, type: QueryTypes.SELECT });
    const deposit = await until(
      'the top-up recorded',
      async () =>
        (
          await q<{ status: string; user_id: string | null }>('SELECT status, user_id FROM deposits WHERE provider_reference = :reference')
        )[0],
    );
    expect(deposit).to.deep.equal({ status: 'float', user_id: null });
    await new Promise((r) => setTimeout(r, 600));
    const float = await q<{ balance: string }>(`SELECT balance_minor::text AS balance FROM accounts WHERE account = 'operator:float'`);
    expect(float).to.deep.equal([{ balance: '25000000' }]);
    const recorded = await q<{ status: string }>(`SELECT status FROM deposits WHERE provider_reference = :reference`);
    expect(recorded, 'one record, never unmatched').to.deep.equal([{ status: 'float' }]);
  });
});
