import { validationError } from '../platform/errors';

export interface Page<T> {
  data: T[];
  /** Opaque; pass as `cursor` to get the next page. Null on the last page. */
  next_cursor: string | null;
}

export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw validationError('limit', 'must be an integer from 1 to 100');
  return limit;
}

/** A list's optional filter, one of `allowed` when given; anything else is a 400 on `field`. */
export function filterOneOf<T extends string>(field: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value !== undefined && !(allowed as readonly string[]).includes(value)) {
    throw validationError(field, `must be one of ${allowed.join(', ')}`);
  }
  return value as T | undefined;
}

/**
 * The one cursor codec for every keyset-paged list. A cursor is the sort key of the last row of a page
 * (one or more parts, e.g. `[id]` or `[rank, price, id]`), opaque to clients: `v1:` and the parts joined by
 * `:`, base64url-encoded. Parts must not contain `:`.
 */
export const encodeCursor = (...key: string[]): string => Buffer.from(`v1:${key.join(':')}`).toString('base64url');

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Decode a cursor whose key has one part per pattern, each matching it; anything else (a forged, truncated
 * or foreign cursor) is a 400 on `cursor`.
 */
export function decodeCursorKey(cursor: string, parts: readonly RegExp[]): string[] {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  const key = decoded.startsWith('v1:') ? decoded.slice(3).split(':') : [];
  if (key.length !== parts.length || !key.every((part, i) => parts[i].test(part))) {
    throw validationError('cursor', 'is not a cursor returned by this endpoint');
  }
  return key;
}

/** Decode the cursor of a list keyed by a UUID id (most lists). */
export const decodeCursor = (cursor: string): string => decodeCursorKey(cursor, [UUID_PATTERN])[0];

/**
 * A page of a keyset-paged list whose query asked for one row more than `limit`: that extra row only says a
 * next page exists, and the cursor is the id of the page's last row.
 */
export function keysetPage<R extends { id: string }, T>(rows: readonly R[], limit: number, view: (row: R) => T): Page<T> {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { data: page.map((row) => view(row)), next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}

/** The page size and the keyset position (the id the page starts below; null for the first page) of a list keyed by id. */
export function keysetQuery(q: { limit?: number; cursor?: string }): { limit: number; before: string | null } {
  const limit = pageLimit(q.limit);
  return { limit, before: q.cursor ? decodeCursor(q.cursor) : null };
}
