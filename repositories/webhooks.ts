import { QueryTypes } from 'sequelize';
import { models } from '../models';

/**
 * Webhooks: every read and write of `webhook_endpoints`, `webhook_events` and `webhook_deliveries`. Events are
 * written by a database trigger in the same transaction as the order change (the outbox); the functions
 * here fan them out to deliveries, lease due deliveries to senders, and record each attempt.
 */

/** Fan new events out to the endpoints registered when they happened; returns how many deliveries were created. */
export async function dispatchEvents(batch: number): Promise<number> {
  const rows = await models().query<{ id: string }>(
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
 * Lease due deliveries, oldest first, at most `maxInFlight` per endpoint counting those already leased.
 * The endpoints' rows are locked while their slots are counted and taken, so concurrent sweeps never take
 * more than the limit between them; an endpoint that is locked is left to its holder.
 */
export async function leaseDueDeliveries(options: {
  maxInFlight: number;
  leaseMs: number;
  limit: number;
  endpointId?: string;
}): Promise<ClaimedDelivery[]> {
  return models().transaction(async (transaction) => {
    const endpoints = await models().query<{ id: string }>(
      `SELECT w.id FROM webhook_endpoints w
        WHERE (CAST(:endpointId AS uuid) IS NULL OR w.id = CAST(:endpointId AS uuid))
          AND EXISTS (SELECT 1 FROM webhook_deliveries d
                       WHERE d.endpoint_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= now())
        FOR NO KEY UPDATE OF w SKIP LOCKED`,
      { replacements: { endpointId: options.endpointId ?? null }, type: QueryTypes.SELECT, transaction },
    );
    if (endpoints.length === 0) return [];
    return models().query<ClaimedDelivery>(
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
          limit: options.limit,
        },
        type: QueryTypes.SELECT,
        transaction,
      },
    );
  });
}

/** One delivery with what sending it needs: its endpoint, its event and the event's order. */
export interface DeliveryRow {
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
  payload: EventPayload;
  /** For events of an order: the order's amount, currency, method and reference (null otherwise). */
  amount_minor: string | null;
  currency: string | null;
  method: string | null;
  reference: string | null;
}

/** What the trigger that wrote an event put in it: its subject's ids and state, and `at`. */
export type EventPayload = Record<string, unknown> & { at: string };

export async function findDelivery(deliveryId: string): Promise<DeliveryRow | undefined> {
  const [row] = await models().query<DeliveryRow>(
    `SELECT d.id, d.endpoint_id, d.status, d.attempts, w.enabled, w.url, w.secret, e.id AS event_id, e.type,
            e.created_at AS event_created_at, e.payload, o.amount_minor, o.currency, o.method, o.reference
       FROM webhook_deliveries d
       JOIN webhook_endpoints w ON w.id = d.endpoint_id
       JOIN webhook_events e ON e.id = d.event_id
       LEFT JOIN orders o ON o.id = e.order_id AND e.type = 'order.status_changed'
      WHERE d.id = :deliveryId`,
    { replacements: { deliveryId }, type: QueryTypes.SELECT },
  );
  return row;
}

/** Extend the lease of a delivery for the attempt after `attempts`, if that attempt is still to be made. */
export async function leaseForAttempt(deliveryId: string, attempts: number, leaseMs: number): Promise<void> {
  await models().query(
    `UPDATE webhook_deliveries SET leased_until = now() + CAST(:leaseMs AS integer) * interval '1 millisecond'
      WHERE id = :deliveryId AND status = 'pending' AND attempts = :attempts`,
    { replacements: { deliveryId, attempts, leaseMs } },
  );
}

export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  final: 'delivered' | 'failed' | 'pending';
  /** The attempt-log entry. */
  entry: Record<string, unknown>;
  /** When `final` is pending: the next attempt is due this long from now. */
  backoffMs: number;
}

/** Record the attempt after `attempts`, once (a conditional update on the attempt count), and release the lease. */
export async function recordAttempt(deliveryId: string, attempts: number, attempt: AttemptRecord): Promise<void> {
  await models().query(
    `UPDATE webhook_deliveries
        SET attempts = attempts + 1, last_status_code = :statusCode, last_error = :error, status = :final,
            attempt_log = attempt_log || :entry::jsonb, updated_at = now(), leased_until = NULL,
            next_attempt_at = now() + CAST(:backoffMs AS bigint) * interval '1 millisecond',
            delivered_at = CASE WHEN :final = 'delivered' THEN now() END
      WHERE id = :deliveryId AND status = 'pending' AND attempts = :attempts`,
    {
      replacements: {
        statusCode: attempt.statusCode,
        error: attempt.error,
        final: attempt.final,
        entry: JSON.stringify([attempt.entry]),
        deliveryId,
        attempts,
        backoffMs: attempt.backoffMs,
      },
    },
  );
}

