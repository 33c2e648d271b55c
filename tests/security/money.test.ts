import { expect } from 'chai';
import { Client } from 'pg';
import { QueryTypes } from 'sequelize';
import { config } from '../../platform/config';
import { database } from '../../platform/database';
import { paymentLines } from '../../domain/ledger';
import { ledgerOverdrafts, overpaidOrders, postLines } from '../../repositories/ledger';
import { initiate, mpesaPayment, newUser, waitForOrder, type OrderBody } from '../support/api';
import { rows } from '../support/db';

/**
 * Money invariants the database itself keeps: ledger rows cannot be changed or removed by any statement,
 * an unbalanced posting cannot commit, and no column anywhere holds money as a float. (The balances
 * themselves are checked over the whole suite's ledger by the root hook in tests/setup.ts.)
 */

const LEDGER_TABLES = ['ledger_transactions', 'ledger_entries'] as const;

/** Run `statement` on its own connection inside a transaction that is always rolled back; its error, if any. */
async function attempt(statement: string): Promise<string | undefined> {
  const client = new Client({ connectionString: config().databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(statement);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end();
  }
}

async function settledPayment(amount = '1500.00', status = 'completed'): Promise<OrderBody> {
  const user = await newUser();
  const res = await initiate(user, mpesaPayment({ amount }));
  expect(res.status, res.text).to.equal(202);
  const order = await waitForOrder(user, (res.body as { order_id: string }).order_id);
  expect(order.status).to.equal(status);
  return order;
}

describe('money invariants kept by the database', () => {
  let order: OrderBody;

  before(async () => {
    order = await settledPayment();
  });

  describe('when anything tries to change or remove ledger rows', () => {
    it('then UPDATE of every column, even to the same value, is refused on both ledger tables', async () => {
      const columns = await rows<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name IN ('ledger_transactions', 'ledger_entries') ORDER BY table_name, ordinal_position`,
      );
      expect(columns.length).to.be.greaterThan(8);
      for (const { table_name: table, column_name: column } of columns) {
        const where =
          table === 'ledger_transactions'
            ? `order_id = '${order.order_id}'`
            : `transaction_id IN (SELECT id FROM ledger_transactions WHERE order_id = '${order.order_id}')`;
        const error = await attempt(`UPDATE ${table} SET ${column} = ${column} WHERE ${where}`);
        expect(error, `UPDATE ${table}.${column}`).to.match(/append-only/);
      }
    });

    it('then DELETE of a row and of every row is refused on both ledger tables', async () => {
      for (const table of LEDGER_TABLES) {
        const one =
          table === 'ledger_transactions'
            ? `order_id = '${order.order_id}'`
            : `transaction_id IN (SELECT id FROM ledger_transactions WHERE order_id = '${order.order_id}')`;
        expect(await attempt(`DELETE FROM ${table} WHERE ${one}`), `DELETE one from ${table}`).to.match(/append-only/);
        expect(await attempt(`DELETE FROM ${table}`), `DELETE all from ${table}`).to.match(/append-only|foreign key/);
      }
    });

    it('then TRUNCATE, which row triggers do not see, is refused too', async () => {
      expect(await attempt('TRUNCATE ledger_entries'), 'TRUNCATE ledger_entries').to.match(/append-only/);
      expect(await attempt('TRUNCATE ledger_entries, ledger_transactions'), 'TRUNCATE both').to.match(/append-only/);
      expect(await attempt('TRUNCATE ledger_transactions CASCADE'), 'TRUNCATE CASCADE').to.match(/append-only/);
      expect(await attempt('TRUNCATE kyc_audit'), 'TRUNCATE kyc_audit').to.match(/append-only/);
    });

    it('then the rows are all still there (the attempts above changed nothing)', async () => {
      const entries = await rows<{ n: number }>(
        `SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.order_id = :id`,
        { id: order.order_id },
      );
      expect(entries[0].n).to.equal(4);
    });
  });

  describe('when a posting does not balance', () => {
    it('then it cannot commit', async () => {
      const failed = await settledPayment('700.13', 'failed');
      let error: unknown;
      await database()
        .transaction(async (tx) => {
          await postLines(tx, {
            orderId: failed.order_id,
            kind: 'settle',
            currency: 'KES',
            lines: [
              { account: `hold:${failed.order_id}`, direction: 'debit', amountMinor: '70013' },
              { account: 'rail:mobile_money', direction: 'credit', amountMinor: '70012' },
            ],
          });
        })
        .catch((err: unknown) => (error = err));
      expect(String(error)).to.match(/does not balance/);
      expect(
        await rows(`SELECT 1 FROM ledger_transactions WHERE order_id = :id AND kind = 'settle'`, { id: failed.order_id }),
      ).to.have.length(0);
    });
  });

  describe('when the balance checks of the root hook are given a broken ledger', () => {
    it('then they name the overdrawn account and the over-refunded payer (they can fail)', async () => {
      const failed = await settledPayment('700.13', 'failed');
      const rollback = new Error('roll back');
      await database()
        .transaction(async (tx) => {
          expect(await ledgerOverdrafts(tx)).to.deep.equal([]);
          expect(await overpaidOrders(tx)).to.deep.equal([]);
          // A second release of a completed payment's hold, and a refund of a payment that already failed.
          const accounts = (o: OrderBody, userId: string) => ({
            orderId: o.order_id,
            userId,
            method: 'mobile_money',
            currency: 'KES',
            amountMinor: '',
          });
          const [completedOwner] = await database().query<{ user_id: string }>('SELECT user_id FROM orders WHERE id = :id', {
            replacements: { id: order.order_id },
            type: QueryTypes.SELECT,
            transaction: tx,
          });
          const [failedOwner] = await database().query<{ user_id: string }>('SELECT user_id FROM orders WHERE id = :id', {
            replacements: { id: failed.order_id },
            type: QueryTypes.SELECT,
            transaction: tx,
          });
          await postLines(tx, {
            orderId: order.order_id,
            kind: 'release',
            currency: 'KES',
            lines: paymentLines('release', { ...accounts(order, completedOwner.user_id), amountMinor: '150000' }),
          });
          await postLines(tx, {
            orderId: failed.order_id,
            kind: 'reverse',
            currency: 'KES',
            lines: paymentLines('reverse', { ...accounts(failed, failedOwner.user_id), amountMinor: '70013' }),
          });
          const overdrafts = await ledgerOverdrafts(tx);
          expect(overdrafts).to.deep.include({ account: `hold:${order.order_id}`, currency: 'KES', lowest: '-150000' });
          const overpaid = await overpaidOrders(tx);
          expect(overpaid).to.deep.include({
            order_id: failed.order_id,
            payer: `user:${failedOwner.user_id}`,
            lowest: '-70013',
            highest: '70013',
            held: '70013',
          });
          throw rollback;
        })
        .catch((err: unknown) => {
          if (err !== rollback) throw err;
        });
      expect(
        await rows(`SELECT 1 FROM ledger_transactions WHERE order_id = :id AND kind = 'release'`, { id: order.order_id }),
      ).to.have.length(0);
    });
  });

  describe('when the schema is inspected', () => {
    it('then no column of any table is a floating-point type', async () => {
      const floats = await rows<{ column: string; data_type: string }>(
        `SELECT table_name || '.' || column_name AS column, data_type FROM information_schema.columns
          WHERE table_schema = 'public' AND data_type IN ('real', 'double precision')`,
      );
      expect(floats).to.deep.equal([]);
    });

    it('then every money column (amounts, prices, balances, fees, minor units) is an exact numeric or integer type', async () => {
      const money = await rows<{ column: string; data_type: string; numeric_scale: number | null }>(
        `SELECT table_name || '.' || column_name AS column, data_type, numeric_scale FROM information_schema.columns
          WHERE table_schema = 'public' AND column_name ~ '(amount|price|balance|fee|minor|total|limit)'
            AND data_type NOT IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY', 'boolean', 'timestamp with time zone', 'uuid')`,
      );
      expect(money.map((m) => m.column)).to.include.members([
        'ledger_entries.amount_minor',
        'orders.amount_minor',
        'p2p_ads.available_amount_minor',
      ]);
      for (const column of money) {
        expect(['numeric', 'bigint', 'integer'], `${column.column} is ${column.data_type}`).to.include(column.data_type);
        if (column.column.endsWith('_minor')) expect(column.numeric_scale ?? 0, `${column.column} holds whole minor units`).to.equal(0);
      }
    });

    it('then no Sequelize model declares a floating-point attribute', () => {
      for (const model of Object.values(database().models)) {
        for (const [name, attribute] of Object.entries(model.getAttributes())) {
          const type = (attribute as { type: { key?: string } }).type.key ?? '';
          expect(['FLOAT', 'DOUBLE', 'DOUBLE PRECISION', 'REAL'], `${model.name}.${name}`).not.to.include(type);
        }
      }
    });
  });
});
