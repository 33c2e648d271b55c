import { expect } from 'chai';
import { evaluateBalanceCap, evaluateTierLimits } from '../../domain/limits';
import { loadConfig } from '../../platform/config';

// The default tiers: unverified 10,000 per payment / 50,000 a day / wallets up to 50,000; verified 1,000,000 /
// 5,000,000 / 10,000,000 (KES).
const limits = loadConfig({}).limits;
const kes = (whole: number) => BigInt(whole) * 100n;

describe('unit: tier limits', () => {
  it('then the defaults are the documented tiers', () => {
    expect(limits.unverified).to.deep.equal({ perPaymentKes: '10000', dailyKes: '50000', balanceKes: '50000' });
    expect(limits.verified).to.deep.equal({ perPaymentKes: '1000000', dailyKes: '5000000', balanceKes: '10000000' });
  });

  describe('when an unverified user pays', () => {
    it('then exactly the per-payment limit is allowed', () => {
      expect(evaluateTierLimits('unverified', kes(10_000), 0n, limits)).to.equal(null);
    });

    it('then one cent over the per-payment limit is kyc_required', () => {
      const breach = evaluateTierLimits('unverified', kes(10_000) + 1n, 0n, limits);
      expect(breach?.code).to.equal('kyc_required');
      expect(breach?.reason).to.equal('the unverified tier allows at most KES 10000 per payment');
    });

    it('then reaching exactly the daily limit is allowed', () => {
      expect(evaluateTierLimits('unverified', kes(10_000), kes(40_000), limits)).to.equal(null);
    });

    it('then one cent over the daily limit is kyc_required', () => {
      const breach = evaluateTierLimits('unverified', kes(5_000), kes(45_000) + 1n, limits);
      expect(breach?.code).to.equal('kyc_required');
      expect(breach?.reason).to.equal('the unverified tier allows at most KES 50000 per 24 hours');
    });

    for (const status of ['pending', 'rejected'] as const) {
      it(`then a ${status} user is held to the unverified tier`, () => {
        expect(evaluateTierLimits(status, kes(10_000) + 1n, 0n, limits)?.code).to.equal('kyc_required');
      });
    }
  });

  describe('when a verified user pays', () => {
    it('then an amount over the unverified tier is allowed', () => {
      expect(evaluateTierLimits('verified', kes(10_000) + 1n, kes(45_000), limits)).to.equal(null);
    });

    it('then exactly the per-payment and daily limits are allowed', () => {
      expect(evaluateTierLimits('verified', kes(1_000_000), 0n, limits)).to.equal(null);
      expect(evaluateTierLimits('verified', kes(1_000_000), kes(4_000_000), limits)).to.equal(null);
    });

    it('then over the per-payment limit is limit_exceeded', () => {
      const breach = evaluateTierLimits('verified', kes(1_000_000) + 1n, 0n, limits);
      expect(breach?.code).to.equal('limit_exceeded');
      expect(breach?.reason).to.equal('the verified tier allows at most KES 1000000 per payment');
    });

    it('then over the daily limit is limit_exceeded', () => {
      const breach = evaluateTierLimits('verified', kes(1), kes(5_000_000), limits);
      expect(breach?.code).to.equal('limit_exceeded');
      expect(breach?.reason).to.equal('the verified tier allows at most KES 5000000 per 24 hours');
    });
  });

  describe('when limits are configured with decimals', () => {
    it('then they are compared to the cent', () => {
      const custom = loadConfig({ LIMIT_UNVERIFIED_PER_PAYMENT_KES: '99.99' }).limits;
      expect(evaluateTierLimits('unverified', 9_999n, 0n, custom)).to.equal(null);
      expect(evaluateTierLimits('unverified', 10_000n, 0n, custom)?.code).to.equal('kyc_required');
    });
  });

  describe('when money would be credited to a wallet', () => {
    it('then an unverified wallet may reach exactly KES 50,000, and one cent more is kyc_required', () => {
      expect(evaluateBalanceCap('unverified', kes(50_000), limits)).to.equal(null);
      const breach = evaluateBalanceCap('unverified', kes(50_000) + 1n, limits);
      expect(breach?.code).to.equal('kyc_required');
      expect(breach?.reason).to.equal('the unverified tier allows a wallet to hold at most KES 50000');
    });

    it('then a verified wallet over its higher cap is limit_exceeded', () => {
      expect(evaluateBalanceCap('verified', kes(10_000_000), limits)).to.equal(null);
      expect(evaluateBalanceCap('verified', kes(10_000_000) + 1n, limits)?.code).to.equal('limit_exceeded');
    });
  });
});
