import { randomUUID } from 'node:crypto';
import { database } from '../../platform/database';

/**
 * An order as an unresolved payout looks (docs/payments.md#unknown-outcomes): `processing`, its request to the
 * rail gone two days ago, no answer. Written straight to the table, with no workflow and no hold, for tests of
 * who may ask to resolve one: asking touches neither.
 */
export async function strandedPayout(userId: string): Promise<string> {
  const orderId = randomUUID();
  await database().query(
    `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination, status,
                         rail, rail_client_reference, rail_submission, rail_sent_at, workflow_id, workflow_started_at)
     VALUES (:orderId, :userId, :key, 150000, 150000, 'KES', 'mobile_money', '{"provider":"mpesa","phone":"+254712345678"}',
             'processing', 'sandbox', :orderId, 'sending', now() - interval '2 days', :workflowId, now())`,
    { replacements: { orderId, userId, key: randomUUID(), workflowId: `payment-${orderId}` } },
  );
  return orderId;
}
