import { expect } from 'chai';
import { CcxtTransferConnector, type CcxtTransferExchange } from '../domain/connectors/ccxt-transfer';
import { RailError } from '../domain/connectors/types';

class InsufficientFunds extends Error {}
class OnMaintenance extends Error {}

/** An exchange double with ccxt's surface: withdrawals are recorded and listed with a status. */
function exchangeDouble(behaviour: { fail?: Error } = {}) {
  const withdrawals: { id: string; status: string; address: string; params: Record<string, unknown> | undefined }[] = [];
  let sandbox = false;
  const exchange: CcxtTransferExchange = {
    has: { fetchStatus: true },
    urls: { api: { public: 'https://api.example', private: 'https://api.example' }, test: { public: 'https://test.example' } },
    setSandboxMode: (enabled) => {
      sandbox = enabled;
    },
    withdraw: (_code, _amount, address, _tag, params) => {
      if (behaviour.fail) return Promise.reject(behaviour.fail);
      const id = `w-${withdrawals.length + 1}`;
      withdrawals.push({ id, status: 'pending', address, params });
      return Promise.resolve({ id, status: 'pending' });
    },
    fetchWithdrawals: () => Promise.resolve(withdrawals.map(({ id, status }) => ({ id, status }))),
    fetchStatus: () => Promise.resolve({ status: 'ok' }),
  };
  return { exchange, withdrawals, sandboxOn: () => sandbox };
}

const submission = {
  idempotencyKey: 'order-1',
  orderId: 'order-1',
  method: 'crypto' as const,
  amount: '25.500000',
  currency: 'USDT' as const,
  destination: { address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', network: 'TRC20' },
  description: null,
  callbackUrl: 'http://127.0.0.1/unused',
};

describe('ccxt transfers', () => {
  const options = { exchange: 'binance', apiKey: 'k', secret: 's', sandbox: true };

  describe('when a withdrawal is sent to an address', () => {
    it('then it uses the sandbox, names the network and settles when the exchange says ok', async () => {
      const double = exchangeDouble();
      const connector = new CcxtTransferConnector({ ...options, create: () => double.exchange });
      const accepted = await connector.submit(submission);
      expect(accepted.reference).to.equal('w-1');
      expect(double.sandboxOn()).to.equal(true);
      expect(double.withdrawals[0]).to.deep.include({ address: submission.destination.address });
      expect(double.withdrawals[0]?.params).to.include({ network: 'TRC20' });
      expect(await connector.status('w-1')).to.deep.equal({ state: 'pending', reference: 'w-1' });
      double.withdrawals[0].status = 'ok';
      expect(await connector.status('w-1')).to.deep.equal({ state: 'succeeded', reference: 'w-1' });
      expect(await connector.health()).to.equal('up');
    });
  });

  describe('when the exchange refuses', () => {
    it('then insufficient funds is final and maintenance is retryable', async () => {
      const poor = new CcxtTransferConnector({
        ...options,
        create: () => exchangeDouble({ fail: new InsufficientFunds('balance too low') }).exchange,
      });
      const busy = new CcxtTransferConnector({
        ...options,
        create: () => exchangeDouble({ fail: new OnMaintenance('upgrading') }).exchange,
      });
      const refusal = await poor.submit(submission).catch((e: unknown) => e);
      expect(refusal).to.be.instanceOf(RailError).and.include({ failureCode: 'insufficient_funds', retryable: false });
      const maintenance = await busy.submit(submission).catch((e: unknown) => e);
      expect(maintenance).to.be.instanceOf(RailError).and.include({ failureCode: 'exchange_unavailable', retryable: true });
    });
  });
});
