import { validationError } from '../platform/errors';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * A query's or body's point in time: an RFC 3339 timestamp (with `allowDate`, also a plain date, read as its
 * midnight UTC); anything else is a 400 naming `field`.
 */
export function parseInstant(value: string, field: string, allowDate = false): Date {
  const dateOnly = allowDate && /^\d{4}-\d{2}-\d{2}$/.test(value);
  const date = new Date(dateOnly ? `${value}T00:00:00Z` : value);
  if ((!dateOnly && !RFC3339.test(value)) || Number.isNaN(date.getTime())) {
    throw validationError(field, `must be an RFC 3339 timestamp, e.g. 2026-01-31T00:00:00Z${allowDate ? ', or a date' : ''}`);
  }
  return date;
}
