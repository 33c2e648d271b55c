import './support/env';
import { expect } from 'chai';
import { ledgerImbalanceByCurrency, ledgerOverdrafts, overpaidOrders } from '../repositories/ledger';
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
      expect(await ledgerOverdrafts(), 'internal ledger accounts overdrawn during the suite').to.deep.equal([]);
      expect(await overpaidOrders(), 'payers refunded more than taken, or charged more than held').to.deep.equal([]);
    } finally {
      await stopStack();
    }
  },
};
