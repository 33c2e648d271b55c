import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { database } from '../platform/database';
import { ledgerImbalanceByCurrency } from '../repositories/ledger';
import { initiate, mpesaPayment, newUser, waitForOrder } from './support/api';
import { ledgerKindsOf, rows } from './support/db';

describe('the double-entry ledger', () => {
  describe('when a payment completes', () => {
    it('then it holds, then settles, once each, and every transaction balances', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment({ amount: '2500.00' }));
      const order = await waitForOrder(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'settle']);
      const entries = await rows<{ account: string; direction: string; amount_minor: string; currency: string }>(
        `SELECT e.account, e.direction, e.amount_minor, e.currency FROM ledger_entries e
           JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.order_id = :id
          ORDER BY (SELECT min(f.id) FROM ledger_entries f WHERE f.transaction_id = t.id), e.direction DESC`,
        { id: order.order_id },
      );
      expect(entries).to.deep.equal([
        { account: `wallet:${user.id}:KES`, direction: 'debit', amount_minor: '250000', currency: 'KES' },
        { account: `hold:${order.order_id}`, direction: 'credit', amount_minor: '250000', currency: 'KES' },
        { account: `hold:${order.order_id}`, direction: 'debit', amount_minor: '250000', currency: 'KES' },
        { account: 'rail:mobile_money', direction: 'credit', amount_minor: '250000', currency: 'KES' },
      ]);
    });
  });

  describe('when a payment fails after the hold', () => {
    it('then the hold is released and nothing is settled', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment({ amount: '700.13' }));
      const order = await waitForOrder(user, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('failed');
      expect(await ledgerKindsOf(order.order_id)).to.deep.equal(['hold', 'release']);
      const [hold] = await rows<{ balance: string }>(
        `SELECT sum(CASE direction WHEN 'credit' THEN amount_minor ELSE -amount_minor END)::text AS balance
           FROM ledger_entries WHERE account = :account`,
        { account: `hold:${order.order_id}` },
      );
      expect(hold.balance).to.equal('0');
    });
  });

  describe('when someone tries to rewrite history', () => {
    it('then UPDATE and DELETE on ledger rows are refused by the database', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment());
      await waitForOrder(user, (res.body as { order_id: string }).order_id);
      let updateError: unknown;
      await database()
        .query(`UPDATE ledger_entries SET amount_minor = 1 WHERE account = 'wallet:${user.id}:KES'`)
        .catch((err: unknown) => (updateError = err));
      expect(String(updateError)).to.match(/append-only/);
      let deleteError: unknown;
      await database()
        .query(`DELETE FROM ledger_transactions WHERE order_id = '${(res.body as { order_id: string }).order_id}'`)
        .catch((err: unknown) => (deleteError = err));
      expect(String(deleteError)).to.match(/append-only/);
    });

    it('then an unbalanced transaction cannot be committed', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment());
      const orderId = (res.body as { order_id: string }).order_id;
      await waitForOrder(user, orderId);
      const txId = randomUUID();
      let error: unknown;
      await database()
        .transaction(async (transaction) => {
          await database().query(
            `INSERT INTO ledger_transactions (id, order_id, kind, currency) VALUES ('${txId}', '${orderId}', 'reverse', 'KES')`,
            { transaction },
          );
          await database().query(
            `INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor)
             VALUES ('${txId}', 'rail:mobile_money', 'KES', 'debit', 100)`,
            { transaction },
          );
        })
        .catch((err: unknown) => (error = err));
      expect(String(error)).to.match(/does not balance/);
      expect(await rows('SELECT 1 FROM ledger_transactions WHERE id = :txId', { txId })).to.have.length(0);
    });
  });

  describe('at any moment', () => {
    it('then debits equal credits in every currency', async () => {
      const imbalance = await ledgerImbalanceByCurrency();
      for (const value of Object.values(imbalance)) expect(value).to.equal('0');
    });
  });
});
