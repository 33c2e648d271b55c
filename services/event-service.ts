import { validationError } from '../platform/errors';
import { eventBody, orderFacts, parseEventTypeFilter, type EventBody } from '../domain/webhooks/events';
import { listEvents } from '../repositories/webhooks';
import type { Caller } from '../domain/caller';
import { parseInstant } from './instants';
import { decodeCursor, keysetPage, pageLimit, type Page } from './paging';

/**
 * `GET /events` (docs/events.md#listing-events): the caller's events, newest first, as webhooks deliver them (same ids), kept
 * EVENTS_RETENTION_DAYS. A receiver that was away lists what happened since it went down
 * (`created_gte`), and skips the ids it has already seen.
 */

export interface EventQuery {
  type?: string;
  created_gte?: string;
  created_lt?: string;
  limit?: number;
  cursor?: string;
}

const instant = (field: string, raw: string | undefined): Date | null => (raw === undefined ? null : parseInstant(raw, field));

export async function listCallerEvents(caller: Caller, q: EventQuery): Promise<Page<EventBody>> {
  const limit = pageLimit(q.limit);
  const type = q.type === undefined ? null : parseEventTypeFilter(q.type);
  if (q.type !== undefined && !type)
    throw validationError('type', 'must be an event type (e.g. order.status_changed) or a family (e.g. order.*)');
  const rows = await listEvents({
    userId: caller.id,
    type,
    createdFrom: instant('created_gte', q.created_gte),
    createdBefore: instant('created_lt', q.created_lt),
    before: q.cursor ? decodeCursor(q.cursor) : null,
    take: limit + 1,
  });
  return keysetPage(rows, limit, (row) =>
    eventBody({
      id: row.id,
      type: row.type,
      createdAt: row.created_at,
      payload: row.payload,
      order: orderFacts(row),
    }),
  );
}
