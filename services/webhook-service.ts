import { config } from '../platform/config';
import { AppError, notFound, validationError } from '../platform/errors';
import { isUuid, uuidv7 } from '../platform/ids';
import { checkWebhookTarget, WebhookTargetError } from '../connectors/webhook-targets';
import { newWebhookSecret } from '../domain/webhooks/signing';
import {
  createEndpointWithin,
  disableEndpoint,
  findEndpoint,
  listDeliveries,
  listEndpoints,
  requeueDelivery,
  type DeliveryLogRow,
  type EndpointRow,
} from '../repositories/webhooks';
import type { Caller } from '../domain/caller';
import { keysetPage, keysetQuery, type Page } from './paging';

export interface WebhookEndpointView {
  endpoint_id: string;
  url: string;
  description: string | null;
  enabled: boolean;
  created_at: string;
}

export interface CreatedWebhookEndpoint extends WebhookEndpointView {
  /** The signing secret. Shown once, at registration: keep it to verify `Paygate-Signature`. */
  secret: string;
}

export interface WebhookAttempt {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface WebhookDeliveryView {
  delivery_id: string;
  event_id: string;
  type: string;
  /** The order the event is about, when it is about one. */
  order_id: string | null;
  /** For `order.status_changed`: the status the order moved to. */
  order_status: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  attempt_log: WebhookAttempt[];
  created_at: string;
  delivered_at: string | null;
}

const view = (row: EndpointRow): WebhookEndpointView => ({
  endpoint_id: row.id,
  url: row.url,
  description: row.description,
  enabled: row.enabled,
  created_at: new Date(row.created_at).toISOString(),
});

const isAdmin = (caller: Caller) => caller.roles.includes('admin');

export async function registerWebhookEndpoint(
  caller: Caller,
  body: { url: string; description?: string },
): Promise<CreatedWebhookEndpoint> {
  if (typeof body.url !== 'string' || body.url.length > 2048) throw validationError('url', 'must be a URL of at most 2048 characters');
  if (body.description !== undefined && body.description.length > 200) throw validationError('description', 'at most 200 characters');
  let url: URL;
  try {
    const { allowPrivateTargets, httpsOnly } = config().webhooks;
    url = await checkWebhookTarget(body.url, { allowPrivate: allowPrivateTargets, requireHttps: httpsOnly });
  } catch (err) {
    if (err instanceof WebhookTargetError) throw validationError('url', err.message);
    throw err;
  }
  const secret = newWebhookSecret();
  const { maxEndpointsPerUser } = config().webhooks;
  const row = await createEndpointWithin(
    { id: uuidv7(), userId: caller.id, url: url.toString(), secret, description: body.description ?? null },
    maxEndpointsPerUser,
  );
  if (!row) {
    throw new AppError(
      'limit_exceeded',
      `at most ${maxEndpointsPerUser} enabled webhook endpoints per user: disable one (DELETE /webhooks/endpoints/{endpoint_id}) first`,
    );
  }
  return { ...view(row), secret };
}

async function ownEndpoint(caller: Caller, endpointId: string): Promise<EndpointRow> {
  if (!isUuid(endpointId)) throw validationError('endpoint_id', 'must be a UUID');
  const row = await findEndpoint(endpointId);
  if (!row || (row.user_id !== caller.id && !isAdmin(caller))) throw notFound(`webhook endpoint ${endpointId}`);
  return row;
}

export async function listWebhookEndpoints(caller: Caller, q: { limit?: number; cursor?: string }): Promise<Page<WebhookEndpointView>> {
  const { limit, before } = keysetQuery(q);
  const rows = await listEndpoints(caller.id, before, limit + 1);
  return keysetPage(rows, limit, view);
}

/** Stop sending to an endpoint; its delivery log is kept. */
export async function disableWebhookEndpoint(caller: Caller, endpointId: string): Promise<void> {
  await ownEndpoint(caller, endpointId);
  await disableEndpoint(endpointId);
}

export async function webhookDeliveries(
  caller: Caller,
  endpointId: string,
  q: { limit?: number; cursor?: string },
): Promise<Page<WebhookDeliveryView>> {
  await ownEndpoint(caller, endpointId);
  const { limit, before } = keysetQuery(q);
  const rows = await listDeliveries(endpointId, before, limit + 1);
  return keysetPage(rows, limit, deliveryView);
}

const deliveryView = (r: DeliveryLogRow): WebhookDeliveryView => ({
  delivery_id: r.id,
  event_id: r.event_id,
  type: r.type,
  order_id: r.order_id,
  order_status: r.order_status,
  status: r.status,
  attempts: r.attempts,
  last_status_code: r.last_status_code,
  last_error: r.last_error,
  attempt_log: r.attempt_log,
  created_at: new Date(r.created_at).toISOString(),
  delivered_at: r.delivered_at ? new Date(r.delivered_at).toISOString() : null,
});

/**
 * Send one delivery again, on request: it becomes due now and the next sweep sends it, with the same event
 * id and body (a delivered one too). Refused while an attempt of it is under way, for a disabled endpoint,
 * and once it was sent again WEBHOOK_MAX_MANUAL_RETRIES times: otherwise anyone could make us send requests
 * at any host, as often as they liked (docs/events.md#webhooks).
 */
export async function retryWebhookDelivery(caller: Caller, endpointId: string, deliveryId: string): Promise<WebhookDeliveryView> {
  const endpoint = await ownEndpoint(caller, endpointId);
  if (!isUuid(deliveryId)) throw validationError('delivery_id', 'must be a UUID');
  if (!endpoint.enabled) throw new AppError('conflict', 'the endpoint is disabled: register it again to receive events');
  const { maxManualRetries } = config().webhooks;
  const requeued = await requeueDelivery(endpointId, deliveryId, maxManualRetries);
  if (!requeued) throw notFound(`webhook delivery ${deliveryId}`);
  if (requeued === 'exhausted') {
    throw new AppError('conflict', `this delivery was already sent again ${maxManualRetries} times on request, the most allowed`);
  }
  if (requeued === 'in_flight')
    throw new AppError('conflict', 'an attempt of this delivery is under way: retry it once that attempt has ended');
  return deliveryView(requeued);
}
