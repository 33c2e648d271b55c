export const LEDGER_KINDS = ['hold', 'release', 'settle', 'reverse'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/**
 * The double-entry ledger. Each posting is one `ledger_transactions` row, unique per (order, kind), and
 * its balanced entries: posting the same kind for the same order twice is a no-op, so retries and
 * replays never move money twice. The database refuses updates, deletes and unbalanced transactions.
 *
 * Accounts: `wallet:<user_id>:<currency>` (the customer's funds, never below zero), `hold:<order_id>`
 * (funds reserved for one payment: its amount and fee), `rail:<method>` (settlement with the payment rail),
 * `revenue:fees` (what the platform earned in fees), `expense:refunds` (what the operator paid back to payers
 * out of its own funds: no money comes back from a rail). Payments held before
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
  /** The payment's fee (minor units, default none): held with the amount, and paid to `revenue:fees` at settlement. */
  feeMinor?: string;
  /** The account the hold debited, when it is known: a release or refund goes back there. */
  payer?: string;
}

/** The account a payment is paid from: the payer's wallet in the payment's currency. */
export const payerWallet = (p: Pick<PaymentAccounts, 'userId' | 'currency'>): string => `wallet:${p.userId}:${p.currency}`;

/** What a bulk payout holds from the payer's wallet at once; each item's order is held from here (docs/payments.md#bulk-payouts). */
export const batchHoldAccount = (batchId: string): string => `hold:batch:${batchId}`;

/** A bulk payout's own postings: its total and fees held at once, and what is left given back when it ends. */
export const BATCH_HOLD = 'batch_hold';
export const BATCH_RELEASE = 'batch_release';
/** A failed or rejected item's share (amount and fee) given back from its batch's hold, once per item's order. */
export const BATCH_RETURN = 'batch_return';

export const transfer = (from: string, to: string, amountMinor: string): LedgerLine[] => [
  { account: from, direction: 'debit', amountMinor },
  { account: to, direction: 'credit', amountMinor },
];

/** Where fees are earned. */
export const FEE_REVENUE = 'revenue:fees';

/**
 * What refunds cost the operator. A refund credits the payer without any money coming back from the rail
 * the payment left by, so it never touches `rail:<method>` (docs/appeals.md#refunds).
 */
export const EXPENSE_REFUNDS = 'expense:refunds';

/**
 * The operator's own money at the rails: the opening float and every top-up (debit `rail:<method>`, credit
 * this), so that a rail's balance is explained by the ledger (docs/wallets.md#float-reconciliation).
 */
export const OPERATOR_FLOAT = 'operator:float';

/** What the providers charged (a bank's transfer fee on the statement): debit this, credit `rail:<method>`. */
export const EXPENSE_RAIL_FEES = 'expense:rail_fees';

/**
 * The balanced lines each kind of posting makes for a payment. The hold and its release move the amount
 * plus the fee; settlement pays the amount to the rail and the fee to `revenue:fees`; a reversal mirrors
 * the settlement.
 */
export function paymentLines(kind: LedgerKind, p: PaymentAccounts): LedgerLine[] {
  const user = p.payer ?? payerWallet(p);
  const hold = `hold:${p.orderId}`;
  const rail = `rail:${p.method}`;
  const fee = BigInt(p.feeMinor ?? '0');
  const total = (BigInt(p.amountMinor) + fee).toString();
  const feeLine = (direction: LedgerLine['direction']): LedgerLine[] =>
    fee > 0n ? [{ account: FEE_REVENUE, direction, amountMinor: fee.toString() }] : [];
  switch (kind) {
    case 'hold':
      return transfer(user, hold, total);
    case 'release':
      return transfer(hold, user, total);
    case 'settle':
      return [
        { account: hold, direction: 'debit', amountMinor: total },
        { account: rail, direction: 'credit', amountMinor: p.amountMinor },
        ...feeLine('credit'),
      ];
    case 'reverse':
      return [
        { account: rail, direction: 'debit', amountMinor: p.amountMinor },
        ...feeLine('debit'),
        { account: user, direction: 'credit', amountMinor: total },
      ];
  }
}
