import { validationError } from '../../platform/errors';
import { isUuid } from '../../platform/ids';

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

export const encodeCursor = (id: string): string => Buffer.from(`v1:${id}`).toString('base64url');

export function decodeCursor(cursor: string): string {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  const id = decoded.startsWith('v1:') ? decoded.slice(3) : '';
  if (!isUuid(id)) throw validationError('cursor', 'is not a cursor returned by this endpoint');
  return id;
}
