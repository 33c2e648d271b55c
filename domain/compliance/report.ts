import { ORDER_STATUSES, PAYMENT_METHODS } from '../orders';
import { KYC_STATUSES } from '../users';
import { CURRENCIES, decimalToScaled, formatAmount, isCurrency } from '../money';
import type { ComplianceReportInput, ReportSection } from './report-contract';

/**
 * The compliance report: how each section's rows become the section, and the report as CSV. Every
 * number is aggregated by Postgres (the statements are the report's repository's,
 * `repositories/compliance-reports.ts`); this only formats the (bounded) results.
 *
 * Amounts in USD are the orders' KES equivalents (fixed when the order was accepted) divided by the
 * configured USD rate, rounded half up to cents; a total is converted after summing.
 */

export interface CountAndUsd {
  count: number;
  usd_equivalent: string;
}

export interface CurrencyTotal {
  count: number;
  /** In the currency, with its scale. */
  amount: string;
  usd_equivalent: string;
}

export interface TotalsSection {
  count: number;
  usd_equivalent: string;
  by_status: { [status: string]: CountAndUsd };
  by_method: { [method: string]: CountAndUsd };
  by_currency: { [currency: string]: CurrencyTotal };
}

export interface LargeTransaction {
  order_id: string;
  user_id: string;
  created_at: string;
  status: string;
  method: string;
  currency: string;
  amount: string;
  usd_equivalent: string;
}

export interface LargeTransactionsSection {
  count: number;
  usd_equivalent: string;
  /** True when `items` stops at the configured maximum; `count` is complete. */
  truncated: boolean;
  items: LargeTransaction[];
}

export interface StructuringAlert {
  user_id: string;
  first_order_id: string;
  window_start: string;
  /** The last payment of the 24-hour window. */
  window_end: string;
  payments: number;
  usd_equivalent: string;
}

export interface StructuringAlertsSection {
  count: number;
  truncated: boolean;
  items: StructuringAlert[];
}

export interface BlocklistHitItem {
  hit_id: string;
  at: string;
  context: string;
  user_id: string | null;
  order_id: string | null;
  field: string;
  screened_value: string;
  entry_id: string;
  entry_type: string;
  entry_value: string;
  entry_source: string;
  score: string;
}

export interface BlocklistHitsSection {
  count: number;
  by_context: { [context: string]: number };
  truncated: boolean;
  items: BlocklistHitItem[];
}

export interface KycSection {
  /** Users registered before the end of the period, by their KYC status when the report was generated. */
  users_by_status: { [status: string]: number };
  /** KYC status changes during the period, by the status changed to. */
  changes_in_period: { [status: string]: number };
}

export interface AppealsSection {
  /** Appeals opened during the period, by status (zeros until appeals exist). */
  by_status: { [status: string]: number };
}

export interface ReportSections {
  totals: TotalsSection;
  large_transactions: LargeTransactionsSection;
  structuring_alerts: StructuringAlertsSection;
  blocklist_hits: BlocklistHitsSection;
  kyc: KycSection;
  appeals: AppealsSection;
}

const FX_SCALE = 8;
const SCREENING_CONTEXTS = ['registration', 'kyc', 'payment', 'ad'];
const APPEAL_STATUSES = ['open', 'approved', 'rejected', 'expired'];

/** KES minor units (cents) to USD, a decimal string with 2 places, rounded half up. */
export function kesMinorToUsd(kesMinor: bigint | string, usdRateKes: string): string {
  const rate = decimalToScaled(usdRateKes, FX_SCALE);
  const numerator = BigInt(kesMinor) * 10n ** BigInt(FX_SCALE);
  const cents = (2n * numerator + rate) / (2n * rate);
  return formatAmount(cents, 'USD');
}

/** A USD amount as KES minor units, rounded up: an order is at or above the threshold when its KES equivalent is. */
export function usdToKesMinorCeil(usd: string, usdRateKes: string): bigint {
  const cents = decimalToScaled(usd, 2);
  const rate = decimalToScaled(usdRateKes, FX_SCALE);
  const scale = 10n ** BigInt(FX_SCALE);
  return (cents * rate + scale - 1n) / scale;
}

const iso = (value: unknown): string => new Date(value as string | Date).toISOString();
const str = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
};
const num = (value: unknown): number => Number(value ?? 0);
const big = (value: unknown): bigint => BigInt((value as string | number | null | undefined) ?? 0);

function zeroes<T>(keys: readonly string[], zero: () => T): { [key: string]: T } {
  return Object.fromEntries(keys.map((k) => [k, zero()]));
}

function countsBy(rows: Record<string, unknown>[], keys: readonly string[], keyColumn = 'status'): { [key: string]: number } {
  const out = zeroes(keys, () => 0);
  for (const row of rows) out[str(row[keyColumn])] = num(row.count);
  return out;
}

/** A section from the rows of its statements, one list of rows per statement, in their order. */
type Shape<S> = (results: Record<string, unknown>[][], input: ComplianceReportInput) => S;

// The totals' `set` column, GROUPING(status, method, currency), is a bit mask of the columns *not*
// grouped by in a row's set.
const BY_STATUS = 3;
const BY_METHOD = 5;
const BY_CURRENCY = 6;
const ALL = 7;

