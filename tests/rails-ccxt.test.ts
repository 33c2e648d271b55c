import { expect } from 'chai';
import { CcxtTransferConnector, ccxtRailError, pointUrls, type CcxtTransferExchange } from '../connectors/ccxt-transfer';
import { RailError } from '../connectors/types';
import { startFakeBinance, type FakeBinance } from './fakes/binance';

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
    loadMarkets: () => Promise.resolve({}),
    currencyToPrecision: (_code, amount) => amount,
    withdraw: (_code, _amount, address, _tag, params) => {
      if (behaviour.fail) return Promise.reject(behaviour.fail);
      const id = `w-${withdrawals.length + 1}`;
      withdrawals.push({ id, status: 'pending', address, params });
      return Promise.resolve({ id, status: 'pending' });
    },
    fetchWithdrawals: () => Promise.resolve(withdrawals.map(({ id, status }) => ({ id, status }))),
    fetchStatus: () => Promise.resolve({ status: 'ok' }),
    fetchDepositAddress: () => Promise.resolve({ address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE' }),
    fetchDeposits: () => Promise.resolve([]),
    fetchBalance: () => Promise.resolve({ info: {} }),
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

  describe('when the destination exchange is in maintenance in the catalogue', () => {
    it('then the transfer is held back as retryable, without asking the exchange', async () => {
      const double = exchangeDouble();
      const connector = new CcxtTransferConnector({
        ...options,
        create: () => double.exchange,
        destinationStatus: (id) => Promise.resolve(id === 'kraken' ? 'maintenance' : 'ok'),
      });
      const held = await connector
        .submit({ ...submission, destination: { exchange_id: 'kraken', account_ref: 'acc-1' } })
        .catch((e: unknown) => e);
      expect(held).to.be.instanceOf(RailError).and.include({ failureCode: 'exchange_unavailable', retryable: true });
      expect(double.withdrawals).to.have.length(0);
      expect(await connector.submit({ ...submission, destination: { exchange_id: 'bitstamp', account_ref: 'acc-1' } })).to.deep.equal({
        reference: 'w-1',
      });
    });
  });

  describe('when CCXT_API_URL moves the exchange', () => {
    it('then every API URL keeps its path on the new origin', () => {
      expect(
        pointUrls(
          { sapi: 'https://api.binance.com/sapi/v1', fapiPublic: 'https://fapi.binance.com/fapi/v1', v: ['https://x.io'] },
          'http://127.0.0.1:9/',
        ),
      ).to.deep.equal({ sapi: 'http://127.0.0.1:9/sapi/v1', fapiPublic: 'http://127.0.0.1:9/fapi/v1', v: ['http://127.0.0.1:9'] });
    });

    it('then a refusal for funds is still insufficient_funds when ccxt could not classify it by host', () => {
      expect(ccxtRailError(new Error('binance {"code":-4026,"msg":"You have insufficient balance."}'))).to.include({
        failureCode: 'insufficient_funds',
        retryable: false,
      });
      expect(ccxtRailError(new Error('binance {"code":-4003,"msg":"Invalid coin."}'))).to.include({ failureCode: 'provider_rejected' });
    });
  });
  describe('when ETH is withdrawn through the real ccxt binance client (against the local Binance)', () => {
    const creds = { apiKey: 'exact-amount-key', secret: 'exact-amount-secret' };
    let fine: FakeBinance;
    let coarse: FakeBinance;
    const eth = (amount: string) => ({
      ...submission,
      idempotencyKey: `exact-${amount}-${Date.now()}`,
      amount,
      currency: 'ETH' as const,
      destination: { address: '0x52908400098527886E0F7030069857D2E4169EE7', network: 'ETH' },
    });
    const connectorFor = (fake: FakeBinance) =>
      new CcxtTransferConnector({ exchange: 'binance', ...creds, sandbox: false, apiUrl: fake.url });

    before(async () => {
      fine = await startFakeBinance(creds);
      coarse = await startFakeBinance({ ...creds, withdrawSteps: { ETH: '0.00000001' } });
    });
    after(async () => {
      await fine.close();
      await coarse.close();
    });

    it('then the exchange receives exactly the ledger amount, to the last wei', async () => {
      const accepted = await connectorFor(fine).submit(eth('0.123456789012345678'));
      expect(accepted.reference).to.be.a('string');
      expect(fine.withdrawals.map((w) => w.amount)).to.deep.equal(['0.123456789012345678']);
    });

    it('then an amount the exchange could only round is refused as final, and nothing is sent', async () => {
      const refused = await connectorFor(coarse)
        .submit(eth('0.123456789012345678'))
        .catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(RailError).and.include({ failureCode: 'invalid_amount', retryable: false });
      expect(coarse.withdrawals).to.deep.equal([]);
      await connectorFor(coarse).submit(eth('1.500000000000000000'));
      expect(coarse.withdrawals.map((w) => Number(w.amount))).to.deep.equal([1.5]);
    });
  });

  describe('when the exchange account has many other withdrawals', () => {
    it('then the status looks the withdrawal up by its id and finds it beyond the history page', async function () {
      this.timeout(30_000);
      const binance = await startFakeBinance({ apiKey: 'k-lookup', secret: 'fake-binance-secret-lookup', settleAfterMs: 0 });
      try {
        const connector = new CcxtTransferConnector({
          exchange: 'binance',
          apiKey: 'k-lookup',
          secret: 'fake-binance-secret-lookup',
          sandbox: false,
          apiUrl: binance.url,
        });
        const since = Date.now();
        const { reference } = await connector.submit({ ...submission, destination: { ...submission.destination, network: 'TRX' } });
        // A busy account: more later withdrawals than one page of the history holds (Binance answers 1000, newest first).
        const ours = binance.withdrawals[0];
        for (let i = 0; i < 1200; i += 1) {
          binance.withdrawals.push({ ...ours, id: `other-${i}`, withdrawOrderId: undefined, applyTime: ours.applyTime + 1 + i });
        }
        expect(await connector.status(reference, { currency: 'USDT', since })).to.deep.equal({ state: 'succeeded', reference });
        expect(await connector.status(reference)).to.deep.equal({ state: 'succeeded', reference });
      } finally {
        await binance.close();
      }
    });
  });
});
