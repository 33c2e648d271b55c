import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config } from '../platform/config';
import { formatAmount, isCurrency } from '../domain/money';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from '../domain/webhooks/signing';
import { vetWebhookTarget, WebhookTargetError, type TargetPolicy, type VettedTarget } from '../connectors/webhook-targets';
import { postToVettedTarget } from '../connectors/webhook-transport';

/**
 * The outbox's far side. `dispatchWebhookEvents` turns new `webhook_events` (written by a trigger in the
 * same transaction as the order change) into one `webhook_deliveries` row per enabled endpoint of the
 * order's owner; `claimDueDeliveries` takes the deliveries that are due, a few per endpoint at a time;
 * `deliverWebhook` makes one attempt of one delivery and records it, with the time of the next one.
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

export interface ClaimedDelivery {
  id: string;
  /** Attempts made before this one: the job id is the delivery id and this, so one attempt has one job. */
  attempts: number;
}

/**
 * Take deliveries that are due, oldest first, at most `maxInFlight` per endpoint counting those already
 * taken (queued or being sent): a receiver that never answers holds its own slots until WEBHOOK_TIMEOUT_MS,
 * never the whole worker. Each taken delivery is leased for `leaseMs`; an attempt clears the lease when
 * it ends, and a lease that runs out (its jobs process and its queue lost) makes the delivery due again.
 * The endpoints' rows are locked while their slots are counted and taken, so jobs processes sweeping at
 * the same time never take more than the limit between them; one that is locked is left to its holder.
 */
