import { formatAmount, isCurrency } from '../money';

/**
 * An event as `GET /events` lists it and a webhook delivers it (docs/events.md#events): the same `id`, `type`,
 * `created_at` and `data` either way. `data` is what the trigger that wrote the event recorded — the
 * subject's ids and state and `at` — with each `*_minor` amount also given as a decimal string in its
 * currency (`amount_minor` "150000" in KES is `amount` "1500.00"), and, for an order's events, the order's
 * amount, currency, method and reference.
 */

export interface EventBody {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** What a stored event and, for an order's event, its order hold. */
export interface StoredEvent {
  id: string;
  type: string;
  createdAt: Date | string;
  payload: Record<string, unknown>;
  order: { amountMinor: string; currency: string; method: string; reference: string | null } | null;
}

/** The event types, by family, that `GET /events?type=` takes (an exact type, or a family as `order.*`). */
export const EVENT_TYPES = [
  'order.status_changed',
  'deposit.status_changed',
  'wallet.credited',
  'appeal.opened',
  'appeal.approved',
  'appeal.rejected',
  'appeal.expired',
  'kyc.status_changed',
  'p2p.trade.created',
  'p2p.trade.locked',
  'p2p.trade.released',
  'p2p.trade.returned',
  'p2p.trade.refused',
  'p2p.ad.created',
  'p2p.ad.paused',
  'p2p.ad.resumed',
  'p2p.ad.edited',
  'p2p.ad.filled',
  'p2p.ad.closed',
  'reconciliation.break_found',
  'reconciliation.break_resolved',
  'payout_batch.created',
  'payout_batch.approved',
  'payout_batch.completed',
  'payout_batch.cancelled',
] as const;

/** `order.*` → prefix `order.`; an exact known type → itself; anything else → null (not a type filter). */
export function parseEventTypeFilter(raw: string): { exact: string } | { prefix: string } | null {
  if (raw.endsWith('.*')) {
    const prefix = raw.slice(0, -1);
    return EVENT_TYPES.some((t) => t.startsWith(prefix)) ? { prefix } : null;
  }
  return (EVENT_TYPES as readonly string[]).includes(raw) ? { exact: raw } : null;
}

/** The order facts an order's event carries, from the stored event's row (all null for other events). */
export function orderFacts(row: {
  amount_minor: string | null;
  currency: string | null;
  method: string | null;
  reference: string | null;
}): StoredEvent['order'] {
  if (row.amount_minor === null || row.currency === null || row.method === null) return null;
  return { amountMinor: row.amount_minor, currency: row.currency, method: row.method, reference: row.reference };
}

const iso = (value: unknown): unknown => (typeof value === 'string' || value instanceof Date ? new Date(value).toISOString() : value);

/** Add the decimal form of each `*_minor` amount of a payload that names its currency. */
function withDecimalAmounts(payload: Record<string, unknown>): Record<string, unknown> {
  const currency = payload.currency;
  if (typeof currency !== 'string' || !isCurrency(currency)) return payload;
  const decimals: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload)) {
    if (key.endsWith('_minor') && typeof value === 'string' && /^-?\d+$/.test(value)) {
      decimals[key.slice(0, -'_minor'.length)] = formatAmount(value, currency);
    }
  }
  return { ...payload, ...decimals };
}

export function eventBody(event: StoredEvent): EventBody {
  const data: Record<string, unknown> = withDecimalAmounts({ ...event.payload, at: iso(event.payload.at) });
  if (event.order) {
    const { amountMinor, currency, method, reference } = event.order;
    Object.assign(data, {
      amount: isCurrency(currency) ? formatAmount(amountMinor, currency) : amountMinor,
      currency,
      method,
      reference,
    });
  }
  return { id: event.id, type: event.type, created_at: new Date(event.createdAt).toISOString(), data };
}
