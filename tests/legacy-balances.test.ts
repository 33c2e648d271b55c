import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createMigrator } from '../models/migrator';
import { QueryTypes, type Sequelize } from 'sequelize';
import { ownDatabase } from './support/own-database';

/**
 * Postings made before wallets existed (docs/wallets.md#balances-from-before-wallets): `user:<id>` accounts are carried into wallets by a
 * migration, on a database of their own that is migrated to just before wallets, given such postings the way
 * the old code made them, then migrated the rest of the way.
 */

const BEFORE_WALLETS = '202611230120-webhook-delivery-leases';

describe('carrying balances from before wallets', () => {
  const own = ownDatabase('legacy');
  let db: Sequelize;
  const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
    db.query<T>(sql, { replacements, type: QueryTypes.SELECT });
  const payer = randomUUID();
  const buyer = randomUUID();

  /** One balanced legacy posting for an order, as the code before wallets made it. */
  async function post(orderId: string, kind: string, currency: string, from: string, to: string, amount: string) {
    const t = randomUUID();
    await db.query(
      `INSERT INTO ledger_transactions (id, order_id, kind, currency) VALUES (:t, :orderId, :kind, :currency);
       INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor)
       VALUES (:t, :from, :currency, 'debit', :amount), (:t, :to, :currency, 'credit', :amount)`,
      { replacements: { t, orderId, kind, currency, from, to, amount } },
    );
  }

  async function order(userId: string, currency: string, method: string, amount: string): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination, status, workflow_id)
       VALUES (:id, :userId, :id, :amount, 0, :currency, :method, '{}', 'completed', 'payment-' || :id)`,
      { replacements: { id, userId, amount, currency, method } },
    );
    return id;
  }

  before(async function () {
    this.timeout(60_000);
    db = await own.open(BEFORE_WALLETS);
    for (const [id, email] of [
      [payer, 'payer@legacy.test'],
      [buyer, 'buyer@legacy.test'],
    ]) {
      await db.query(`INSERT INTO users (id, email, password_hash, full_name) VALUES (:id, :email, 'x', 'Legacy User')`, {
        replacements: { id, email },
      });
    }
    // A KES 1,500 payout held from the payer's `user:` account with nothing behind it, and settled.
    const payout = await order(payer, 'KES', 'mobile_money', '150000');
    await post(payout, 'hold', 'KES', `user:${payer}`, `hold:${payout}`, '150000');
    await post(payout, 'settle', 'KES', `hold:${payout}`, 'rail:mobile_money', '150000');
    // A P2P trade: the seller's 5 USDT escrowed from their `user:` account and released to the buyer's.
    const trade = await order(buyer, 'USDT', 'p2p', '5000000');
    await post(trade, 'escrow_lock', 'USDT', `user:${payer}`, `escrow:${trade}`, '5000000');
    await post(trade, 'escrow_release', 'USDT', `escrow:${trade}`, `user:${buyer}`, '5000000');
    await createMigrator(db).up();
  });

  after(async () => {
    await own.close(db);
  });

  it('when the migration ran, then money a user was owed is in their wallet, where they can read and spend it', async () => {
    const [wallet] = await q<{ balance: string }>(
      `SELECT balance_minor::text AS balance FROM accounts WHERE account = :a AND currency = 'USDT'`,
      {
        a: `wallet:${buyer}:USDT`,
      },
    );
    expect(wallet?.balance).to.equal('5000000');
  });

  it("when the migration ran, then what the operator's float paid for is on operator:float, and no user: account holds anything", async () => {
    const balances = await q<{ account: string; currency: string; balance: string }>(
      `SELECT account, currency, balance_minor::text AS balance FROM accounts
        WHERE (account LIKE 'user:%' OR account = 'operator:float') ORDER BY account, currency`,
    );
    expect(balances.filter((b) => b.account.startsWith('user:')).every((b) => b.balance === '0')).to.equal(true);
    expect(balances.filter((b) => b.account === 'operator:float').map((b) => [b.currency, b.balance])).to.deep.equal([
      ['KES', '-150000'],
      ['USDT', '-5000000'],
    ]);
  });

  it('when the migration ran, then the ledger still balances, every stored balance is the sum of its entries, and nothing old was rewritten', async () => {
    const imbalance = await q<{ currency: string; net: string }>(
      `SELECT currency, sum(CASE direction WHEN 'debit' THEN amount_minor ELSE -amount_minor END)::text AS net
         FROM ledger_entries GROUP BY currency HAVING sum(CASE direction WHEN 'debit' THEN amount_minor ELSE -amount_minor END) <> 0`,
    );
    expect(imbalance).to.deep.equal([]);
    const drift = await q(
      `SELECT a.account FROM accounts a
         LEFT JOIN (SELECT account, currency, sum(CASE direction WHEN 'credit' THEN amount_minor ELSE -amount_minor END) AS total
                      FROM ledger_entries GROUP BY account, currency) s ON s.account = a.account AND s.currency = a.currency
        WHERE a.balance_minor <> coalesce(s.total, 0)`,
    );
    expect(drift).to.deep.equal([]);
    const carried = await q<{ kind: string; order_id: string | null; deposit_id: string | null }>(
      `SELECT kind, order_id, deposit_id FROM ledger_transactions WHERE kind = 'wallet_migration'`,
    );
    expect(carried).to.have.length(3);
    expect(carried.every((t) => t.order_id === null && t.deposit_id === null)).to.equal(true);
    const old = await q(`SELECT 1 FROM ledger_transactions WHERE kind IN ('hold', 'settle', 'escrow_lock', 'escrow_release')`);
    expect(old).to.have.length(4);
  });

  it('when anything else tries a posting with no order and no deposit, then the database still refuses it', async () => {
    const refused = await db
      .query(`INSERT INTO ledger_transactions (id, kind, currency) VALUES (:id, 'hold', 'KES')`, { replacements: { id: randomUUID() } })
      .then(() => null)
      .catch((err: Error) => err);
    expect(refused?.message).to.match(/ledger_transactions_one_subject/);
  });
});
