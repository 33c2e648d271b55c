import type { Config } from '../platform/config';
import { eventBody, orderFacts } from '../domain/webhooks/events';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from '../domain/webhooks/signing';
import { vetWebhookTarget, WebhookTargetError, type TargetPolicy, type VettedTarget } from '../connectors/webhook-targets';
import { postToVettedTarget } from '../connectors/webhook-transport';
import {
  dispatchEvents,
  findDelivery,
  leaseDueDeliveries,
  leaseForAttempt,
  pruneEvents,
  recordAttempt,
  type ClaimedDelivery,
  type DeliveryRow,
} from '../repositories/webhooks';

/**
 * The outbox's far side. `dispatchWebhookEvents` turns new `webhook_events` (written by a trigger in the
 * same transaction as the change) into one `webhook_deliveries` row per enabled endpoint of the event's
 * user; `claimDueDeliveries` takes the deliveries that are due, a few per endpoint at a time;
 * `deliverWebhook` makes one attempt of one delivery and records it, with the time of the next one.
 * Delivery is at least once: a receiver that answered 2xx but whose answer we lost sees the event again
 * with the same `id`, which it uses to ignore the repeat.
 */

export type WebhookSettings = Config['webhooks'];

/** Fan new events out to the endpoints registered when they happened; returns how many deliveries were created. */
export function dispatchWebhookEvents(batch = 500): Promise<number> {
  return dispatchEvents(batch);
}

export type { ClaimedDelivery };

/** Delete events older than `retentionDays`, with their deliveries, a batch at a time; returns how many went. */
export async function pruneOldEvents(retentionDays: number, batch = 1000): Promise<number> {
  const olderThan = new Date(Date.now() - retentionDays * 24 * 60 * 60 * 1000);
  let pruned = 0;
  for (;;) {
    const removed = await pruneEvents(olderThan, batch);
    pruned += removed;
    if (removed < batch) return pruned;
  }
}

/**
 * Take deliveries that are due, oldest first, at most `maxInFlight` per endpoint counting those already
 * taken (queued or being sent): a receiver that never answers holds its own slots until WEBHOOK_TIMEOUT_MS,
 * never the whole worker. Each taken delivery is leased for `leaseMs`; an attempt clears the lease when
 * it ends, and a lease that runs out (its jobs process and its queue lost) makes the delivery due again.
 * The endpoints' rows are locked while their slots are counted and taken, so jobs processes sweeping at
 * the same time never take more than the limit between them; one that is locked is left to its holder.
 */
export function claimDueDeliveries(options: {
  maxInFlight: number;
  leaseMs: number;
  limit?: number;
  endpointId?: string;
}): Promise<ClaimedDelivery[]> {
  return leaseDueDeliveries({ ...options, limit: options.limit ?? 1000 });
}

/** The delivered body: the event exactly as `GET /events` lists it (see domain/webhooks/events.ts). */
export function webhookBody(
  row: Pick<DeliveryRow, 'event_id' | 'type' | 'event_created_at' | 'payload' | 'amount_minor' | 'currency' | 'method' | 'reference'>,
): string {
  return JSON.stringify(
    eventBody({
      id: row.event_id,
      type: row.type,
      createdAt: row.event_created_at,
      payload: row.payload,
      order: orderFacts(row),
    }),
  );
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
  settings: WebhookSettings,
  deliveryId: string,
  attempt?: number,
  network: Omit<TargetPolicy, 'allowPrivate'> = {},
): Promise<DeliveryResult> {
  const row = await findDelivery(deliveryId);
  if (!row || row.status !== 'pending' || (attempt !== undefined && row.attempts !== attempt)) {
    return { outcome: 'skipped', endpointId: row?.endpoint_id ?? null };
  }
  const endpointId = row.endpoint_id;
  await leaseForAttempt(deliveryId, row.attempts, settings.timeoutMs + ATTEMPT_LEASE_MARGIN_MS);
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
    await recordAttempt(deliveryId, row.attempts, {
      ...outcome,
      entry,
      backoffMs: settings.backoffMs * 2 ** Math.min(row.attempts, 30),
    });
  };
  if (!row.enabled) {
    await record({ statusCode: null, error: 'the endpoint was disabled', final: 'failed' });
    return { outcome: 'refused', endpointId };
  }
  let target: VettedTarget;
  try {
    target = await vetWebhookTarget(row.url, {
      allowPrivate: settings.allowPrivateTargets,
      requireHttps: settings.httpsOnly,
      ...network,
    });
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