const SHAPES: { [K in ReportSection]: Shape<ReportSections[K]> } = {
  totals: ([rows], input) => {
    const usd = (kes: unknown) => kesMinorToUsd(big(kes), input.usdRateKes);
    const zero = () => ({ count: 0, usd_equivalent: '0.00' });
    const totals: TotalsSection = {
      count: 0,
      usd_equivalent: '0.00',
      by_status: zeroes(ORDER_STATUSES, zero),
      by_method: zeroes(PAYMENT_METHODS, zero),
      by_currency: zeroes(CURRENCIES, () => ({ count: 0, amount: '0', usd_equivalent: '0.00' })),
    };
    for (const currency of CURRENCIES) totals.by_currency[currency].amount = formatAmount(0n, currency);
    for (const row of rows) {
      const entry = { count: num(row.count), usd_equivalent: usd(row.kes_minor) };
      switch (num(row.set)) {
        case BY_STATUS:
          totals.by_status[str(row.status)] = entry;
          break;
        case BY_METHOD:
          totals.by_method[str(row.method)] = entry;
          break;
        case BY_CURRENCY: {
          const currency = str(row.currency);
          const amount = isCurrency(currency) ? formatAmount(big(row.amount_minor), currency) : str(row.amount_minor);
          totals.by_currency[currency] = { ...entry, amount };
          break;
        }
        case ALL:
          totals.count = entry.count;
          totals.usd_equivalent = entry.usd_equivalent;
          break;
      }
    }
    return totals;
  },

  large_transactions: ([rows], input) => {
    const count = num(rows[0]?.total_count);
    return {
      count,
      usd_equivalent: kesMinorToUsd(big(rows[0]?.total_kes), input.usdRateKes),
      truncated: count > rows.length,
      items: rows.map((row) => {
        const currency = str(row.currency);
        return {
          order_id: str(row.id),
          user_id: str(row.user_id),
          created_at: iso(row.created_at),
          status: str(row.status),
          method: str(row.method),
          currency,
          amount: isCurrency(currency) ? formatAmount(big(row.amount_minor), currency) : str(row.amount_minor),
          usd_equivalent: kesMinorToUsd(big(row.kes_equivalent_minor), input.usdRateKes),
        };
      }),
    };
  },

  structuring_alerts: ([rows], input) => {
    const count = num(rows[0]?.total_count);
    return {
      count,
      truncated: count > rows.length,
      items: rows.map((row) => ({
        user_id: str(row.user_id),
        first_order_id: str(row.first_order_id),
        window_start: iso(row.window_start),
        window_end: iso(row.window_end),
        payments: num(row.payments),
        usd_equivalent: kesMinorToUsd(big(row.kes_total), input.usdRateKes),
      })),
    };
  },

  blocklist_hits: ([byContext, rows]) => {
    const by_context = countsBy(byContext, SCREENING_CONTEXTS, 'context');
    const count = Object.values(by_context).reduce((a, b) => a + b, 0);
    return {
      count,
      by_context,
      truncated: count > rows.length,
      items: rows.map((row) => ({
        hit_id: str(row.id),
        at: iso(row.created_at),
        context: str(row.context),
        user_id: row.user_id === null ? null : str(row.user_id),
        order_id: row.order_id === null ? null : str(row.order_id),
        field: str(row.field),
        screened_value: str(row.screened_value),
        entry_id: str(row.entry_id),
        entry_type: str(row.entry_type),
        entry_value: str(row.entry_value),
        entry_source: str(row.entry_source),
        score: str(row.score),
      })),
    };
  },

  kyc: ([users, changes]) => ({
    users_by_status: countsBy(users, KYC_STATUSES),
    changes_in_period: countsBy(changes, KYC_STATUSES),
  }),

  appeals: ([rows]) => ({ by_status: countsBy(rows, APPEAL_STATUSES) }),
};

/** A section from the rows its statements returned, one list of rows per statement, in their order. */
export function shapeSection<K extends ReportSection>(
  section: K,
  results: Record<string, unknown>[][],
  input: ComplianceReportInput,
): ReportSections[K] {
  return (SHAPES[section] as Shape<ReportSections[K]>)(results, input);
}

/** A plain decimal number, e.g. `-12.50`: a spreadsheet reads it as a number, never as a formula. */
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * One CSV cell, safe to open in a spreadsheet (OWASP "CSV Injection"): a cell starting with `=`, `+`,
 * `-`, `@`, tab or carriage return is prefixed with `'` so it is shown as text instead of run as a
 * formula, then quoted as usual. Every cell goes through here, since screened values, blocklist values
 * and even object keys can come from user input. The one exception is a plain decimal number (a signed
 * amount such as `-12.50`): it cannot carry a formula, and prefixing it would corrupt the figure.
 */
const csvCell = (raw: string): string => {
  const value = /^[=+\-@\t\r]/.test(raw) && !PLAIN_NUMBER.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
};

/**
 * The report as CSV with the same content as the JSON: one row per value, `section,item,field,value`.
 * Top-level values are in section `report`; a value nested in a section is named by its path: `item` is
 * the path to its object (list items by their 1-based position), `field` its key.
 */
export function reportToCsv(report: object): string {
  const rows: string[][] = [['section', 'item', 'field', 'value']];
  const walk = (section: string, path: string[], value: unknown, field: string): void => {
    if (value !== null && typeof value === 'object') {
      const entries: [string, unknown][] = Array.isArray(value)
        ? value.map((v: unknown, i) => [String(i + 1), v])
        : Object.entries(value as Record<string, unknown>);
      const here = field === '' ? path : [...path, field];
      for (const [key, child] of entries) walk(section, here, child, key);
      return;
    }
    rows.push([section, path.join('.'), field, value === null || value === undefined ? '' : str(value)]);
  };
  for (const [key, value] of Object.entries(report as Record<string, unknown>)) {
    if (value !== null && typeof value === 'object') walk(key, [], value, '');
    else walk('report', [], value, key);
  }
  return `${rows.map((r) => r.map(csvCell).join(',')).join('\r\n')}\r\n`;
}
