import './support/env';
import { expect } from 'chai';
import { balanceDrift, classBalances, ledgerImbalanceByCurrency, overpaidOrders, runningBalanceDrift } from '../repositories/ledger';
import { reconcile } from '../domain/reconciliation';
import { startStack, stopStack } from './support/stack';

/** Root hooks: one real stack for the whole suite, and the ledger invariants checked after it. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await startStack();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    try {
      const imbalance = await ledgerImbalanceByCurrency();
      for (const [currency, value] of Object.entries(imbalance)) {
        expect(value, `ledger imbalance in ${currency} after the suite`).to.equal('0');
      }
      // Overdrafts of wallet, hold, escrow and suspense accounts are refused by the database as they happen.
      expect(await balanceDrift(), 'stored account balances that differ from the sum of their entries').to.deep.equal([]);
      expect(await runningBalanceDrift(), "entries whose balance_after is not their account's running balance").to.deep.equal([]);
      expect(await overpaidOrders(), 'payers refunded more than taken, or charged more than held').to.deep.equal([]);
      // Float: what the rail accounts say the platform holds is what it owes its customers plus its fee revenue,
      // less the refunds the operator paid from its own funds (expense:refunds), which no rail gave back.
      for (const c of reconcile(await classBalances(), [])) {
        const owed =
          BigInt(c.liabilities.total.replace('.', '')) + BigInt(c.fee_revenue.replace('.', '')) - BigInt(c.expenses.replace('.', ''));
        expect(BigInt(c.rails_per_ledger.replace('.', '')), `${c.currency}: rails against liabilities + fees - refunds`).to.equal(owed);
      }
    } finally {
      await stopStack();
    }
  },
};
