import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config } from '../../platform/config';
import { formatAmount, isCurrency } from '../money';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from './signing';
import { checkWebhookTarget, WebhookTargetError } from './targets';

/**
 * The outbox's far side. `dispatchWebhookEvents` turns new `webhook_events` (written by a trigger in the
 * same transaction as the order change) into one `webhook_deliveries` row per enabled endpoint of the
 * order's owner; `deliverWebhook` sends one delivery, once per attempt, and records the attempt.
 * Delivery is at least once: a receiver that answered 2xx but whose answer we lost sees the event again
 * with the same `id`, which it uses to ignore the repeat.
 */

export type WebhookSettings = Config['webhooks'];

export interface WebhookEventBody {
  id: string;
  type: string;
  created_at: string;
  data: {
    order_id: string;
    status: string;
    detail: string | null;
    at: string;
    failure_code: string | null;
    failure_reason: string | null;
    rail_reference: string | null;
    amount: string;
    currency: string;
    method: string;
    reference: string | null;
  };
}

/** Fan new events out to the endpoints registered when they happened; returns how many deliveries were created. */
export async function dispatchWebhookEvents(sequelize: Sequelize, batch = 500): Promise<number> {
  const rows = await sequelize.query<{ id: string }>(
    `WITH claimed AS (
       SELECT id FROM webhook_events WHERE dispatched_at IS NULL ORDER BY created_at LIMIT :batch FOR UPDATE SKIP LOCKED
     ), marked AS (
       UPDATE webhook_events e SET dispatched_at = now() FROM claimed WHERE e.id = claimed.id
       RETURNING e.id, e.user_id, e.created_at
     )
     INSERT INTO webhook_deliveries (event_id, endpoint_id)
     SELECT m.id, w.id FROM marked m
       JOIN webhook_endpoints w ON w.user_id = m.user_id AND w.enabled AND w.created_at <= m.created_at
     ON CONFLICT (event_id, endpoint_id) DO NOTHING
     RETURNING id`,
    { replacements: { batch }, type: QueryTypes.SELECT },
  );
  return rows.length;
}

/** Deliveries still owed to their endpoints, oldest first. */
export async function pendingDeliveryIds(sequelize: Sequelize, limit = 1000): Promise<string[]> {
  const rows = await sequelize.query<{ id: string }>(
    `SELECT id FROM webhook_deliveries WHERE status = 'pending' ORDER BY id LIMIT :limit`,
    { replacements: { limit }, type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.id);
}

interface DeliveryRow {
  id: string;
  status: string;
  attempts: number;
  enabled: boolean;
  url: string;
  secret: string;
  event_id: string;
  type: string;
  event_created_at: Date;
  payload: Omit<WebhookEventBody['data'], 'amount' | 'currency' | 'method' | 'reference'>;
  amount_minor: string;
  currency: string;
  method: string;
  reference: string | null;
}

export function webhookBody(
  row: Pick<DeliveryRow, 'event_id' | 'type' | 'event_created_at' | 'payload' | 'amount_minor' | 'currency' | 'method' | 'reference'>,
): string {
  const amount = isCurrency(row.currency) ? formatAmount(row.amount_minor, row.currency) : row.amount_minor;
  const body: WebhookEventBody = {
    id: row.event_id,
    type: row.type,
    created_at: new Date(row.event_created_at).toISOString(),
    data: {
      ...row.payload,
      at: new Date(row.payload.at).toISOString(),
      amount,
      currency: row.currency,
      method: row.method,
      reference: row.reference,
    },
  };
  return JSON.stringify(body);
}

export type DeliveryResult = 'delivered' | 'skipped' | 'refused';

export class WebhookDeliveryFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookDeliveryFailed';
  }
}

/**
 * Send one delivery. Answers `delivered`, `skipped` (already settled) or `refused` (the target is not
 * allowed: given up, never retried); throws WebhookDeliveryFailed when the receiver did not answer 2xx,
 * after marking the delivery `failed` if this was the last attempt.
 */
export async function deliverWebhook(
  sequelize: Sequelize,
  settings: WebhookSettings,
  deliveryId: string,
  lastAttempt: boolean,
  fetchImpl: typeof fetch = fetch,
): Promise<DeliveryResult> {
  const [row] = await sequelize.query<DeliveryRow>(
    `SELECT d.id, d.status, d.attempts, w.enabled, w.url, w.secret, e.id AS event_id, e.type,
            e.created_at AS event_created_at, e.payload, o.amount_minor, o.currency, o.method, o.reference
       FROM webhook_deliveries d
       JOIN webhook_endpoints w ON w.id = d.endpoint_id
       JOIN webhook_events e ON e.id = d.event_id
       JOIN orders o ON o.id = e.order_id
      WHERE d.id = :deliveryId`,
    { replacements: { deliveryId }, type: QueryTypes.SELECT },
  );
  if (!row || row.status !== 'pending') return 'skipped';
  const started = Date.now();
  const record = async (outcome: { statusCode: number | null; error: string | null; final: 'delivered' | 'failed' | 'pending' }) => {
    const entry = {
      attempt: row.attempts + 1,
      at: new Date(started).toISOString(),
      status_code: outcome.statusCode,
      error: outcome.error,
      duration_ms: Date.now() - started,
    };
    await sequelize.query(
      `UPDATE webhook_deliveries
          SET attempts = attempts + 1, last_status_code = :statusCode, last_error = :error, status = :final,
              attempt_log = attempt_log || :entry::jsonb, updated_at = now(),
              delivered_at = CASE WHEN :final = 'delivered' THEN now() END
        WHERE id = :deliveryId AND status = 'pending'`,
      { replacements: { ...outcome, entry: JSON.stringify([entry]), deliveryId } },
    );
  };
  if (!row.enabled) {
    await record({ statusCode: null, error: 'the endpoint was disabled', final: 'failed' });
    return 'refused';
  }
  try {
    await checkWebhookTarget(row.url, settings.allowPrivateTargets);
  } catch (err) {
    if (!(err instanceof WebhookTargetError)) throw err;
    await record({ statusCode: null, error: `target refused: ${err.message}`, final: 'failed' });
    return 'refused';
  }
  const body = webhookBody(row);
  let statusCode: number | null = null;
  let error: string;
  try {
    const res = await fetchImpl(row.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Paygate-Webhooks/1',
        [EVENT_ID_HEADER]: row.event_id,
        [SIGNATURE_HEADER]: signWebhook(row.secret, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    statusCode = res.status;
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) {
      await record({ statusCode, error: null, final: 'delivered' });
      return 'delivered';
    }
    error = `the receiver answered ${res.status}`;
  } catch (err) {
    error = (err as Error).message;
  }
  await record({ statusCode, error, final: lastAttempt ? 'failed' : 'pending' });
  throw new WebhookDeliveryFailed(error);
}
