import { expect } from 'chai';
import { feeFor } from '../../domain/fees';
import { ConfigError, loadConfig } from '../../platform/config';

const rates = { KES: '1', USDT: '129.00', BTC: '11000000' };
const none = { flatKes: '0', percent: '0' };
const schedule = (bank_transfer = none, mobile_money = none, crypto = none) => ({ bank_transfer, mobile_money, crypto });

describe('unit: fees', () => {
  describe('when nothing is configured', () => {
    it('then every method is free, and the configuration says so', () => {
      const fees = loadConfig({}).fees;
      for (const method of ['bank_transfer', 'mobile_money', 'crypto', 'p2p'] as const) {
        expect(feeFor(method, 150000n, 'KES', fees, rates)).to.equal(0n);
      }
    });
  });

  describe('when a method charges a flat part and a percentage', () => {
    const fees = schedule(none, { flatKes: '30', percent: '1' });
    it('then the fee is the flat part plus the percentage, rounded up to the minor unit', () => {
      expect(feeFor('mobile_money', 150000n, 'KES', fees, rates)).to.equal(4500n);
      expect(feeFor('mobile_money', 150050n, 'KES', fees, rates)).to.equal(3000n + 1501n);
      expect(feeFor('mobile_money', 1n, 'KES', fees, rates)).to.equal(3001n);
    });
    it('then other methods and P2P trades stay free', () => {
      expect(feeFor('bank_transfer', 150000n, 'KES', fees, rates)).to.equal(0n);
      expect(feeFor('p2p', 150000n, 'KES', fees, rates)).to.equal(0n);
    });
  });

  describe('when a crypto payout is charged a flat fee set in KES', () => {
    it('then the flat part is converted at the reference rate and rounded up, never down', () => {
      const fees = schedule(none, none, { flatKes: '129', percent: '0' });
      expect(feeFor('crypto', 10_000000n, 'USDT', fees, rates)).to.equal(1_000000n); // KES 129 = 1 USDT
      const odd = schedule(none, none, { flatKes: '100', percent: '0.1' });
      // KES 100 / 129 = 0.775193798… USDT → 0.775194; 0.1 % of 10 USDT = 0.01 USDT.
      expect(feeFor('crypto', 10_000000n, 'USDT', odd, rates)).to.equal(775194n + 10000n);
      // KES 100 / 11,000,000 per BTC = 0.00000909… → 910 satoshi; 0.1 % of 1 BTC is 100,000 satoshi.
      expect(feeFor('crypto', 100000000n, 'BTC', odd, rates)).to.equal(910n + 100000n);
      // A percentage of the smallest amount is still at least one minor unit.
      expect(feeFor('crypto', 1n, 'BTC', odd, rates)).to.equal(910n + 1n);
    });
  });

  describe('when a fee setting is malformed', () => {
    for (const [variable, value] of [
      ['FEE_MOBILE_MONEY_PERCENT', '150'],
      ['FEE_MOBILE_MONEY_PERCENT', '-1'],
      ['FEE_BANK_TRANSFER_PERCENT', '0.00001'],
      ['FEE_CRYPTO_FLAT_KES', '12.345'],
      ['FEE_CRYPTO_FLAT_KES', 'thirty'],
    ]) {
      it(`then boot refuses ${variable}=${value}, naming it`, () => {
        try {
          loadConfig({ [variable]: value });
          expect.fail('expected a ConfigError');
        } catch (err) {
          expect(err).to.be.instanceOf(ConfigError);
          expect((err as ConfigError).message).to.include(variable);
        }
      });
    }
    it('then 100 % is still accepted', () => {
      expect(loadConfig({ FEE_BANK_TRANSFER_PERCENT: '100' }).fees.bank_transfer.percent).to.equal('100');
    });
  });
});
