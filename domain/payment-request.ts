import { z } from 'zod';
import { AppError, type FieldError } from '../platform/errors';
import { PAYMENT_METHODS, type PaymentMethod } from './orders';
import { isCurrency, parseAmount, type Currency } from './money';
import { normaliseKenyanPhone } from './phone';

/** Which currencies each method carries. */
export const METHOD_CURRENCIES: Record<PaymentMethod, readonly Currency[]> = {
  bank_transfer: ['KES', 'USD'],
  mobile_money: ['KES'],
  crypto: ['USDT', 'USDC', 'BTC', 'ETH'],
  p2p: ['KES'],
};

const bankDestination = z.strictObject({
  bank_code: z.string().regex(/^\d{2,3}$/, 'must be a 2- or 3-digit CBK bank code, e.g. "01"'),
  account_number: z.string().regex(/^\d{6,20}$/, 'must be 6 to 20 digits'),
  account_name: z.string().trim().min(2, 'must be 2 to 140 characters').max(140, 'must be 2 to 140 characters'),
});

const mobileDestination = z.strictObject({
  provider: z.enum(['mpesa', 'airtel_money'], { message: 'must be mpesa or airtel_money' }),
  phone: z.string().transform((raw, ctx) => {
    const phone = normaliseKenyanPhone(raw);
    if (!phone) {
      ctx.addIssue({ code: 'custom', message: 'must be a Kenyan phone number in E.164 form, e.g. +254712345678' });
      return z.NEVER;
    }
    return phone;
  }),
});

const cryptoDestination = z.union([
  z.strictObject({
    exchange_id: z.string().regex(/^[a-z0-9_]{2,40}$/, 'must be an exchange id, e.g. "binance"'),
    account_ref: z.string().trim().min(1, 'is required').max(120, 'must be at most 120 characters'),
  }),
  z.strictObject({
    address: z.string().regex(/^[A-Za-z0-9:_-]{20,120}$/, 'must be a wallet address'),
    network: z.string().regex(/^[A-Za-z0-9_-]{2,20}$/, 'must be a network name, e.g. "TRC20"'),
  }),
]);

const p2pDestination = z.strictObject({
  ad_id: z.uuid({ message: 'must be a UUID' }),
  payment_method: z.enum(['mpesa', 'bank_transfer', 'airtel_money']),
});

const DESTINATIONS = {
  bank_transfer: bankDestination,
  mobile_money: mobileDestination,
  crypto: cryptoDestination,
  p2p: p2pDestination,
} as const;

export interface PaymentRequestInput {
  amount: unknown;
  currency: unknown;
  method: unknown;
  destination: unknown;
  description?: unknown;
  reference?: unknown;
}

export interface ValidPaymentRequest {
  amountMinor: bigint;
  currency: Currency;
  method: PaymentMethod;
  destination: Record<string, string>;
  description: string | null;
  reference: string | null;
}

const fail = (errors: FieldError[]): never => {
  throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
};

/** Validate a payment request field by field; a failure is a 400 naming each bad field. */
export function validatePaymentRequest(input: PaymentRequestInput): ValidPaymentRequest {
  const { method, currency } = input;
  if (typeof method !== 'string' || !(PAYMENT_METHODS as readonly string[]).includes(method)) {
    fail([{ field: 'method', message: `must be one of ${PAYMENT_METHODS.join(', ')}` }]);
  }
  const m = method as PaymentMethod;
  if (typeof currency !== 'string' || !isCurrency(currency)) {
    fail([{ field: 'currency', message: 'must be a supported ISO 4217 or crypto asset code, e.g. KES, USD, USDT, BTC' }]);
  }
  const c = currency as Currency;
  if (!METHOD_CURRENCIES[m].includes(c)) {
    fail([{ field: 'currency', message: `${m} supports ${METHOD_CURRENCIES[m].join(', ')}` }]);
  }
  const amountMinor = parseAmount(input.amount, c);
  const parsed = DESTINATIONS[m].safeParse(input.destination);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => {
      const path = issue.path.length ? `destination.${issue.path.join('.')}` : 'destination';
      if (issue.code === 'invalid_union') return { field: path, message: 'must be {exchange_id, account_ref} or {address, network}' };
      if (issue.code === 'unrecognized_keys') return { field: path, message: `unexpected fields for ${m}: ${issue.keys.join(', ')}` };
      return { field: path, message: issue.message };
    });
    fail(errors);
  }
  const text = (value: unknown, field: string, max: number): string | null => {
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string' || value.length > max) fail([{ field, message: `must be a string of at most ${max} characters` }]);
    return value as string;
  };
  return {
    amountMinor,
    currency: c,
    method: m,
    destination: parsed.data as Record<string, string>,
    description: text(input.description, 'description', 280),
    reference: text(input.reference, 'reference', 64),
  };
}
