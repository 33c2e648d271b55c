import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { QueryTypes, type Transaction } from 'sequelize';
import { config } from '../platform/config';
import { database } from '../platform/database';
import { transfer } from '../domain/ledger';
import { InsufficientFunds, balanceOf, postLines } from '../repositories/ledger';
import { completedPayment, newUser } from './support/api';
import { rows } from './support/db';

/**
 * Account balances kept by the database (docs/wallets.md#balances-kept-by-the-database): each entry moves its account's stored balance in the
 * same transaction and records the balance it left; wallet, hold, escrow and suspense accounts cannot be
 * overdrawn by any posting.
 */

const rollback = new Error('roll back');

/** Run `work` in a transaction that is always rolled back, so the suite's ledger keeps none of it. */
async function rolledBack(work: (tx: Transaction) => Promise<void>): Promise<void> {
  await database()
    .transaction(async (tx) => {
      await work(tx);
      throw rollback;
    })
    .catch((err: unknown) => {
      if (err !== rollback) throw err;
    });
}

/** Post `amount` from one account to another for the order inside `tx`, as a posting of `kind`. */
const move = (tx: Transaction, orderId: string, kind: string, currency: string, from: string, to: string, amount: string) =>
  postLines(tx, { orderId, kind, currency, lines: transfer(from, to, amount) });

interface EntryRow {
  account: string;
  direction: string;
  amount: string;
  balance_after: string;
}

const entriesOf = (account: string, tx?: Transaction): Promise<EntryRow[]> =>
  database().query<EntryRow>(
    `SELECT account, direction, amount_minor::text AS amount, balance_after_minor::text AS balance_after
       FROM ledger_entries WHERE account = :account ORDER BY id`,
    { replacements: { account }, type: QueryTypes.SELECT, transaction: tx },
  );

describe('account balances kept by the database', () => {
  describe('when a payment is held and settled', () => {
    it('then the hold account went up and back to zero, and each entry records the balance it left', async () => {
      const order = await completedPayment(await newUser(), { amount: '1500.00' });
      const hold = `hold:${order.order_id}`;
      expect(await balanceOf(hold, 'KES')).to.equal('0');
      const entries = await entriesOf(hold);
      expect(entries.map((e) => [e.direction, e.amount, e.balance_after])).to.deep.equal([
        ['credit', '150000', '150000'],
        ['debit', '150000', '0'],
      ]);
    });
  });

  describe('when a wallet is credited and then debited', () => {
    it('then its balance and every balance_after follow, and a debit beyond the balance is refused whole', async () => {
      const order = await completedPayment(await newUser(), { amount: '10.00' });
      const wallet = `wallet:${randomUUID()}:KES`;
      let refused: unknown;
      await rolledBack(async (tx) => {
        await move(tx, order.order_id, 'escrow_lock', 'KES', 'rail:mobile_money', wallet, '1000');
        await move(tx, order.order_id, 'escrow_release', 'KES', wallet, 'rail:mobile_money', '400');
        expect(await balanceOf(wallet, 'KES', tx)).to.equal('600');
        expect((await entriesOf(wallet, tx)).map((e) => e.balance_after)).to.deep.equal(['1000', '600']);
        await move(tx, order.order_id, 'escrow_return', 'KES', wallet, 'rail:mobile_money', '601').catch((err: unknown) => (refused = err));
      });
      expect(refused, 'the overdraft').to.be.instanceOf(InsufficientFunds);
      expect((refused as InsufficientFunds).account).to.equal(wallet);
      expect(await rows(`SELECT 1 FROM accounts WHERE account = :wallet`, { wallet })).to.have.length(0);
    });
  });

  describe('when a suspense or escrow account would go below zero', () => {
    it('then the database refuses it too, while a rail account may go negative (money held at the rail)', async () => {
      const order = await completedPayment(await newUser(), { amount: '10.00' });
      for (const account of [`suspense:${randomUUID()}`, `escrow:${randomUUID()}`]) {
        let refused: unknown;
        await rolledBack(async (tx) => {
          await postLines(tx, {
            orderId: order.order_id,
            kind: 'escrow_lock',
            currency: 'USDT',
            lines: [
              { account, direction: 'debit', amountMinor: '1' },
              { account: 'rail:crypto', direction: 'credit', amountMinor: '1' },
            ],
          }).catch((err: unknown) => (refused = err));
        });
        expect((refused as InsufficientFunds | undefined)?.account, account).to.equal(account);
      }
      const rail = `rail:probe-${randomUUID()}`;
      await rolledBack(async (tx) => {
        await move(tx, order.order_id, 'escrow_lock', 'USDT', rail, `wallet:${randomUUID()}:USDT`, '5');
        expect(await balanceOf(rail, 'USDT', tx)).to.equal('-5');
      });
    });
  });

  describe('when anything but a ledger entry writes a balance', () => {
    it('then inserting, updating or deleting an account row directly is refused', async () => {
      const order = await completedPayment(await newUser(), { amount: '10.00' });
      const hold = `hold:${order.order_id}`;
      const client = new Client({ connectionString: config().databaseUrl });
      await client.connect();
      try {
        for (const statement of [
          `INSERT INTO accounts (account, currency, balance_minor) VALUES ('wallet:${randomUUID()}:KES', 'KES', 100)`,
          `UPDATE accounts SET balance_minor = balance_minor + 1 WHERE account = '${hold}'`,
          `DELETE FROM accounts WHERE account = '${hold}'`,
        ]) {
          await client.query('BEGIN');
          const error = await client.query(statement).then(
            () => undefined,
            (err: Error) => err.message,
          );
          await client.query('ROLLBACK');
          expect(error, statement).to.match(/move only through ledger entries/);
        }
      } finally {
        await client.end();
      }
    });
  });
});
