import { parse } from 'csv-parse/sync';
import { AppError, type FieldError } from '../platform/errors';

/**
 * Bulk payouts as CSV (docs/payments.md#a-batch-as-csv): the upload's header and rows turned into the items a
 * JSON batch carries, and the results CSV written back. Pure: no I/O.
 */

/** The item fields a column may hold; `destination.*` columns fill the item's `destination` object. */
export const BATCH_CSV_COLUMNS = [
  'reference',
  'amount',
  'currency',
  'method',
  'description',
  'destination.provider',
  'destination.phone',
  'destination.bank_code',
  'destination.account_number',
  'destination.account_name',
  'destination.exchange_id',
  'destination.account_ref',
  'destination.address',
  'destination.network',
] as const;

/** Columns every batch CSV has; the destination's are those its methods need. */
export const BATCH_CSV_REQUIRED = ['reference', 'amount', 'currency', 'method'] as const;

/** The longest record accepted, in characters: every field of an item at its longest fits well within it. */
const MAX_RECORD_CHARS = 8_192;

const DESTINATION = 'destination.';

export type BatchCsvItem = Record<string, string | Record<string, string>>;

const refused = (detail: string, errors: FieldError[]): AppError => new AppError('validation_failed', detail, { errors });

/** The header's problems: unknown, repeated or missing columns, each named. */
function headerErrors(header: string[]): FieldError[] {
  const known = BATCH_CSV_COLUMNS as readonly string[];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const column of header) {
    if (!known.includes(column)) {
      errors.push({ field: `header.${column}`, message: `is not a column of a batch CSV (columns: ${BATCH_CSV_COLUMNS.join(', ')})` });
    } else if (seen.has(column)) {
      errors.push({ field: `header.${column}`, message: 'appears more than once' });
    }
    seen.add(column);
  }
  for (const column of BATCH_CSV_REQUIRED) {
    if (!seen.has(column)) errors.push({ field: `header.${column}`, message: 'is a required column' });
  }
  return errors;
}

/**
 * The items of a batch CSV, in row order: row N is the Nth record after the header (blank lines are not rows),
 * the number JSON items use. An empty cell is an absent field. A header with an unknown, repeated or missing
 * column, a record whose field count is not the header's, text that is not CSV, or a row count outside
 * 1..maxRows is refused whole (400 `validation_failed`); each item's own fields are checked afterwards, as a
 * JSON item's are.
 */
export function parseBatchCsv(text: string, maxRows: number): BatchCsvItem[] {
  let records: string[][];
  try {
    records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true, max_record_size: MAX_RECORD_CHARS });
  } catch (err) {
    const csv = err as { code?: unknown; message?: unknown; lines?: unknown };
    if (typeof csv.code !== 'string' || !csv.code.startsWith('CSV_')) throw err;
    const where = typeof csv.lines === 'number' ? `line ${csv.lines}` : 'the body';
    const message = `is not valid CSV at ${where}: ${String(csv.message)}`;
    throw refused(`the CSV ${message}`, [{ field: 'body', message }]);
  }
  const [rawHeader, ...rows] = records;
  if (!rawHeader) throw refused('the CSV is empty: it needs a header and 1 or more rows', [{ field: 'header', message: 'is missing' }]);
  const header = rawHeader.map((name) => name.trim());
  const problems = headerErrors(header);
  if (problems.length > 0) throw refused(problems.map((e) => `${e.field}: ${e.message}`).join('; '), problems);
  if (rows.length < 1 || rows.length > maxRows) {
    const message = `must be 1 to ${maxRows} rows after the header; this CSV has ${rows.length}`;
    throw refused(`rows: ${message}`, [{ field: 'rows', message }]);
  }
  const ragged = rows.flatMap((fields, i) =>
    fields.length === header.length
      ? []
      : [{ field: `rows[${i + 1}]`, message: `has ${fields.length} fields where the header has ${header.length}` }],
  );
  if (ragged.length > 0) {
    const list = ragged.slice(0, 20).map((e) => e.field);
    throw refused(`${ragged.length} rows do not match the header (${list.join(', ')}${ragged.length > 20 ? ', …' : ''})`, ragged);
  }
  return rows.map((fields) => {
    const item: BatchCsvItem = {};
    const destination: Record<string, string> = {};
    header.forEach((column, i) => {
      const value = fields[i];
      if (value === '') return;
      if (column.startsWith(DESTINATION)) destination[column.slice(DESTINATION.length)] = value;
      else item[column] = value;
    });
    if (Object.keys(destination).length > 0) item.destination = destination;
    return item;
  });
}

/** The columns of a batch's results CSV, one line per item in row order. */
export const BATCH_RESULTS_COLUMNS = ['row', 'reference', 'status', 'amount', 'fee', 'order_id', 'failure_code', 'updated_at'] as const;

/**
 * A cell a spreadsheet would run as a formula (OWASP "CSV injection") is kept as text by a leading `'`. Only
 * text cells are neutralised; amounts and ids never start so.
 */
const FORMULA = /^[=+\-@\t\r]/;

export const textCell = (value: string | null): string | null => (value !== null && FORMULA.test(value) ? `'${value}` : value);

/** One CSV line (RFC 4180): a field with a comma, quote or line break is quoted, quotes doubled; null is empty. */
export function csvLine(fields: readonly (string | number | null)[]): string {
  return (
    fields
      .map((field) => {
        const s = field === null ? '' : String(field);
        return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
      })
      .join(',') + '\r\n'
  );
}
