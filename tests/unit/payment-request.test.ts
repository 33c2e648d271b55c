import { expect } from 'chai';
import { AppError } from '../../platform/errors';
import { validatePaymentRequest, type PaymentRequestInput } from '../../domain/payment-request';

const mpesa = (overrides: Partial<PaymentRequestInput> = {}): PaymentRequestInput => ({
  amount: '1500.00',
  currency: 'KES',
  method: 'mobile_money',
  destination: { provider: 'mpesa', phone: '0712 345 678' },
  description: 'rent',
  ...overrides,
});

function fieldsOf(input: PaymentRequestInput): string[] {
  try {
    validatePaymentRequest(input);
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    const appError = err as AppError;
    expect(appError.code).to.equal('validation_failed');
    expect(appError.options.errors).to.be.an('array').that.is.not.empty;
    for (const e of appError.options.errors ?? []) expect(appError.detail).to.include(`${e.field}: ${e.message}`);
    return (appError.options.errors ?? []).map((e) => e.field);
  }
  return expect.fail('expected a validation error');
}

describe('unit: payment request validation', () => {
  describe('when the request is valid', () => {
    it('then a mobile-money request is normalised', () => {
      expect(validatePaymentRequest(mpesa())).to.deep.equal({
        amountMinor: 150000n,
        currency: 'KES',
        method: 'mobile_money',
        destination: { provider: 'mpesa', phone: '+254712345678' },
        description: 'rent',
        reference: null,
      });
    });

    it('then bank, crypto (exchange and address) and p2p destinations are accepted', () => {
      const bank = validatePaymentRequest(
        mpesa({
          method: 'bank_transfer',
          currency: 'USD',
          amount: '10.50',
          destination: { bank_code: '01', account_number: '1234567890', account_name: ' Jane ' },
        }),
      );
      expect(bank.amountMinor).to.equal(1050n);
      expect(bank.destination).to.deep.equal({ bank_code: '01', account_number: '1234567890', account_name: 'Jane' });
      const exchange = validatePaymentRequest(
        mpesa({ method: 'crypto', currency: 'USDT', amount: '10.000000', destination: { exchange_id: 'binance', account_ref: 'acc-1' } }),
      );
      expect(exchange.amountMinor).to.equal(10_000_000n);
      const wallet = validatePaymentRequest(
        mpesa({
          method: 'crypto',
          currency: 'BTC',
          amount: '0.001',
          destination: { address: 'bc1qexampleaddress0000000000', network: 'BTC' },
        }),
      );
      expect(wallet.destination.network).to.equal('BTC');
      const p2p = validatePaymentRequest(
        mpesa({
          method: 'p2p',
          destination: { ad_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', payment_method: 'mpesa' },
          reference: 'INV-1',
        }),
      );
      expect(p2p.reference).to.equal('INV-1');
    });

    it('then a missing description is null', () => {
      expect(validatePaymentRequest(mpesa({ description: undefined })).description).to.equal(null);
    });
  });

  describe('when a field is invalid', () => {
    const cases: [string, Partial<PaymentRequestInput>, string][] = [
      ['an unknown method', { method: 'carrier_pigeon' }, 'method'],
      ['a missing method', { method: undefined }, 'method'],
      ['an unknown currency', { currency: 'XYZ' }, 'currency'],
      ['a lower-case currency', { currency: 'kes' }, 'currency'],
      ['a currency the method does not carry', { currency: 'USD' }, 'currency'],
      ['crypto in KES', { method: 'crypto', currency: 'KES', destination: { exchange_id: 'binance', account_ref: 'a' } }, 'currency'],
      ['a zero amount', { amount: '0.00' }, 'amount'],
      ['a numeric amount', { amount: 1500 }, 'amount'],
      ['too many decimals', { amount: '1.001' }, 'amount'],
      ['no destination', { destination: undefined }, 'destination'],
      ['a destination that is a string', { destination: '+254712345678' }, 'destination'],
      ['a bad phone', { destination: { provider: 'mpesa', phone: '12345' } }, 'destination.phone'],
      ['an unknown provider', { destination: { provider: 'paypal', phone: '0712345678' } }, 'destination.provider'],
      ['an extra destination field', { destination: { provider: 'mpesa', phone: '0712345678', pin: '1234' } }, 'destination'],
      [
        'a missing account number',
        { method: 'bank_transfer', destination: { bank_code: '01', account_name: 'Jane Doe' } },
        'destination.account_number',
      ],
      [
        'a bad bank code',
        { method: 'bank_transfer', destination: { bank_code: 'ABC', account_number: '1234567890', account_name: 'Jane Doe' } },
        'destination.bank_code',
      ],
      [
        'a crypto destination of neither shape',
        { method: 'crypto', currency: 'USDT', amount: '1', destination: { foo: 'bar' } },
        'destination',
      ],
      ['a p2p ad id that is not a UUID', { method: 'p2p', destination: { ad_id: '42', payment_method: 'mpesa' } }, 'destination.ad_id'],
      ['a too-long description', { description: 'x'.repeat(281) }, 'description'],
      ['a non-string description', { description: 42 }, 'description'],
      ['a too-long reference', { reference: 'r'.repeat(65) }, 'reference'],
    ];
    for (const [what, overrides, field] of cases) {
      it(`then ${what} names ${field}`, () => {
        expect(fieldsOf(mpesa(overrides))).to.include(field);
      });
    }

    it('then several bad destination fields are all named', () => {
      const fields = fieldsOf(
        mpesa({ method: 'bank_transfer', currency: 'KES', destination: { bank_code: 'x', account_number: '1', account_name: 'J' } }),
      );
      expect(fields).to.have.members(['destination.bank_code', 'destination.account_number', 'destination.account_name']);
    });
  });
});
