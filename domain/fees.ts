import { decimalToScaled, fromKesMinor, type Currency } from './money';
import type { Config } from '../platform/config';
import type { PaymentMethod } from './orders';

/**
 * What a payment costs its payer on top of its amount (docs/wallets.md#fees): per method, a flat part set in KES and a
 * percentage of the amount, both from the configuration and zero by default. A P2P trade has no fee.
 */

const PERCENT_SCALE = 4;

/**
 * The fee on a payment of `amountMinor`, in the payment's currency (minor units): the flat part plus the
 * percentage of the amount, each rounded up to the currency's minor unit.
 */
export function feeFor(
  method: PaymentMethod,
  amountMinor: bigint,
  currency: Currency,
  fees: Config['fees'],
  ratesToKes: Record<string, string>,
): bigint {
  if (method === 'p2p') return 0n;
  const schedule = fees[method];
  const flatKesMinor = decimalToScaled(schedule.flatKes, 2);
  const flat = flatKesMinor > 0n ? fromKesMinor(flatKesMinor, currency, ratesToKes) : 0n;
  const denominator = 100n * 10n ** BigInt(PERCENT_SCALE);
  const proportional = (amountMinor * decimalToScaled(schedule.percent, PERCENT_SCALE) + denominator - 1n) / denominator;
  return flat + proportional;
}
