import { AppError, type FieldError } from '../../platform/errors';
import { CURRENCY_SCALE, decimalToScaled, formatAmount, parseAmount } from '../money';

/**
 * P2P ads (docs/p2p.md#ads). Prices are KES cents per whole unit of the asset; `min_order` and `max_order` are
 * fiat (KES) amounts; `total_amount` and `available_amount` are asset amounts. A floating price is a
 * margin (percent) over the configured reference price of the asset.
 */

export const AD_SIDES = ['buy', 'sell'] as const;
export const AD_ASSETS = ['USDT', 'BTC', 'ETH', 'USDC'] as const;
export const AD_FIATS = ['KES'] as const;
export const AD_PAYMENT_METHODS = ['mpesa', 'bank_transfer', 'airtel_money'] as const;
export const AD_STATUSES = ['active', 'paused', 'closed'] as const;

export type AdSide = (typeof AD_SIDES)[number];
export type AdAsset = (typeof AD_ASSETS)[number];
export type AdPaymentMethod = (typeof AD_PAYMENT_METHODS)[number];
export type AdStatus = (typeof AD_STATUSES)[number];
export type PriceType = 'fixed' | 'floating';

const oneOf = <T extends string>(values: readonly T[], value: unknown): value is T =>
  typeof value === 'string' && (values as readonly string[]).includes(value);

/** KES cents per whole unit of each asset, from `CODE=RATE` config pairs. */
export function referencePricesMinor(referencePricesKes: Record<string, string>): Record<AdAsset, bigint> {
  const out = {} as Record<AdAsset, bigint>;
  for (const asset of AD_ASSETS) {
    const rate = referencePricesKes[asset];
    if (!rate) throw new Error(`no P2P reference price configured for ${asset}`);
    out[asset] = decimalToScaled(rate, CURRENCY_SCALE.KES);
  }
  return out;
}

const MARGIN = /^[+-]?\d{1,3}(\.\d{1,2})?$/;
const MARGIN_SCALE = 100n;

/** Margin "-1.5" → -150 (hundredths of a percent). */
export const marginHundredths = (margin: string): bigint => {
  const negative = margin.startsWith('-');
  const [whole, fraction = ''] = margin.replace(/^[+-]/, '').split('.');
  const value = BigInt(whole + fraction.padEnd(2, '0'));
  return negative ? -value : value;
};

