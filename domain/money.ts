import { validationError } from '../platform/errors';

/**
 * Money is an integer count of minor units (BigInt) plus a currency. It is parsed from and rendered to
 * decimal strings with the currency's scale, and stored as NUMERIC. No float ever touches an amount.
 */

export const CURRENCY_SCALE = {
  KES: 2,
  USD: 2,
  USDT: 6,
  USDC: 6,
  BTC: 8,
  ETH: 18,
} as const;

export type Currency = keyof typeof CURRENCY_SCALE;
export const CURRENCIES = Object.keys(CURRENCY_SCALE) as Currency[];

export const isCurrency = (value: string): value is Currency => Object.hasOwn(CURRENCY_SCALE, value);

const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/**
 * At most 15 digits before the decimal point (under a quadrillion of any currency). Amounts are stored as
 * NUMERIC(38, 0) minor units: 15 whole digits plus ETH's 18 decimals is 33 digits, and the figures derived
 * from an amount (its KES equivalent, price × amount of a P2P trade) stay within 38 as well. Beyond that
 * the database would refuse the row: the input is refused here instead, as a 400 naming the field.
 */
export const MAX_WHOLE_DIGITS = 15;

/** Parse a positive decimal amount in a currency; `field` names the input in validation errors. */
export function parseAmount(raw: unknown, currency: Currency, field = 'amount'): bigint {
  if (typeof raw !== 'string') throw validationError(field, 'must be a decimal string, e.g. "1500.00"');
  const match = DECIMAL.exec(raw.trim());
  if (!match) throw validationError(field, 'must be a positive decimal string, e.g. "1500.00"');
  if (match[1].length > MAX_WHOLE_DIGITS) {
    throw validationError(field, `must be less than 10^${MAX_WHOLE_DIGITS} (at most ${MAX_WHOLE_DIGITS} digits before the decimal point)`);
  }
  const scale = CURRENCY_SCALE[currency];
  const fraction = match[2] ?? '';
  if (fraction.length > scale) {
    throw validationError(field, `${currency} allows at most ${scale} decimal places`);
  }
  const minor = BigInt(match[1] + fraction.padEnd(scale, '0'));
  if (minor <= 0n) throw validationError(field, 'must be greater than zero');
  return minor;
}

/** Render minor units as a decimal string with the currency's scale. */
export function formatAmount(minor: bigint | string, currency: Currency): string {
  const value = BigInt(minor);
  const scale = CURRENCY_SCALE[currency];
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale);
  return `${negative ? '-' : ''}${whole}${scale > 0 ? `.${fraction}` : ''}`;
}

/** The fractional part of an amount as a string of the currency's scale ("13" for "1500.13" KES). */
export function fractionDigits(minor: bigint | string, currency: Currency): string {
  const formatted = formatAmount(minor, currency);
  return formatted.includes('.') ? formatted.split('.')[1] : '';
}

/** Parse a plain decimal (config values, FX rates) into a scaled BigInt with `scale` decimals. */
export function decimalToScaled(value: string, scale: number): bigint {
  const [whole, fraction = ''] = value.split('.');
  return BigInt((whole ?? '0') + fraction.padEnd(scale, '0').slice(0, scale));
}

/**
 * A provider's plain decimal string ("25.12345600", "0") in minor units of `scale`, exactly: null when it is
 * not a plain non-negative decimal, or when it has non-zero digits beyond the scale (never rounded away).
 */
export function exactMinor(value: string | null | undefined, scale: number): bigint | null {
  const match = typeof value === 'string' ? /^(\d{1,24})(?:\.(\d+))?$/.exec(value.trim()) : null;
  if (!match) return null;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > scale) return null;
  return BigInt(match[1]) * 10n ** BigInt(scale) + BigInt(fraction.padEnd(scale, '0') || '0');
}

const FX_SCALE = 8;

/**
 * Convert an amount into KES minor units (cents) using configured reference rates (units of KES per
 * unit of currency), rounding up so that limits are never undercounted.
 */
export function toKesMinor(minor: bigint, currency: Currency, ratesToKes: Record<string, string>): bigint {
  if (currency === 'KES') return minor;
  const rate = ratesToKes[currency];
  if (!rate) throw new Error(`no FX rate to KES configured for ${currency}`);
  const rateScaled = decimalToScaled(rate, FX_SCALE);
  const numerator = minor * rateScaled * 10n ** BigInt(CURRENCY_SCALE.KES);
  const denominator = 10n ** BigInt(CURRENCY_SCALE[currency] + FX_SCALE);
  return (numerator + denominator - 1n) / denominator;
}

/**
 * Convert KES minor units into minor units of `currency` at the configured reference rate, rounding up
 * (a flat fee set in KES is never undercharged in another currency).
 */
export function fromKesMinor(kesMinor: bigint, currency: Currency, ratesToKes: Record<string, string>): bigint {
  if (currency === 'KES') return kesMinor;
  const rate = ratesToKes[currency];
  if (!rate) throw new Error(`no FX rate to KES configured for ${currency}`);
  const numerator = kesMinor * 10n ** BigInt(CURRENCY_SCALE[currency] + FX_SCALE);
  const denominator = decimalToScaled(rate, FX_SCALE) * 10n ** BigInt(CURRENCY_SCALE.KES);
  return (numerator + denominator - 1n) / denominator;
}
