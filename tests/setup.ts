import './support/env';
import { expect } from 'chai';
import { database } from '../platform/database';
import { ledgerImbalanceByCurrency, ledgerOverdrafts, overpaidOrders } from '../domain/ledger';
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
      const imbalance = await ledgerImbalanceByCurrency(database());
      for (const [currency, value] of Object.entries(imbalance)) {
        expect(value, `ledger imbalance in ${currency} after the suite`).to.equal('0');
      }
      expect(await ledgerOverdrafts(database()), 'internal ledger accounts overdrawn during the suite').to.deep.equal([]);
      expect(await overpaidOrders(database()), 'payers refunded more than taken, or charged more than held').to.deep.equal([]);
    } finally {
      await stopStack();
    }
  },
};
