export const LEDGER_KINDS = ['hold', 'release', 'settle', 'reverse'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/**
 * The double-entry ledger. Each posting is one `ledger_transactions` row, unique per (order, kind), and
 * its balanced entries: posting the same kind for the same order twice is a no-op, so retries and
 * replays never move money twice. The database refuses updates, deletes and unbalanced transactions.
 *
 * Accounts: `wallet:<user_id>:<currency>` (the customer's funds, never below zero), `hold:<order_id>`
 * (funds reserved for one payment), `rail:<method>` (settlement with the payment rail). Payments held before
 * wallets existed debited `user:<user_id>`; their release or refund goes back to whichever account the hold
 * debited (`payer`).
 */

export interface LedgerLine {
  account: string;
  direction: 'debit' | 'credit';
  amountMinor: string;
}

export interface PaymentAccounts {
  orderId: string;
  userId: string;
  method: string;
  currency: string;
  amountMinor: string;
  /** The account the hold debited, when it is known: a release or refund goes back there. */
  payer?: string;
}

/** The account a payment is paid from: the payer's wallet in the payment's currency. */
export const payerWallet = (p: Pick<PaymentAccounts, 'userId' | 'currency'>): string => `wallet:${p.userId}:${p.currency}`;

export const transfer = (from: string, to: string, amountMinor: string): LedgerLine[] => [
  { account: from, direction: 'debit', amountMinor },
  { account: to, direction: 'credit', amountMinor },
];

/** The balanced lines each kind of posting makes for a payment. */
export function paymentLines(kind: LedgerKind, p: PaymentAccounts): LedgerLine[] {
  const user = p.payer ?? payerWallet(p);
  const hold = `hold:${p.orderId}`;
  const rail = `rail:${p.method}`;
  switch (kind) {
    case 'hold':
      return transfer(user, hold, p.amountMinor);
    case 'release':
      return transfer(hold, user, p.amountMinor);
    case 'settle':
      return transfer(hold, rail, p.amountMinor);
    case 'reverse':
      return transfer(rail, user, p.amountMinor);
  }
}