export async function claimDueDeliveries(
  sequelize: Sequelize,
  options: { maxInFlight: number; leaseMs: number; limit?: number; endpointId?: string },
): Promise<ClaimedDelivery[]> {
  return sequelize.transaction(async (transaction) => {
    const endpoints = await sequelize.query<{ id: string }>(
      `SELECT w.id FROM webhook_endpoints w
        WHERE (CAST(:endpointId AS uuid) IS NULL OR w.id = CAST(:endpointId AS uuid))
          AND EXISTS (SELECT 1 FROM webhook_deliveries d
                       WHERE d.endpoint_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= now())
        FOR NO KEY UPDATE OF w SKIP LOCKED`,
      { replacements: { endpointId: options.endpointId ?? null }, type: QueryTypes.SELECT, transaction },
    );
    if (endpoints.length === 0) return [];
    return sequelize.query<ClaimedDelivery>(
      `UPDATE webhook_deliveries d SET leased_until = now() + CAST(:leaseMs AS integer) * interval '1 millisecond'
         FROM (
           SELECT c.id FROM unnest(CAST(ARRAY[:endpointIds] AS uuid[])) AS w(id)
           CROSS JOIN LATERAL (
             SELECT p.id FROM webhook_deliveries p
              WHERE p.endpoint_id = w.id AND p.status = 'pending' AND p.next_attempt_at <= now()
                AND (p.leased_until IS NULL OR p.leased_until <= now())
              ORDER BY p.id
              LIMIT greatest(CAST(:maxInFlight AS integer) - (
                SELECT count(*) FROM webhook_deliveries h
                 WHERE h.endpoint_id = w.id AND h.status = 'pending' AND h.leased_until > now()), 0)
           ) c
           ORDER BY c.id LIMIT :limit
         ) chosen
        WHERE d.id = chosen.id
       RETURNING d.id, d.attempts`,
      {
        replacements: {
          endpointIds: endpoints.map((e) => e.id),
          maxInFlight: options.maxInFlight,
          leaseMs: options.leaseMs,
          limit: options.limit ?? 1000,
        },
        type: QueryTypes.SELECT,
        transaction,
      },
    );
  });
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
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

export type DeliveryOutcome = 'delivered' | 'skipped' | 'refused' | 'retrying' | 'failed';

export interface DeliveryResult {
  outcome: DeliveryOutcome;
  endpointId: string | null;
  error?: string;
}

/** How long an attempt keeps its delivery's lease beyond WEBHOOK_TIMEOUT_MS, for the bookkeeping around the call. */
const ATTEMPT_LEASE_MARGIN_MS = 30_000;

/**
 * Make attempt number `attempt + 1` of one delivery, if it is still pending and no other attempt came
 * first. Answers `delivered`; `skipped` (settled, or that attempt was made already); `refused` (the
 * target is not allowed: given up, never retried); `retrying` (no 2xx, a later attempt is due after
 * WEBHOOK_BACKOFF_MS doubling) or `failed` (no 2xx at the last of WEBHOOK_MAX_ATTEMPTS attempts).
 * The target is resolved once and the request goes to the addresses that were checked.
 */
export async function deliverWebhook(
  sequelize: Sequelize,
  settings: WebhookSettings,
  deliveryId: string,
  attempt?: number,
  network: Omit<TargetPolicy, 'allowPrivate'> = {},
): Promise<DeliveryResult> {
  const [row] = await sequelize.query<DeliveryRow>(
    `SELECT d.id, d.endpoint_id, d.status, d.attempts, w.enabled, w.url, w.secret, e.id AS event_id, e.type,
            e.created_at AS event_created_at, e.payload, o.amount_minor, o.currency, o.method, o.reference
       FROM webhook_deliveries d
       JOIN webhook_endpoints w ON w.id = d.endpoint_id
       JOIN webhook_events e ON e.id = d.event_id
       JOIN orders o ON o.id = e.order_id
      WHERE d.id = :deliveryId`,
    { replacements: { deliveryId }, type: QueryTypes.SELECT },
  );
  if (!row || row.status !== 'pending' || (attempt !== undefined && row.attempts !== attempt)) {
    return { outcome: 'skipped', endpointId: row?.endpoint_id ?? null };
  }
  const endpointId = row.endpoint_id;
  await sequelize.query(
    `UPDATE webhook_deliveries SET leased_until = now() + CAST(:leaseMs AS integer) * interval '1 millisecond'
      WHERE id = :deliveryId AND status = 'pending' AND attempts = :attempts`,
    { replacements: { deliveryId, attempts: row.attempts, leaseMs: settings.timeoutMs + ATTEMPT_LEASE_MARGIN_MS } },
  );
  const started = Date.now();
  const lastAttempt = row.attempts + 1 >= settings.maxAttempts;
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
              attempt_log = attempt_log || :entry::jsonb, updated_at = now(), leased_until = NULL,
              next_attempt_at = now() + CAST(:backoffMs AS bigint) * interval '1 millisecond',
              delivered_at = CASE WHEN :final = 'delivered' THEN now() END
        WHERE id = :deliveryId AND status = 'pending' AND attempts = :attempts`,
      {
        replacements: {
          ...outcome,
          entry: JSON.stringify([entry]),
          deliveryId,
          attempts: row.attempts,
          backoffMs: settings.backoffMs * 2 ** Math.min(row.attempts, 30),
        },
      },
    );
  };
  if (!row.enabled) {
    await record({ statusCode: null, error: 'the endpoint was disabled', final: 'failed' });
    return { outcome: 'refused', endpointId };
  }
  let target: VettedTarget;
  try {
    target = await vetWebhookTarget(row.url, { allowPrivate: settings.allowPrivateTargets, ...network });
  } catch (err) {
    if (!(err instanceof WebhookTargetError)) throw err;
    await record({ statusCode: null, error: `target refused: ${err.message}`, final: 'failed' });
    return { outcome: 'refused', endpointId, error: err.message };
  }
  const body = webhookBody(row);
  let statusCode: number | null = null;
  let error: string;
  try {
    const answer = await postToVettedTarget(target, {
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Paygate-Webhooks/1',
        [EVENT_ID_HEADER]: row.event_id,
        [SIGNATURE_HEADER]: signWebhook(row.secret, body),
      },
      body,
      timeoutMs: settings.timeoutMs,
    });
    statusCode = answer.statusCode;
    if (statusCode >= 200 && statusCode < 300) {
      await record({ statusCode, error: null, final: 'delivered' });
      return { outcome: 'delivered', endpointId };
    }
    error = `the receiver answered ${statusCode}`;
  } catch (err) {
    error = (err as Error).message;
  }
  await record({ statusCode, error, final: lastAttempt ? 'failed' : 'pending' });
  return { outcome: lastAttempt ? 'failed' : 'retrying', endpointId, error };
}
