import { transfer, type LedgerLine } from './ledger';
import type { Currency } from './money';
import type { PaymentMethod } from './orders';

/**
 * Wallets and money in (docs/wallets.md#money-in), as pure rules. A wallet is the ledger account
 * `wallet:<user_id>:<currency>`; money in is a deposit, posted from the rail it came through
 * (`rail:<method>`, the platform's money at that rail) to the wallet, or to a suspense account while it
 * cannot be credited yet: `suspense:compliance` for a payer on the blocklist, `suspense:unmatched` for a
 * reference nobody has, `suspense:limits` for money that would take a wallet over its KYC tier's cap.
 */

export const DEPOSIT_CHANNELS = ['mpesa_stk', 'mpesa_c2b', 'bank_transfer', 'crypto'] as const;
export type DepositChannel = (typeof DEPOSIT_CHANNELS)[number];

/** `float`: the operator's own top-up of a rail account, owned by nobody and posted to `operator:float`. */
export const DEPOSIT_STATUSES = ['pending', 'completed', 'failed', 'held', 'unmatched', 'float'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

export const DEPOSIT_KINDS = ['deposit', 'deposit_held', 'deposit_released'] as const;
export type DepositKind = (typeof DEPOSIT_KINDS)[number];

export const SUSPENSE_COMPLIANCE = 'suspense:compliance';
export const SUSPENSE_UNMATCHED = 'suspense:unmatched';
/** Money that would take a wallet over its KYC tier's cap waits here. */
export const SUSPENSE_LIMITS = 'suspense:limits';
/** The operator's own money at the rails (its float), apart from what customers are owed. */
export const OPERATOR_FLOAT = 'operator:float';
export type SuspenseAccount = typeof SUSPENSE_COMPLIANCE | typeof SUSPENSE_UNMATCHED | typeof SUSPENSE_LIMITS;

/** The crypto assets a wallet holds and the exchange account takes deposits of. */
export const CRYPTO_ASSETS = ['USDT', 'USDC', 'BTC', 'ETH'] as const satisfies readonly Currency[];
export type CryptoAsset = (typeof CRYPTO_ASSETS)[number];
export const isCryptoAsset = (value: string): value is CryptoAsset => (CRYPTO_ASSETS as readonly string[]).includes(value);

export const walletAccount = (userId: string, currency: string): string => `wallet:${userId}:${currency}`;

/** The payment method whose rail account a channel's money arrives at. */
export function railMethodOf(channel: DepositChannel): PaymentMethod {
  switch (channel) {
    case 'mpesa_stk':
    case 'mpesa_c2b':
      return 'mobile_money';
    case 'bank_transfer':
      return 'bank_transfer';
    case 'crypto':
      return 'crypto';
  }
}

/** A deposit reference: "PG" and ten Crockford base32 characters (the database makes them). */
export const DEPOSIT_REFERENCE_PATTERN = /PG[0-9A-HJKMNP-TV-Z]{10}/;

/** A deposit reference as users type it: trimmed, upper-cased, spaces and dashes dropped. */
export const normaliseDepositReference = (raw: string): string =>
  raw
    .trim()
    .toUpperCase()
    .replace(/[\s-]+/g, '');

export interface DepositPosting {
  channel: DepositChannel;
  /** The wallet's owner; null while the deposit is unmatched. */
  userId: string | null;
  currency: Currency;
  amountMinor: string;
}

/**
 * The balanced lines of each deposit posting: `deposit` credits the wallet from the rail, `deposit_held`
 * parks the money in suspense, and `deposit_released` moves it from that suspense account to the wallet.
 */
export function depositLines(kind: DepositKind, d: DepositPosting, suspense: SuspenseAccount = SUSPENSE_UNMATCHED): LedgerLine[] {
  const rail = `rail:${railMethodOf(d.channel)}`;
  if (kind === 'deposit_held') return transfer(rail, suspense, d.amountMinor);
  if (d.userId === null) throw new Error(`a ${kind} posting needs the wallet's owner`);
  const wallet = walletAccount(d.userId, d.currency);
  return kind === 'deposit' ? transfer(rail, wallet, d.amountMinor) : transfer(suspense, wallet, d.amountMinor);
}
