import { expect } from 'chai';
import {
  SANDBOX_MAINTENANCE_EXCHANGE,
  SANDBOX_SILENT_PHONE,
  SANDBOX_SLOW_PHONE,
  SANDBOX_SLOW_SETTLE_MS,
  describeFailure,
  sandboxVerdict,
} from '../../connectors/sandbox';
import { RailError, type RailSubmission } from '../../connectors/types';

type Submission = Pick<RailSubmission, 'method' | 'amount' | 'destination'>;

const mobile = (phone: string, amount = '1500.00'): Submission => ({
  method: 'mobile_money',
  amount,
  destination: { provider: 'mpesa', phone },
});
const bank = (accountNumber: string, amount = '1500.00'): Submission => ({
  method: 'bank_transfer',
  amount,
  destination: { bank_code: '01', account_number: accountNumber, account_name: 'Jane Doe' },
});
const crypto = (exchangeId: string, amount = '10.000000'): Submission => ({
  method: 'crypto',
  amount,
  destination: { exchange_id: exchangeId, account_ref: 'acc-1' },
});

const SUCCESS = { outcome: 'succeeded', failureCode: null, providerCode: null, sendsCallback: true, busyOnFirstSubmission: false };

describe('unit: sandbox verdicts', () => {
  describe('when nothing magic is asked for', () => {
    it('then every rail succeeds and calls back', () => {
      expect(sandboxVerdict(mobile('+254712345678'))).to.deep.equal(SUCCESS);
      expect(sandboxVerdict(bank('1234567890'))).to.deep.equal(SUCCESS);
      expect(sandboxVerdict(crypto('binance'))).to.deep.equal(SUCCESS);
    });
  });

  describe('when a bank account ends in 0000', () => {
    it('then the submission is refused with a non-retryable account_not_found', () => {
      const verdict = sandboxVerdict(bank('1234560000'));
      expect(verdict).to.be.instanceOf(RailError);
      expect((verdict as RailError).failureCode).to.equal('account_not_found');
      expect((verdict as RailError).retryable).to.equal(false);
    });

    it('then 0000 elsewhere in the number is an ordinary account', () => {
      expect(sandboxVerdict(bank('0000123456'))).to.deep.equal(SUCCESS);
    });
  });

  describe('when the exchange is in maintenance', () => {
    it('then the submission is refused with a retryable exchange_unavailable', () => {
      const verdict = sandboxVerdict(crypto(SANDBOX_MAINTENANCE_EXCHANGE));
      expect(SANDBOX_MAINTENANCE_EXCHANGE).to.equal('sandbox_maintenance');
      expect(verdict).to.be.instanceOf(RailError);
      expect((verdict as RailError).failureCode).to.equal('exchange_unavailable');
      expect((verdict as RailError).retryable).to.equal(true);
    });
  });

  describe('when the amount has .13 as its cents', () => {
    it('then a mobile-money payment fails with insufficient_funds and M-Pesa code 1', () => {
      expect(sandboxVerdict(mobile('+254712345678', '1500.13'))).to.deep.equal({
        ...SUCCESS,
        outcome: 'failed',
        failureCode: 'insufficient_funds',
        providerCode: '1',
      });
    });

    it('then a bank payment fails with insufficient_funds and no provider code', () => {
      expect(sandboxVerdict(bank('1234567890', '250.13'))).to.deep.equal({
        ...SUCCESS,
        outcome: 'failed',
        failureCode: 'insufficient_funds',
      });
    });

    it('then .31 and .130 of a cent-scale amount are not magic', () => {
      expect(sandboxVerdict(mobile('+254712345678', '1500.31'))).to.deep.equal(SUCCESS);
      expect(sandboxVerdict(mobile('+254712345678', '1500.00'))).to.deep.equal(SUCCESS);
      expect(sandboxVerdict(mobile('+254712345678', '1500'))).to.deep.equal(SUCCESS);
    });
  });

  describe('when the phone never calls back', () => {
    it('then the transfer succeeds without a callback', () => {
      expect(SANDBOX_SILENT_PHONE).to.equal('+254700000999');
      expect(sandboxVerdict(mobile(SANDBOX_SILENT_PHONE))).to.deep.equal({ ...SUCCESS, sendsCallback: false });
    });
  });

  describe('when the phone is the slow one', () => {
    it('then the transfer stays pending for a day without a callback, and then succeeds or fails as the amount says', () => {
      expect(SANDBOX_SLOW_PHONE).to.equal('+254700000998');
      expect(SANDBOX_SLOW_SETTLE_MS).to.equal(24 * 3600 * 1000);
      const slow = { sendsCallback: false, settlesAfterMs: SANDBOX_SLOW_SETTLE_MS };
      expect(sandboxVerdict(mobile(SANDBOX_SLOW_PHONE))).to.deep.equal({ ...SUCCESS, ...slow });
      expect(sandboxVerdict(mobile(SANDBOX_SLOW_PHONE, '1500.13'))).to.deep.equal({
        ...SUCCESS,
        ...slow,
        outcome: 'failed',
        failureCode: 'insufficient_funds',
        providerCode: '1',
      });
    });
  });

  describe('when the phone spells an M-Pesa ResultCode', () => {
    const failures: [string, string, string][] = [
      ['+254700001032', 'cancelled_by_user', '1032'],
      ['+254700002001', 'invalid_pin', '2001'],
      ['+254700001037', 'subscriber_unreachable', '1037'],
      ['+254700000001', 'insufficient_funds', '1'],
      ['+254700001001', 'subscriber_locked', '1001'],
      ['+254700001019', 'transaction_expired', '1019'],
    ];
    for (const [phone, failureCode, providerCode] of failures) {
      it(`then ${phone} fails with ${failureCode} (ResultCode ${providerCode})`, () => {
        expect(sandboxVerdict(mobile(phone))).to.deep.equal({ ...SUCCESS, outcome: 'failed', failureCode, providerCode });
        expect(describeFailure(failureCode, providerCode)).to.not.equal(failureCode.replace(/_/g, ' '));
      });
    }

    for (const busy of ['+254700000017', '+254700000026']) {
      it(`then the busy code ${busy} refuses the first submission and then succeeds`, () => {
        expect(sandboxVerdict(mobile(busy))).to.deep.equal({ ...SUCCESS, providerCode: '0', busyOnFirstSubmission: true });
      });
    }

    it('then an unmapped code is an ordinary success', () => {
      expect(sandboxVerdict(mobile('+254700001234'))).to.deep.equal(SUCCESS);
    });
  });

  describe('when a failure is described', () => {
    it('then a known M-Pesa code has its reason and anything else is the code in words', () => {
      expect(describeFailure('cancelled_by_user', '1032')).to.equal('the subscriber cancelled the request');
      expect(describeFailure('account_not_found', null)).to.equal('account not found');
      expect(describeFailure('insufficient_funds', '1032')).to.equal('insufficient funds');
    });
  });
});