// --- endpoints, and their delivery log, as the webhooks API shows them

export interface EndpointRow {
  id: string;
  user_id: string;
  url: string;
  description: string | null;
  enabled: boolean;
  created_at: Date;
}

const ENDPOINT_COLUMNS = 'id, user_id, url, description, enabled, created_at';

/**
 * Register an endpoint unless the user already has `maxEnabled` enabled ones (then null). Registrations of
 * one user are serialised by a transaction-scoped advisory lock on the user, so concurrent requests cannot
 * both see room for the last endpoint.
 */
export async function createEndpointWithin(
  endpoint: { id: string; userId: string; url: string; secret: string; description: string | null },
  maxEnabled: number,
): Promise<EndpointRow | null> {
  return models().transaction(async (transaction) => {
    await models().query(`SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || CAST(:userId AS text), 0))`, {
      replacements: { userId: endpoint.userId },
      transaction,
    });
    // A statement of its own: its snapshot is taken after the lock, so it sees what the previous holder inserted.
    const [count] = await models().query<{ enabled: number }>(
      'SELECT count(*)::int AS enabled FROM webhook_endpoints WHERE user_id = :userId AND enabled',
      { replacements: { userId: endpoint.userId }, type: QueryTypes.SELECT, transaction },
    );
    if ((count?.enabled ?? 0) >= maxEnabled) return null;
    const [inserted] = await models().query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, user_id, url, secret, description)
       VALUES (:id, :userId, :url, :secret, :description)
       RETURNING ${ENDPOINT_COLUMNS}`,
      { replacements: endpoint, type: QueryTypes.SELECT, transaction },
    );
    if (!inserted) throw new Error('webhook endpoint insert returned no row');
    return inserted;
  });
}

export async function findEndpoint(endpointId: string): Promise<EndpointRow | undefined> {
  const [row] = await models().query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = :endpointId`, {
    replacements: { endpointId },
    type: QueryTypes.SELECT,
  });
  return row;
}

