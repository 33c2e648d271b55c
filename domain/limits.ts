import type { Config } from '../platform/config';
import type { KycStatus } from './users';
import { decimalToScaled } from './money';

export interface LimitBreach {
  code: 'kyc_required' | 'limit_exceeded';
  reason: string;
}

/**
 * KYC tier limits (docs/kyc.md#tier-limits), in KES minor units. An unverified user over the small tier is asked to
 * verify (`kyc_required`); a verified user over the higher tier is refused (`limit_exceeded`).
 */
export function evaluateTierLimits(
  kycStatus: KycStatus,
  amountKesMinor: bigint,
  usedLast24hKesMinor: bigint,
  limits: Config['limits'],
): LimitBreach | null {
  const verified = kycStatus === 'verified';
  const tier = verified ? limits.verified : limits.unverified;
  const perPayment = decimalToScaled(tier.perPaymentKes, 2);
  const daily = decimalToScaled(tier.dailyKes, 2);
  const code = verified ? 'limit_exceeded' : 'kyc_required';
  const tierName = verified ? 'verified' : 'unverified';
  if (amountKesMinor > perPayment) {
    return { code, reason: `the ${tierName} tier allows at most KES ${tier.perPaymentKes} per payment` };
  }
  if (usedLast24hKesMinor + amountKesMinor > daily) {
    return { code, reason: `the ${tierName} tier allows at most KES ${tier.dailyKes} per 24 hours` };
  }
  return null;
}

/** The KYC tiers' per-payment and 24-hour limits, in KES minor units, as the database checks them under lock. */
export interface TierLimitsMinor {
  unverified: { perPayment: bigint; daily: bigint };
  verified: { perPayment: bigint; daily: bigint };
}

export function tierLimitsMinor(limits: Config['limits']): TierLimitsMinor {
  const tier = (t: Config['limits']['verified']) => ({
    perPayment: decimalToScaled(t.perPaymentKes, 2),
    daily: decimalToScaled(t.dailyKes, 2),
  });
  return { unverified: tier(limits.unverified), verified: tier(limits.verified) };
}

/**
 * The wallet cap by tier (docs/wallets.md#caps-by-kyc-tier): no wallet may hold more than the tier allows, as its KES equivalent.
 * `balanceAfterKesMinor` is what the wallet would hold with the money credited.
 */
export function evaluateBalanceCap(kycStatus: KycStatus, balanceAfterKesMinor: bigint, limits: Config['limits']): LimitBreach | null {
  const verified = kycStatus === 'verified';
  const tier = verified ? limits.verified : limits.unverified;
  if (balanceAfterKesMinor <= decimalToScaled(tier.balanceKes, 2)) return null;
  return {
    code: verified ? 'limit_exceeded' : 'kyc_required',
    reason: `the ${verified ? 'verified' : 'unverified'} tier allows a wallet to hold at most KES ${tier.balanceKes}`,
  };
}
