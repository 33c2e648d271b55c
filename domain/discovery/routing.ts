/**
 * How a bank transfer leaves Paygate (docs/payments.md#bank-routes). Every transfer goes out through the primary bank:
 * - `internal` when the destination account is at the primary bank itself;
 * - `pesalink` (instant) when the destination bank participates in PesaLink and the amount is at most
 *   KES 999,999 — PesaLink only carries shillings, so a USD transfer never takes it;
 * - `rtgs` otherwise (non-participants, larger amounts, other currencies).
 */

export const BANK_ROUTES = ['internal', 'pesalink', 'rtgs'] as const;
export type BankRoute = (typeof BANK_ROUTES)[number];

/** KES 999,999.00 in minor units: PesaLink's per-transaction ceiling. */
export const PESALINK_MAX_KES_MINOR = 99_999_900n;

export interface RouteInput {
  destinationBankCode: string;
  primaryBankCode: string;
  destinationOnPesalink: boolean;
  currency: string;
  amountMinor: bigint;
}

export function bankRoute(input: RouteInput): BankRoute {
  if (input.destinationBankCode === input.primaryBankCode) return 'internal';
  if (input.destinationOnPesalink && input.currency === 'KES' && input.amountMinor <= PESALINK_MAX_KES_MINOR) return 'pesalink';
  return 'rtgs';
}

/** The routes a payment into a bank may take, for the bank directory. */
export function routesInto(bankCode: string, primaryBankCode: string, pesalink: boolean): BankRoute[] {
  if (bankCode === primaryBankCode) return ['internal'];
  return pesalink ? ['pesalink', 'rtgs'] : ['rtgs'];
}