/** The user's endpoints, newest first, keyset-paged by id. */
export async function listEndpoints(userId: string, before: string | null, take: number): Promise<EndpointRow[]> {
  return models().query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
      WHERE user_id = :userId AND (CAST(:before AS uuid) IS NULL OR id < CAST(:before AS uuid))
      ORDER BY id DESC LIMIT :take`,
    { replacements: { userId, before, take }, type: QueryTypes.SELECT },
  );
}

/** Stop sending to an endpoint (its delivery log is kept). */
export async function disableEndpoint(endpointId: string): Promise<void> {
  await models().query('UPDATE webhook_endpoints SET enabled = false, disabled_at = coalesce(disabled_at, now()) WHERE id = :endpointId', {
    replacements: { endpointId },
  });
}

/** The delivery log's columns (over `webhook_deliveries d JOIN webhook_events e`), the status read from `status`. */
const deliveryLogColumns = (status = 'd.status') => `d.id, d.event_id, e.type, e.order_id,
  CASE WHEN e.type = 'order.status_changed' THEN e.payload->>'status' END AS order_status, ${status} AS status, d.attempts,
  d.last_status_code, d.last_error, d.attempt_log, d.created_at, d.delivered_at`;

export interface DeliveryLogRow {
  id: string;
  event_id: string;
  type: string;
  order_id: string | null;
  order_status: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  attempt_log: { attempt: number; at: string; status_code: number | null; error: string | null; duration_ms: number }[];
  created_at: Date;
  delivered_at: Date | null;
}

/** The endpoint's deliveries, newest first, keyset-paged by id. */
export async function listDeliveries(endpointId: string, before: string | null, take: number): Promise<DeliveryLogRow[]> {
  return models().query<DeliveryLogRow>(
    `SELECT ${deliveryLogColumns()}
       FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
      WHERE d.endpoint_id = :endpointId AND (CAST(:before AS uuid) IS NULL OR d.id < CAST(:before AS uuid))
      ORDER BY d.id DESC LIMIT :take`,
    { replacements: { endpointId, before, take }, type: QueryTypes.SELECT },
  );
}

/**
 * Make one delivery of the endpoint due now, unless an attempt of it is under way or it was already sent
 * again on request `maxRetries` times; the count and its bound are one conditional update, so retries sent
 * at once never pass the bound. Answers the delivery as the log shows it, `in_flight` when an attempt holds
 * it, `exhausted` at the bound, or undefined when the endpoint has no such delivery.
 */
export async function requeueDelivery(
  endpointId: string,
  deliveryId: string,
  maxRetries: number,
): Promise<DeliveryLogRow | 'in_flight' | 'exhausted' | undefined> {
  const [row] = await models().query<DeliveryLogRow & { requeued: boolean; exhausted: boolean }>(
    `WITH requeued AS (
       UPDATE webhook_deliveries
          SET status = 'pending', next_attempt_at = now(), updated_at = now(), manual_retries = manual_retries + 1
        WHERE id = :deliveryId AND endpoint_id = :endpointId AND manual_retries < :maxRetries
          AND NOT (status = 'pending' AND leased_until IS NOT NULL AND leased_until > now())
       RETURNING id, status
     )
     -- The outer read sees the rows as they were before the update: the status is taken from it.
     SELECT ${deliveryLogColumns('coalesce(r.status, d.status)')}, r.id IS NOT NULL AS requeued,
            d.manual_retries >= :maxRetries AS exhausted
       FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id LEFT JOIN requeued r ON r.id = d.id
      WHERE d.id = :deliveryId AND d.endpoint_id = :endpointId`,
    { replacements: { endpointId, deliveryId, maxRetries }, type: QueryTypes.SELECT },
  );
  if (!row) return undefined;
  if (!row.requeued) return row.exhausted ? 'exhausted' : 'in_flight';
  const { requeued: _requeued, exhausted: _exhausted, ...log } = row;
  return log;
}

// --- the events API

export interface EventRow {
  id: string;
  type: string;
  created_at: Date;
  payload: EventPayload;
  amount_minor: string | null;
  currency: string | null;
  method: string | null;
  reference: string | null;
}

export interface EventFilter {
  userId: string;
  /** An exact type, or a prefix ending in `.` (from `order.*`). */
  type: { exact: string } | { prefix: string } | null;
  createdFrom: Date | null;
  createdBefore: Date | null;
  before: string | null;
  take: number;
}

/** The user's events, newest first, keyset-paged by id (a UUIDv7, so in the order they were written). */
export async function listEvents(filter: EventFilter): Promise<EventRow[]> {
  return models().query<EventRow>(
    `SELECT e.id, e.type, e.created_at, e.payload, o.amount_minor, o.currency, o.method, o.reference
       FROM webhook_events e
       LEFT JOIN orders o ON o.id = e.order_id AND e.type = 'order.status_changed'
      WHERE e.user_id = :userId
        AND (CAST(:exact AS text) IS NULL OR e.type = :exact)
        AND (CAST(:prefix AS text) IS NULL OR starts_with(e.type, :prefix))
        AND (CAST(:createdFrom AS timestamptz) IS NULL OR e.created_at >= CAST(:createdFrom AS timestamptz))
        AND (CAST(:createdBefore AS timestamptz) IS NULL OR e.created_at < CAST(:createdBefore AS timestamptz))
        AND (CAST(:before AS uuid) IS NULL OR e.id < CAST(:before AS uuid))
      ORDER BY e.id DESC LIMIT :take`,
    {
      replacements: {
        userId: filter.userId,
        exact: filter.type && 'exact' in filter.type ? filter.type.exact : null,
        prefix: filter.type && 'prefix' in filter.type ? filter.type.prefix : null,
        createdFrom: filter.createdFrom?.toISOString() ?? null,
        createdBefore: filter.createdBefore?.toISOString() ?? null,
        before: filter.before,
        take: filter.take,
      },
      type: QueryTypes.SELECT,
    },
  );
}

/**
 * Delete events created before `olderThan`, with their deliveries, at most `batch` events per call; returns
 * how many events went. Undispatched events are kept whatever their age, so nothing is dropped unsent.
 */
export async function pruneEvents(olderThan: Date, batch: number): Promise<number> {
  return models().transaction(async (transaction) => {
    const doomed = await models().query<{ id: string }>(
      `SELECT id FROM webhook_events WHERE created_at < :olderThan AND dispatched_at IS NOT NULL
        ORDER BY created_at LIMIT :batch FOR UPDATE SKIP LOCKED`,
      { replacements: { olderThan: olderThan.toISOString(), batch }, type: QueryTypes.SELECT, transaction },
    );
    if (doomed.length === 0) return 0;
    const ids = doomed.map((d) => d.id);
    await models().query('DELETE FROM webhook_deliveries WHERE event_id IN (:ids)', { replacements: { ids }, transaction });
    await models().query('DELETE FROM webhook_events WHERE id IN (:ids)', { replacements: { ids }, transaction });
    return ids.length;
  });
}
