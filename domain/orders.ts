import { formatAmount, type Currency } from './money';
import { batchHoldAccount, type PaymentAccounts } from './ledger';

export const ORDER_STATUSES = ['pending', 'screening', 'processing', 'completed', 'rejected', 'failed', 'reversed'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const TERMINAL_STATUSES: readonly OrderStatus[] = ['completed', 'rejected', 'failed', 'reversed'];
/**
 * What an order event records: a status the order moved to, or `overdue` — the rail gave no definite answer
 * by the settle deadline, so the order stays `processing` with its hold while the workflow keeps asking.
 */
export type OrderEventKind = OrderStatus | 'overdue' | 'outcome_unknown';

export const PAYMENT_METHODS = ['bank_transfer', 'mobile_money', 'crypto', 'p2p'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export type Destination = Record<string, string>;

/** Every status an order can still move from. */
export const NOT_TERMINAL: readonly OrderStatus[] = ORDER_STATUSES.filter((s) => !TERMINAL_STATUSES.includes(s));
export const isTerminal = (status: OrderStatus): boolean => TERMINAL_STATUSES.includes(status);

export const ledgerAccountsOf = (order: {
  id: string;
  userId: string;
  method: string;
  currency: string;
  amountMinor: string;
  feeMinor?: string;
  payoutBatchId?: string | null;
}): PaymentAccounts => ({
  orderId: order.id,
  userId: order.userId,
  method: order.method,
  currency: order.currency,
  amountMinor: order.amountMinor,
  feeMinor: order.feeMinor,
  // An item of a bulk payout is held from its batch's hold, not from the wallet (docs/payments.md#bulk-payouts).
  ...(order.payoutBatchId ? { payer: batchHoldAccount(order.payoutBatchId) } : {}),
});

/** What the start of a payment workflow shows operators: its search attributes and its one-line summary. */
export interface OrderFacts {
  id: string;
  userId: string;
  method: PaymentMethod;
  status: OrderStatus;
  amountMinor: string;
  currency: string;
  destination: Destination;
}

const maskIdentifier = (id: string): string => (id.length > 8 ? `${id.slice(0, 5)}…${id.slice(-4)}` : id);

/** "KES 1500.00 mobile_money to +2547…5678": where the money goes, phones and accounts cut short. */
export function paymentSummary(order: OrderFacts): string {
  const d = order.destination;
  const to = d.phone
    ? maskIdentifier(d.phone)
    : d.account_number
      ? `bank ${d.bank_code ?? '?'} account ${maskIdentifier(d.account_number)}`
      : d.exchange_id
        ? `exchange ${d.exchange_id}`
        : d.ad_id
          ? `P2P ad ${d.ad_id}`
          : undefined;
  return `${order.currency} ${formatAmount(order.amountMinor, order.currency as Currency)} ${order.method}${to ? ` to ${to}` : ''}`;
}
