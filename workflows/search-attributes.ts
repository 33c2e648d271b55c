import { defineSearchAttributeKey, type SearchAttributePair } from '@temporalio/common';

/**
 * Paygate's Temporal search attributes (all Keyword), shared by the workflows and the code that starts
 * them. They let operators filter workflows in the Web UI, e.g. `PaygateStatus = 'failed'`.
 *
 * A namespace must know them before a workflow may carry them: `npm start` and the test stack register
 * them on the dev server, and the starters check (or register) them once per process (platform/temporal.ts).
 * A workflow started without them never upserts them, so it runs on a namespace that does not know them.
 */
export const PAYGATE_ORDER_ID = defineSearchAttributeKey('PaygateOrderId', 'KEYWORD');
export const PAYGATE_USER_ID = defineSearchAttributeKey('PaygateUserId', 'KEYWORD');
export const PAYGATE_STATUS = defineSearchAttributeKey('PaygateStatus', 'KEYWORD');
export const PAYGATE_METHOD = defineSearchAttributeKey('PaygateMethod', 'KEYWORD');
/** `true` once the settle deadline passed with no definite answer from the rail: `PaygateOverdue = 'true'`. */
export const PAYGATE_OVERDUE = defineSearchAttributeKey('PaygateOverdue', 'KEYWORD');

export const PAYGATE_SEARCH_ATTRIBUTES = [PAYGATE_ORDER_ID, PAYGATE_USER_ID, PAYGATE_STATUS, PAYGATE_METHOD, PAYGATE_OVERDUE] as const;

export interface OrderSearchFacts {
  orderId: string;
  userId?: string;
  method?: string;
  status: string;
}

/** The attributes a workflow about an order starts with. */
export function orderSearchAttributes({ orderId, userId, method, status }: OrderSearchFacts): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [
    { key: PAYGATE_ORDER_ID, value: orderId },
    { key: PAYGATE_STATUS, value: status },
  ];
  if (userId) pairs.push({ key: PAYGATE_USER_ID, value: userId });
  if (method) pairs.push({ key: PAYGATE_METHOD, value: method });
  return pairs;
}
