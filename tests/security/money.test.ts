import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { QueryTypes } from 'sequelize';
import { config } from '../../platform/config';
import { database } from '../../platform/database';
import { paymentLines } from '../../domain/ledger';
import { InsufficientFunds, balanceDrift, overpaidOrders, postLines, runningBalanceDrift } from '../../repositories/ledger';
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
      expect(await attempt('TRUNCATE accounts'), 'TRUNCATE accounts').to.match(/append-only/);
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
              // Between accounts that may go negative, so that only the balance rule can refuse it.
              { account: 'rail:mobile_money', direction: 'debit', amountMinor: '70013' },
              { account: `user:${failed.order_id}`, direction: 'credit', amountMinor: '70012' },
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

  describe('when a posting would take a hold below zero', () => {
    it('then the database refuses it, naming the account, and nothing of it is kept', async () => {
      const [owner] = await rows<{ user_id: string }>('SELECT user_id FROM orders WHERE id = :id', { id: order.order_id });
      let error: unknown;
      // A second release of a completed payment's hold: the hold is already empty.
      await database()
        .transaction(async (tx) => {
          await postLines(tx, {
            orderId: order.order_id,
            kind: 'release',
            currency: 'KES',
            lines: paymentLines('release', {
              orderId: order.order_id,
              userId: owner.user_id,
              method: 'mobile_money',
              currency: 'KES',
              amountMinor: '150000',
            }),
          });
        })
        .catch((err: unknown) => (error = err));
      expect(error).to.be.instanceOf(InsufficientFunds);
      expect((error as InsufficientFunds).account).to.equal(`hold:${order.order_id}`);
      expect(
        await rows(`SELECT 1 FROM ledger_transactions WHERE order_id = :id AND kind = 'release'`, { id: order.order_id }),
      ).to.have.length(0);
      expect(await rows(`SELECT balance_minor::text AS b FROM accounts WHERE account = :a`, { a: `hold:${order.order_id}` })).to.deep.equal(
        [{ b: '0' }],
      );
    });
  });

  describe('when the balance checks of the root hook are given a broken ledger', () => {
    it('then they name the over-refunded payer, the drifted account and the wrong running balance (they can fail)', async () => {
      const failed = await settledPayment('700.13', 'failed');
      const rollback = new Error('roll back');
      await database()
        .transaction(async (tx) => {
          expect(await overpaidOrders(tx)).to.deep.equal([]);
          expect(await balanceDrift(tx)).to.deep.equal([]);
          const [failedOwner] = await database().query<{ user_id: string }>('SELECT user_id FROM orders WHERE id = :id', {
            replacements: { id: failed.order_id },
            type: QueryTypes.SELECT,
            transaction: tx,
          });
          // A refund of a payment that already failed.
          await postLines(tx, {
            orderId: failed.order_id,
            kind: 'reverse',
            currency: 'KES',
            lines: paymentLines('reverse', {
              orderId: failed.order_id,
              userId: failedOwner.user_id,
              method: 'mobile_money',
              currency: 'KES',
              amountMinor: '70013',
            }),
          });
          expect(await overpaidOrders(tx)).to.deep.include({
            order_id: failed.order_id,
            payer: `wallet:${failedOwner.user_id}:KES`,
            lowest: '-70013',
            highest: '70013',
            held: '70013',
          });
          // Entries written with the balance trigger switched off (replica mode), as a restore that
          // bypassed the ledger would: the account's stored balance and the entry's balance_after are wrong.
          await database().query(`SET LOCAL session_replication_role = replica`, { transaction: tx });
          await database().query(
            `INSERT INTO ledger_transactions (id, order_id, kind, currency) VALUES (:id, :orderId, 'escrow_lock', 'KES');
             INSERT INTO ledger_entries (id, transaction_id, account, currency, direction, amount_minor, balance_after_minor)
             VALUES (nextval('ledger_entries_id_seq'), :id, :account, 'KES', 'credit', 5, 999),
                    (nextval('ledger_entries_id_seq'), :id, 'rail:mobile_money', 'KES', 'debit', 5, 0)`,
            { replacements: { id: randomUUID(), orderId: failed.order_id, account: `hold:${failed.order_id}` }, transaction: tx },
          );
          expect(await balanceDrift(tx)).to.deep.include({
            account: `hold:${failed.order_id}`,
            currency: 'KES',
            stored: '0',
            entries: '5',
          });
          const running = await runningBalanceDrift(tx);
          expect(running.map((r) => [r.account, r.stored, r.running])).to.deep.include([`hold:${failed.order_id}`, '999', '5']);
          throw rollback;
        })
        .catch((err: unknown) => {
          if (err !== rollback) throw err;
        });
      expect(
        await rows(`SELECT 1 FROM ledger_transactions WHERE order_id = :id AND kind = 'reverse'`, { id: failed.order_id }),
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
