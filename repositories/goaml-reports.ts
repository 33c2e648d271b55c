import { QueryTypes } from 'sequelize';
import { GoamlReport, models } from '../models';
import type { GoamlReportKind } from '../domain/goaml';
import type { Tx } from './transaction';

/**
 * goAML reports (`goaml_reports`, docs/compliance.md#goaml-reports): every read and write of the table, and the
 * CTR's read-only selections over completed orders and deposits. Reports are only ever added; the database
 * refuses UPDATE, DELETE and TRUNCATE on the table.
 */

export interface GoamlReportRecord {
  id: string;
  kind: GoamlReportKind;
  periodFrom: Date | null;
  periodTo: Date | null;
  createdBy: string;
  createdAt: Date;
  transactionCount: number;
  totalKesMinor: bigint;
  thresholdKesMinor: bigint | null;
}

const record = (r: GoamlReport): GoamlReportRecord => ({
  id: r.id,
  kind: r.kind,
  periodFrom: r.periodFrom,
  periodTo: r.periodTo,
  createdBy: r.createdBy,
  createdAt: r.createdAt,
  transactionCount: r.transactionCount,
  totalKesMinor: BigInt(r.totalKesMinor),
  thresholdKesMinor: r.thresholdKesMinor === null ? null : BigInt(r.thresholdKesMinor),
});

export interface NewGoamlReport {
  id: string;
  kind: GoamlReportKind;
  periodFrom: Date | null;
  periodTo: Date | null;
  createdBy: string;
  createdAt: Date;
  transactionCount: number;
  totalKesMinor: bigint;
  thresholdKesMinor: bigint | null;
  xml: string;
}

/** Keep a rendered report, in `tx` when given (with its audit entry). */
export async function insertGoamlReport(r: NewGoamlReport, tx?: Tx): Promise<GoamlReportRecord> {
  const created = await GoamlReport.create(
    {
      ...r,
      totalKesMinor: r.totalKesMinor.toString(),
      thresholdKesMinor: r.thresholdKesMinor === null ? null : r.thresholdKesMinor.toString(),
    },
    { transaction: tx },
  );
  return record(created);
}

/** A report's XML as it was rendered, or null when there is no such report. */
export async function findGoamlReportXml(id: string): Promise<{ report: GoamlReportRecord; xml: string } | null> {
  const found = await GoamlReport.findByPk(id);
  return found ? { report: record(found), xml: found.xml } : null;
}

/** The customer behind a movement, as the report names them. */
export interface CustomerFacts {
  userId: string;
  fullName: string;
  email: string;
  phone: string | null;
}

export interface CtrOrderRow extends CustomerFacts {
  id: string;
  createdAt: Date;
  method: string;
  currency: string;
  amountMinor: bigint;
  kesEquivalentMinor: bigint;
  destination: Record<string, string>;
  route: string | null;
  railReference: string | null;
}

export interface CtrDepositRow extends CustomerFacts {
  id: string;
  createdAt: Date;
  channel: string;
  currency: string;
  amountMinor: bigint;
  kesEquivalentMinor: bigint;
  providerReference: string | null;
  payerPhone: string | null;
  payerName: string | null;
  payerAddress: string | null;
}

export interface CtrSelection {
  from: Date;
  to: Date;
  thresholdKesMinor: bigint;
  /** Reference rates to KES per currency, as integers over `10^FX scale` (`{ rate, den }` of the conversion). */
  kesConversion: Record<string, { rate: string; den: string }>;
  /** One more than the most rows a report may hold, so the caller sees when a period has too many. */
  limit: number;
}

export interface RawCustomer {
  user_id: string;
  full_name: string;
  email: string;
  phone: string | null;
}
const customer = (r: RawCustomer): CustomerFacts => ({ userId: r.user_id, fullName: r.full_name, email: r.email, phone: r.phone });