/** The price a floating ad trades at: the reference price with the margin, rounded half up to a cent. */
export function floatingPriceMinor(referenceMinor: bigint, marginPct: string): bigint {
  const numerator = referenceMinor * (100n * MARGIN_SCALE + marginHundredths(marginPct));
  const denominator = 100n * MARGIN_SCALE;
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/** The fiat value (KES cents) of an asset amount at a price, rounded down. */
export function fiatValueMinor(assetMinor: bigint, priceMinor: bigint, asset: AdAsset): bigint {
  return (assetMinor * priceMinor) / 10n ** BigInt(CURRENCY_SCALE[asset]);
}

/** How much of the asset a fiat amount buys at a price, rounded down to the asset's scale. */
export function assetForFiatMinor(fiatMinor: bigint, priceMinor: bigint, asset: AdAsset): bigint {
  return (fiatMinor * 10n ** BigInt(CURRENCY_SCALE[asset])) / priceMinor;
}

export interface AdInput {
  side: unknown;
  asset: unknown;
  fiat?: unknown;
  price_type: unknown;
  price?: unknown;
  price_margin_pct?: unknown;
  total_amount: unknown;
  min_order: unknown;
  max_order: unknown;
  payment_methods: unknown;
  terms?: unknown;
}

export interface ValidAd {
  side: AdSide;
  asset: AdAsset;
  fiat: 'KES';
  priceType: PriceType;
  priceMinor: bigint | null;
  priceMarginPct: string | null;
  totalAmountMinor: bigint;
  minOrderMinor: bigint;
  maxOrderMinor: bigint;
  paymentMethods: AdPaymentMethod[];
  terms: string | null;
}

/** Validate an ad field by field (each bad field named in the 400), then min ≤ max ≤ total × price. */
export function validateAd(input: AdInput, referenceMinor: Record<AdAsset, bigint>): ValidAd {
  const errors: FieldError[] = [];
  const attempt = <T>(field: string, parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (err) {
      if (err instanceof AppError) errors.push(...(err.options.errors ?? [{ field, message: err.message }]));
      else throw err;
      return undefined;
    }
  };
  if (!oneOf(AD_SIDES, input.side)) errors.push({ field: 'side', message: 'must be buy or sell' });
  if (!oneOf(AD_ASSETS, input.asset)) errors.push({ field: 'asset', message: `must be one of ${AD_ASSETS.join(', ')}` });
  const fiat = input.fiat ?? 'KES';
  if (!oneOf(AD_FIATS, fiat)) errors.push({ field: 'fiat', message: 'must be KES' });
  if (input.price_type !== 'fixed' && input.price_type !== 'floating') {
    errors.push({ field: 'price_type', message: 'must be fixed or floating' });
  }
  const asset = oneOf(AD_ASSETS, input.asset) ? input.asset : undefined;

  let priceMinor: bigint | null = null;
  let priceMarginPct: string | null = null;
  if (input.price_type === 'fixed') {
    if (input.price_margin_pct !== undefined) errors.push({ field: 'price_margin_pct', message: 'only for floating prices' });
    priceMinor = attempt('price', () => parseAmount(input.price, 'KES', 'price')) ?? null;
  } else if (input.price_type === 'floating') {
    if (input.price !== undefined) errors.push({ field: 'price', message: 'only for fixed prices; use price_margin_pct' });
    const margin = input.price_margin_pct;
    if (typeof margin !== 'string' || !MARGIN.test(margin) || marginHundredths(margin) <= -100n * MARGIN_SCALE) {
      errors.push({ field: 'price_margin_pct', message: 'must be a percentage above -100 with at most 2 decimals, e.g. "1.5" or "-0.75"' });
    } else {
      priceMarginPct = margin;
    }
  }
  const total = asset ? attempt('total_amount', () => parseAmount(input.total_amount, asset, 'total_amount')) : undefined;
  const min = attempt('min_order', () => parseAmount(input.min_order, 'KES', 'min_order'));
  const max = attempt('max_order', () => parseAmount(input.max_order, 'KES', 'max_order'));
  const methods = input.payment_methods;
  if (
    !Array.isArray(methods) ||
    methods.length === 0 ||
    !methods.every((m) => oneOf(AD_PAYMENT_METHODS, m)) ||
    new Set(methods).size !== methods.length
  ) {
    errors.push({ field: 'payment_methods', message: `must be a non-empty list of distinct ${AD_PAYMENT_METHODS.join(', ')}` });
  }
  let terms: string | null = null;
  if (input.terms !== undefined && input.terms !== null) {
    if (typeof input.terms !== 'string' || input.terms.length > 1000)
      errors.push({ field: 'terms', message: 'must be at most 1000 characters' });
    else terms = input.terms;
  }

  if (min !== undefined && max !== undefined && min > max) {
    errors.push({ field: 'min_order', message: 'must not exceed max_order' });
  }
  const price = priceMinor ?? (asset && priceMarginPct !== null ? floatingPriceMinor(referenceMinor[asset], priceMarginPct) : undefined);
  if (asset && total !== undefined && max !== undefined && price !== undefined) {
    const worth = fiatValueMinor(total, price, asset);
    if (max > worth) {
      errors.push({ field: 'max_order', message: `must not exceed total_amount × price (${formatAmount(worth, 'KES')} KES)` });
    }
  }
  if (errors.length > 0) {
    throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  }
  return {
    side: input.side as AdSide,
    asset: asset!,
    fiat: 'KES',
    priceType: input.price_type as PriceType,
    priceMinor,
    priceMarginPct,
    totalAmountMinor: total!,
    minOrderMinor: min!,
    maxOrderMinor: max!,
    paymentMethods: methods as AdPaymentMethod[],
    terms,
  };
}
