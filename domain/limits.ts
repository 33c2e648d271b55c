import type { Config } from '../platform/config';
import type { KycStatus } from './users';
import { decimalToScaled } from './money';

export interface LimitBreach {
  code: 'kyc_required' | 'limit_exceeded';
  reason: string;
}

/**
 * KYC tier limits (SPEC §4), in KES minor units. An unverified user over the small tier is asked to
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
