import { expect } from 'chai';
import { AppError } from '../../platform/errors';
import { CURRENCIES, formatAmount, fractionDigits, isCurrency, parseAmount, toKesMinor, type Currency } from '../../domain/money';

const RATES = { KES: '1', USD: '129.00', USDT: '129.00', USDC: '129.00', BTC: '11000000', ETH: '400000' };

function expectAmountError(fn: () => unknown, field = 'amount'): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    const appError = err as AppError;
    expect(appError.code).to.equal('validation_failed');
    expect(appError.status).to.equal(400);
    expect(appError.options.errors?.map((e) => e.field)).to.deep.equal([field]);
    return appError;
  }
  return expect.fail('expected a validation error');
}

describe('unit: money', () => {
  describe('when an amount is parsed', () => {
    const cases: [string, Currency, bigint][] = [
      ['1500.00', 'KES', 150000n],
      ['1500', 'KES', 150000n],
      ['1500.5', 'KES', 150050n],
      ['0.01', 'USD', 1n],
      ['25.500000', 'USDT', 25500000n],
      ['25.5', 'USDC', 25500000n],
      ['0.00150000', 'BTC', 150000n],
      ['0.00000001', 'BTC', 1n],
      ['1.000000000000000001', 'ETH', 1000000000000000001n],
      ['0.000000000000000001', 'ETH', 1n],
    ];
    for (const [raw, currency, minor] of cases) {
      it(`then "${raw}" ${currency} is ${minor} minor units`, () => {
        expect(parseAmount(raw, currency)).to.equal(minor);
      });
    }

    it('then a very large amount keeps every digit (no float rounding)', () => {
      expect(parseAmount('999999999999999.99', 'KES')).to.equal(99999999999999999n);
      expect(parseAmount('999999999999999.999999999999999999', 'ETH')).to.equal(999999999999999999999999999999999n);
    });
  });

  describe('when an amount is invalid', () => {
    const cases: [string, unknown, Currency][] = [
      ['zero', '0', 'KES'],
      ['zero with decimals', '0.00', 'KES'],
      ['a negative amount', '-5.00', 'KES'],
      ['too many decimals for KES', '10.001', 'KES'],
      ['too many decimals for USDT', '1.0000001', 'USDT'],
      ['too many decimals for BTC', '0.000000001', 'BTC'],
      ['a number', 10, 'KES'],
      ['null', null, 'KES'],
      ['undefined', undefined, 'KES'],
      ['an object', { value: '10.00' }, 'KES'],
      ['exponent notation', '1e3', 'KES'],
      ['upper-case exponent', '1.5E2', 'KES'],
      ['a leading plus', '+10.00', 'KES'],
      ['a leading zero', '010.00', 'KES'],
      ['a trailing dot', '10.', 'KES'],
      ['a leading dot', '.50', 'KES'],
      ['a thousands separator', '1,500.00', 'KES'],
      ['an empty string', '', 'KES'],
      ['hex', '0x10', 'KES'],
      ['Infinity', 'Infinity', 'KES'],
      ['NaN', 'NaN', 'KES'],
      ['16 digits before the point (beyond the stored range)', '1000000000000000.00', 'KES'],
      ['an amount beyond NUMERIC(38) in ETH minor units', '99999999999999999999999.99', 'ETH'],
    ];
    for (const [what, raw, currency] of cases) {
      it(`then ${what} is refused`, () => {
        expectAmountError(() => parseAmount(raw, currency));
      });
    }

    it('then the error names the field given', () => {
      const err = expectAmountError(() => parseAmount('abc', 'KES', 'price'), 'price');
      expect(err.detail).to.match(/^price: /);
    });

    it('then the decimals message names the currency scale', () => {
      const err = expectAmountError(() => parseAmount('1.123', 'USD'));
      expect(err.options.errors?.[0].message).to.equal('USD allows at most 2 decimal places');
    });
  });

  describe('when an amount is formatted', () => {
    it('then it has exactly the currency scale', () => {
      expect(formatAmount(150000n, 'KES')).to.equal('1500.00');
      expect(formatAmount(1n, 'KES')).to.equal('0.01');
      expect(formatAmount(25500000n, 'USDT')).to.equal('25.500000');
      expect(formatAmount('150000', 'BTC')).to.equal('0.00150000');
      expect(formatAmount(1n, 'ETH')).to.equal('0.000000000000000001');
      expect(formatAmount(0n, 'KES')).to.equal('0.00');
      expect(formatAmount(-150n, 'KES')).to.equal('-1.50');
    });

    it('then parse and format round-trip for every currency', () => {
      for (const currency of CURRENCIES) {
        for (const minor of [1n, 99n, 100n, 123456789n, 10n ** 16n + 7n]) {
          const text = formatAmount(minor, currency);
          expect(parseAmount(text, currency), `${text} ${currency}`).to.equal(minor);
          expect(formatAmount(parseAmount(text, currency), currency)).to.equal(text);
        }
      }
    });

    it('then fractionDigits is the decimal part at full scale', () => {
      expect(fractionDigits(150013n, 'KES')).to.equal('13');
      expect(fractionDigits(10130000n, 'USDT')).to.equal('130000');
    });
  });

  describe('when a currency code is checked', () => {
    it('then only the supported codes are currencies', () => {
      expect(['KES', 'USD', 'USDT', 'USDC', 'BTC', 'ETH'].every(isCurrency)).to.equal(true);
      for (const bad of ['kes', 'XYZ', '', 'toString', '__proto__', 'constructor']) expect(isCurrency(bad), bad).to.equal(false);
    });
  });

  describe('when an amount is converted to KES', () => {
    it('then KES is unchanged', () => {
      expect(toKesMinor(150000n, 'KES', RATES)).to.equal(150000n);
    });

    it('then exact conversions are exact', () => {
      expect(toKesMinor(100n, 'USD', RATES)).to.equal(12900n); // 1 USD = 129.00 KES
      expect(toKesMinor(1_000_000n, 'USDT', RATES)).to.equal(12900n); // 1 USDT
      expect(toKesMinor(100_000_000n, 'BTC', RATES)).to.equal(1_100_000_000n); // 1 BTC = 11,000,000 KES
      expect(toKesMinor(10n ** 18n, 'ETH', RATES)).to.equal(40_000_000n); // 1 ETH = 400,000 KES
    });

    it('then fractions of a cent are rounded up, never down', () => {
      expect(toKesMinor(1n, 'USDT', RATES)).to.equal(1n); // 0.000129 KES
      expect(toKesMinor(1n, 'ETH', RATES)).to.equal(1n); // 4e-13 KES
      expect(toKesMinor(1n, 'BTC', RATES)).to.equal(11n); // exactly 0.11 KES
      expect(toKesMinor(1n, 'USD', { USD: '129.005' })).to.equal(130n); // 1.29005 KES
      expect(toKesMinor(3n, 'USD', { USD: '0.333' })).to.equal(1n); // 0.00999 KES
    });

    it('then a currency without a rate is an error, not a zero', () => {
      expect(() => toKesMinor(100n, 'USD', { KES: '1' })).to.throw(/no FX rate to KES configured for USD/);
    });
  });
});
