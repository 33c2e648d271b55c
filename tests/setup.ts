import './support/env';
import { expect } from 'chai';
import { balanceDrift, ledgerImbalanceByCurrency, overpaidOrders, runningBalanceDrift } from '../repositories/ledger';
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
    } finally {
      await stopStack();
    }
  },
};
