import type { Transaction } from 'sequelize';
import { Order, OrderEvent } from '../models';
import { TERMINAL_STATUSES, type OrderEventKind, type OrderStatus } from '../models/order';
import type { PaymentAccounts } from './ledger';

/** Move an order to `status` and record the event; a status is recorded once per order. */
export async function transitionOrder(
  order: Order,
  status: OrderStatus,
  tx: Transaction,
  detail: { failureCode?: string; reason?: string; railReference?: string; note?: string } = {},
): Promise<void> {
  order.status = status;
  if (detail.failureCode !== undefined) order.failureCode = detail.failureCode;
  if (detail.reason !== undefined) order.failureReason = detail.reason;
  if (detail.railReference !== undefined) order.railReference = detail.railReference;
  order.updatedAt = new Date();
  await order.save({ transaction: tx });
  const eventDetail = detail.failureCode ? `${detail.failureCode}: ${detail.reason ?? ''}`.trim() : (detail.note ?? null);
  await recordOrderEvent(order.id, status, eventDetail, tx);
}

/** Record an order event; each kind is recorded once per order. */
export async function recordOrderEvent(orderId: string, kind: OrderEventKind, detail: string | null, tx: Transaction): Promise<void> {
  await OrderEvent.sequelize!.query(
    'INSERT INTO order_events (order_id, status, detail) VALUES (:orderId, :status, :detail) ON CONFLICT (order_id, status) DO NOTHING',
    { replacements: { orderId, status: kind, detail }, transaction: tx },
  );
}

export const isTerminal = (status: OrderStatus): boolean => TERMINAL_STATUSES.includes(status);

export const ledgerAccountsOf = (order: Order): PaymentAccounts => ({
  orderId: order.id,
  userId: order.userId,
  method: order.method,
  currency: order.currency,
  amountMinor: order.amountMinor,
});