/** An order as the report queries select it (the CTR's and a case's STR's), with its customer. */
export type RawCtrOrder = RawCustomer & {
  id: string;
  created_at: Date;
  method: string;
  currency: string;
  amount_minor: string;
  kes_equivalent_minor: string;
  destination: Record<string, string>;
  route: string | null;
  rail_reference: string | null;
};

/** A deposit as the report queries select it, with its KES equivalent and its customer. */
export type RawCtrDeposit = RawCustomer & {
  id: string;
  created_at: Date;
  channel: string;
  currency: string;
  amount_minor: string;
  kes_minor: string;
  provider_reference: string | null;
  payer_phone: string | null;
  payer_name: string | null;
  payer_address: string | null;
};

export const ctrOrderRow = (r: RawCtrOrder): CtrOrderRow => ({
  ...customer(r),
  id: r.id,
  createdAt: new Date(r.created_at),
  method: r.method,
  currency: r.currency,
  amountMinor: BigInt(r.amount_minor),
  kesEquivalentMinor: BigInt(r.kes_equivalent_minor),
  destination: r.destination,
  route: r.route,
  railReference: r.rail_reference,
});

export const ctrDepositRow = (r: RawCtrDeposit): CtrDepositRow => ({
  ...customer(r),
  id: r.id,
  createdAt: new Date(r.created_at),
  channel: r.channel,
  currency: r.currency,
  amountMinor: BigInt(r.amount_minor),
  kesEquivalentMinor: BigInt(r.kes_minor),
  providerReference: r.provider_reference,
  payerPhone: r.payer_phone,
  payerName: r.payer_name,
  payerAddress: r.payer_address,
});

/** Completed orders created in the period whose KES equivalent (fixed at acceptance) is at or above the threshold. */
export async function completedOrdersAtOrAbove(s: CtrSelection): Promise<CtrOrderRow[]> {
  const rows = await models().query<RawCtrOrder>(
    `SELECT o.id, o.created_at, o.method, o.currency, o.amount_minor, o.kes_equivalent_minor, o.destination, o.route,
            o.rail_reference, u.id AS user_id, u.full_name, u.email, u.phone
       FROM orders o JOIN users u ON u.id = o.user_id
      WHERE o.status = 'completed' AND o.created_at >= $1 AND o.created_at < $2 AND o.kes_equivalent_minor >= $3
      ORDER BY o.created_at, o.id
      LIMIT $4`,
    { bind: [s.from, s.to, s.thresholdKesMinor.toString(), s.limit], type: QueryTypes.SELECT },
  );
  return rows.map(ctrOrderRow);
}

/**
 * Completed deposits credited to a customer in the period whose KES equivalent at the reference rate (rounded
 * up, as everywhere: `ceil(amount × rate × 100 / 10^(scale + 8))`, exact in NUMERIC) is at or above the
 * threshold. A currency without a rate is not converted, and so not selected.
 */
export async function completedDepositsAtOrAbove(s: CtrSelection): Promise<CtrDepositRow[]> {
  const rows = await models().query<RawCtrDeposit>(
    `WITH converted AS (
       SELECT d.*, div(d.amount_minor * (r.value ->> 'rate')::numeric * 100 + (r.value ->> 'den')::numeric - 1,
                       (r.value ->> 'den')::numeric) AS kes_minor
         FROM deposits d JOIN jsonb_each($3::jsonb) r ON r.key = d.currency
        WHERE d.status = 'completed' AND d.user_id IS NOT NULL AND d.created_at >= $1 AND d.created_at < $2
     )
     SELECT c.id, c.created_at, c.channel, c.currency, c.amount_minor, c.kes_minor, c.provider_reference,
            c.payer_phone, c.payer_name, c.payer_address, u.id AS user_id, u.full_name, u.email, u.phone
       FROM converted c JOIN users u ON u.id = c.user_id
      WHERE c.kes_minor >= $4
      ORDER BY c.created_at, c.id
      LIMIT $5`,
    { bind: [s.from, s.to, JSON.stringify(s.kesConversion), s.thresholdKesMinor.toString(), s.limit], type: QueryTypes.SELECT },
  );
  return rows.map(ctrDepositRow);
}
