import { QueryTypes } from 'sequelize';
import { config } from '../../platform/config';
import { database } from '../../platform/database';
import { AppError, notFound, validationError } from '../../platform/errors';
import { isUuid, uuidv7 } from '../../platform/ids';
import { checkWebhookTarget, WebhookTargetError } from '../../connectors/webhook-targets';
import { newWebhookSecret } from '../../domain/webhooks/signing';
import type { Caller } from '../auth/authentication';
import { decodeCursor, encodeCursor, pageLimit, type Page } from './paging';

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
  order_id: string;
  order_status: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  attempt_log: WebhookAttempt[];
  created_at: string;
  delivered_at: string | null;
}

interface EndpointRow {
  id: string;
  user_id: string;
  url: string;
  description: string | null;
  enabled: boolean;
  created_at: Date;
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
    url = await checkWebhookTarget(body.url, config().webhooks.allowPrivateTargets);
  } catch (err) {
    if (err instanceof WebhookTargetError) throw validationError('url', err.message);
    throw err;
  }
  const secret = newWebhookSecret();
  const { maxEndpointsPerUser } = config().webhooks;
  const sequelize = database();
  // Registrations of one user are serialised (a transaction-scoped advisory lock on the user), so
  // concurrent requests cannot both see room for the last endpoint.
  const row = await sequelize.transaction(async (transaction) => {
    await sequelize.query(`SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || CAST(:userId AS text), 0))`, {
      replacements: { userId: caller.id },
      transaction,
    });
    // A statement of its own: its snapshot is taken after the lock, so it sees what the previous holder inserted.
    const [count] = await sequelize.query<{ enabled: number }>(
      'SELECT count(*)::int AS enabled FROM webhook_endpoints WHERE user_id = :userId AND enabled',
      { replacements: { userId: caller.id }, type: QueryTypes.SELECT, transaction },
    );
    if ((count?.enabled ?? 0) >= maxEndpointsPerUser) {
      throw new AppError(
        'limit_exceeded',
        `at most ${maxEndpointsPerUser} enabled webhook endpoints per user: disable one (DELETE /webhooks/endpoints/{endpoint_id}) first`,
      );
    }
    const [inserted] = await sequelize.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, user_id, url, secret, description)
       VALUES (:id, :userId, :url, :secret, :description)
       RETURNING id, user_id, url, description, enabled, created_at`,
      {
        replacements: { id: uuidv7(), userId: caller.id, url: url.toString(), secret, description: body.description ?? null },
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return inserted;
  });
  if (!row) throw new Error('webhook endpoint insert returned no row');
  return { ...view(row), secret };
}

async function ownEndpoint(caller: Caller, endpointId: string): Promise<EndpointRow> {
  if (!isUuid(endpointId)) throw validationError('endpoint_id', 'must be a UUID');
  const [row] = await database().query<EndpointRow>(
    'SELECT id, user_id, url, description, enabled, created_at FROM webhook_endpoints WHERE id = :endpointId',
    { replacements: { endpointId }, type: QueryTypes.SELECT },
  );
  if (!row || (row.user_id !== caller.id && !isAdmin(caller))) throw notFound(`webhook endpoint ${endpointId}`);
  return row;
}

export async function listWebhookEndpoints(caller: Caller, q: { limit?: number; cursor?: string }): Promise<Page<WebhookEndpointView>> {
  const limit = pageLimit(q.limit);
  const before = q.cursor ? decodeCursor(q.cursor) : null;
  const rows = await database().query<EndpointRow>(
    `SELECT id, user_id, url, description, enabled, created_at FROM webhook_endpoints
      WHERE user_id = :userId AND (CAST(:before AS uuid) IS NULL OR id < CAST(:before AS uuid))
      ORDER BY id DESC LIMIT :take`,
    { replacements: { userId: caller.id, before, take: limit + 1 }, type: QueryTypes.SELECT },
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { data: page.map(view), next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}

/** Stop sending to an endpoint; its delivery log is kept. */
export async function disableWebhookEndpoint(caller: Caller, endpointId: string): Promise<void> {
  await ownEndpoint(caller, endpointId);
  await database().query(
    'UPDATE webhook_endpoints SET enabled = false, disabled_at = coalesce(disabled_at, now()) WHERE id = :endpointId',
    {
      replacements: { endpointId },
    },
  );
}

export async function webhookDeliveries(
  caller: Caller,
  endpointId: string,
  q: { limit?: number; cursor?: string },
): Promise<Page<WebhookDeliveryView>> {
  await ownEndpoint(caller, endpointId);
  const limit = pageLimit(q.limit);
  const before = q.cursor ? decodeCursor(q.cursor) : null;
  const rows = await database().query<{
    id: string;
    event_id: string;
    type: string;
    order_id: string;
    order_status: string;
    status: WebhookDeliveryView['status'];
    attempts: number;
    last_status_code: number | null;
    last_error: string | null;
    attempt_log: WebhookAttempt[];
    created_at: Date;
    delivered_at: Date | null;
  }>(
    `SELECT d.id, d.event_id, e.type, e.order_id, e.payload->>'status' AS order_status, d.status, d.attempts,
            d.last_status_code, d.last_error, d.attempt_log, d.created_at, d.delivered_at
       FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
      WHERE d.endpoint_id = :endpointId AND (CAST(:before AS uuid) IS NULL OR d.id < CAST(:before AS uuid))
      ORDER BY d.id DESC LIMIT :take`,
    { replacements: { endpointId, before, take: limit + 1 }, type: QueryTypes.SELECT },
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map((r) => ({
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
    })),
    next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null,
  };
}
