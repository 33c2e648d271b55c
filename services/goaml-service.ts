import { AppError, notFound, validationError } from '../platform/errors';
import { config } from '../platform/config';
import { isUuid, uuidv7 } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import type { Caller } from '../domain/caller';
import { isStaff } from '../domain/caller';
import { usdToKesMinorCeil } from '../domain/compliance/report';
import {
  conductionOf,
  renderGoamlReport,
  reportProblems,
  splitName,
  type GoamlParty,
  type GoamlPerson,
  type GoamlReport,
  type GoamlReportingEntity,
  type GoamlTransaction,
} from '../domain/goaml';
import { CURRENCY_SCALE, decimalToScaled, formatAmount, isCurrency } from '../domain/money';
import type { PaymentMethod } from '../domain/orders';
import { railMethodOf, type DepositChannel } from '../domain/wallets';
import {
  completedDepositsAtOrAbove,
  completedOrdersAtOrAbove,
  findGoamlReportXml,
  insertGoamlReport,
  type CtrDepositRow,
  type CtrOrderRow,
  type CustomerFacts,
  type GoamlReportRecord,
} from '../repositories/goaml-reports';
import { inTransaction, type Tx } from '../repositories/transaction';
import { recordStaffAction } from './audit';
import { parseInstant } from './instants';

/**
 * goAML reports to the Financial Reporting Centre (docs/compliance.md#goaml-reports): CTRs over the completed
 * movements at or above the CTR threshold, kept as rendered; STRs rendered from a case's facts. Compliance
 * staff with their login only, never an API key; nothing here reaches the customer (no tipping off).
 */

const log = componentLogger('goaml');

/** The longest period one CTR covers. */
export const CTR_MAX_PERIOD_DAYS = 31;

const FX_SCALE = 8;

/** What a report creation answers: the report's id and what it holds. */
export interface GoamlReportView {
  report_id: string;
  kind: 'CTR' | 'STR';
  period: { from: string; to: string } | null;
  created_by: string;
  created_at: string;
  /** Threshold the CTR applied (KES, a decimal string). */
  threshold_kes: string | null;
  counts: { transactions: number; orders: number; deposits: number };
  /** Sum of the transactions' KES amounts (a decimal string). */
  total_kes: string;
  /** Where the XML is read. */
  xml_url: string;
}

const reportView = (r: GoamlReportRecord, counts: { orders: number; deposits: number }): GoamlReportView => ({
  report_id: r.id,
  kind: r.kind,
  period: r.periodFrom && r.periodTo ? { from: r.periodFrom.toISOString(), to: r.periodTo.toISOString() } : null,
  created_by: r.createdBy,
  created_at: r.createdAt.toISOString(),
  threshold_kes: r.thresholdKesMinor === null ? null : formatAmount(r.thresholdKesMinor, 'KES'),
  counts: { transactions: r.transactionCount, ...counts },
  total_kes: formatAmount(r.totalKesMinor, 'KES'),
  xml_url: `/api/v1/compliance/goaml/${r.id}.xml`,
});

/** goAML reports are compliance staff's, made and read with their own login (docs/compliance.md#goaml-reports). */
function assertStaffInPerson(caller: Caller): void {
  if (caller.key) throw new AppError('forbidden', 'goAML reports are made and read by staff with their login, never with an API key');
  if (!isStaff(caller)) throw new AppError('forbidden', 'goAML reports are for compliance staff');
}

/** The CTR threshold in KES minor units: `CTR_THRESHOLD_KES`, else `CTR_THRESHOLD_USD` at the reference USD rate. */
export function ctrThresholdKesMinor(): bigint {
  const cfg = config();
  if (cfg.goaml.ctrThresholdKes !== undefined) return decimalToScaled(cfg.goaml.ctrThresholdKes, CURRENCY_SCALE.KES);
  return usdToKesMinorCeil(cfg.compliance.ctrThresholdUsd, cfg.limits.fxToKes.USD);
}

/** The reporting entity from the `GOAML_*` settings; a 503 naming what is missing when it is not configured. */
export function reportingEntity(): GoamlReportingEntity {
  const g = config().goaml;
  const missing = [
    g.rentityId === undefined ? 'GOAML_RENTITY_ID' : null,
    g.reportingPerson.fullName === undefined ? 'GOAML_REPORTING_PERSON_NAME' : null,
    g.location.address === undefined ? 'GOAML_LOCATION_ADDRESS' : null,
  ].filter((name): name is string => name !== null);
  if (g.rentityId === undefined || g.reportingPerson.fullName === undefined || g.location.address === undefined) {
    throw new AppError('dependency_unavailable', `goAML reporting is not configured: set ${missing.join(', ')}`);
  }
  return {
    rentityId: g.rentityId,
    branch: g.rentityBranch,
    reportingPerson: {
      ...splitName(g.reportingPerson.fullName),
      email: g.reportingPerson.email,
      phone: g.reportingPerson.phone,
      occupation: g.reportingPerson.occupation,
    },
    location: { addressType: '-', address: g.location.address, city: g.location.city, countryCode: 'KE' },
  };
}

/** Each configured currency's conversion to KES minor units, as the deposit selection computes it in NUMERIC. */
export function kesConversion(): Record<string, { rate: string; den: string }> {
  const rates = config().limits.fxToKes;
  const out: Record<string, { rate: string; den: string }> = {};
  for (const [currency, rate] of Object.entries(rates)) {
    if (!isCurrency(currency)) continue;
    out[currency] = {
      rate: decimalToScaled(rate, FX_SCALE).toString(),
      den: (10n ** BigInt(CURRENCY_SCALE[currency] + FX_SCALE)).toString(),
    };
  }
  return out;
}

const customerPerson = (c: CustomerFacts): GoamlPerson => ({
  ...splitName(c.fullName),
  email: c.email,
  phone: c.phone ?? undefined,
});

/** Paygate's customer, as a goAML "my client" side: the person who holds the wallet. */
const myClient = (c: CustomerFacts): GoamlParty => ({ myClient: true, country: 'KE', person: customerPerson(c) });

const foreignOf = (currency: string, amountMinor: bigint): GoamlTransaction['foreign'] => {
  if (currency === 'KES' || !isCurrency(currency)) return undefined;
  return { currency, amountMinor, rateToKes: config().limits.fxToKes[currency] ?? '0' };
};

/** Where a payout went, as the counterparty's account: a phone on a mobile-money network, a bank account, an address. */
function payee(method: PaymentMethod, d: Record<string, string>, currency: string): GoamlParty {
  switch (method) {
    case 'mobile_money':
      return {
        myClient: false,
        country: 'KE',
        account: {
          institutionName: d.provider === 'airtel_money' ? 'Airtel Money' : 'M-PESA',
          nonBankInstitution: true,
          account: d.phone ?? '-',
        },
      };
    case 'bank_transfer':
      return {
        myClient: false,
        country: 'KE',
        account: {
          institutionName: `CBK bank ${d.bank_code ?? '-'}`,
          institutionCode: d.bank_code,
          account: d.account_number ?? '-',
          accountName: d.account_name,
          currency,
        },
      };
    case 'crypto':
      return d.exchange_id
        ? {
            myClient: false,
            country: 'KE',
            account: { institutionName: d.exchange_id, nonBankInstitution: true, account: d.account_ref ?? '-', currency },
          }
        : {
            myClient: false,
            country: 'KE',
            account: { institutionName: `${d.network ?? 'crypto'} address`, nonBankInstitution: true, account: d.address ?? '-', currency },
          };
    case 'p2p':
      return { myClient: false, country: 'KE', entity: { name: `P2P ad ${d.ad_id ?? '-'}` } };
  }
}

/** A payout: from the customer's wallet to where it went. */
export function orderTransaction(o: CtrOrderRow): GoamlTransaction {
  const method = o.method as PaymentMethod;
  return {
    number: o.id,
    internalRef: o.railReference ?? undefined,
    description: `${method} payout`,
    at: o.createdAt,
    conduction: conductionOf(method, o.route),
    amountLocalMinor: o.kesEquivalentMinor,
    foreign: foreignOf(o.currency, o.amountMinor),
    from: myClient(o),
    to: payee(method, o.destination, o.currency),
  };
}

/** A deposit: from the payer (a phone, a bank sender, an address) into the customer's wallet. */
export function depositTransaction(d: CtrDepositRow): GoamlTransaction {
  const method = railMethodOf(d.channel as DepositChannel);
  const payer: GoamlParty =
    method === 'crypto'
      ? {
          myClient: false,
          country: 'KE',
          account: { institutionName: 'crypto address', nonBankInstitution: true, account: d.payerAddress ?? '-', currency: d.currency },
        }
      : method === 'mobile_money'
        ? {
            myClient: false,
            country: 'KE',
            account: {
              institutionName: 'M-PESA',
              nonBankInstitution: true,
              account: d.payerPhone ?? '-',
              accountName: d.payerName ?? undefined,
            },
          }
        : d.payerName
          ? { myClient: false, country: 'KE', person: { ...splitName(d.payerName), phone: d.payerPhone ?? undefined } }
          : { myClient: false, country: 'KE', entity: { name: 'unknown bank sender' } };
  return {
    number: d.id,
    internalRef: d.providerReference ?? undefined,
    description: `${d.channel} deposit`,
    at: d.createdAt,
    conduction: conductionOf(method),
    amountLocalMinor: d.kesEquivalentMinor,
    foreign: foreignOf(d.currency, d.amountMinor),
    from: payer,
    to: myClient(d),
  };
}

export interface CtrRequest {
  from: string;
  to: string;
}

/**
 * Make a CTR for a period: every completed order and deposit created in it whose KES equivalent is at or above
 * the CTR threshold, rendered as goAML XML and kept (append-only) with its audit entry in one transaction.
 * A period with none is a 409 (goAML has no empty report); one with more than `COMPLIANCE_REPORT_MAX_ROWS`
 * movements is a 400 asking for a shorter period.
 */
export async function createCtrReport(caller: Caller, body: CtrRequest): Promise<GoamlReportView> {
  assertStaffInPerson(caller);
  const from = parseInstant(body.from, 'from', true);
  const to = parseInstant(body.to, 'to', true);
  if (from >= to) throw validationError('to', 'must be after from');
  if (to.getTime() - from.getTime() > CTR_MAX_PERIOD_DAYS * 24 * 60 * 60 * 1000) {
    throw validationError('to', `a CTR covers at most ${CTR_MAX_PERIOD_DAYS} days`);
  }
  if (to.getTime() > Date.now()) throw validationError('to', 'must not be in the future');
  const entity = reportingEntity();
  const threshold = ctrThresholdKesMinor();
  const maxRows = config().compliance.reportMaxRows;
  const selection = { from, to, thresholdKesMinor: threshold, kesConversion: kesConversion(), limit: maxRows + 1 };
  const [orders, deposits] = await Promise.all([completedOrdersAtOrAbove(selection), completedDepositsAtOrAbove(selection)]);
  if (orders.length + deposits.length > maxRows) {
    throw new AppError('validation_failed', `more than ${maxRows} movements at or above the threshold: ask for a shorter period`, {
      errors: [{ field: 'to', message: 'the period holds too many movements for one report' }],
    });
  }
  const transactions = [...orders.map(orderTransaction), ...deposits.map(depositTransaction)].sort(
    (a, b) => a.at.getTime() - b.at.getTime() || a.number.localeCompare(b.number),
  );
  if (transactions.length === 0) {
    throw new AppError('conflict', 'no completed movement in the period is at or above the CTR threshold: there is nothing to report');
  }
  const id = uuidv7();
  const createdAt = new Date();
  const xml = renderGoamlReport({
    kind: 'CTR',
    entityReference: id,
    submittedAt: createdAt,
    entity,
    reason: `Cash transaction report: movements at or above KES ${formatAmount(threshold, 'KES')} from ${from.toISOString()} to ${to.toISOString()}`,
    transactions,
  });
  const total = transactions.reduce((sum, t) => sum + t.amountLocalMinor, 0n);
  const stored = await inTransaction(async (tx) => {
    const report = await insertGoamlReport(
      {
        id,
        kind: 'CTR',
        periodFrom: from,
        periodTo: to,
        createdBy: caller.id,
        createdAt,
        transactionCount: transactions.length,
        totalKesMinor: total,
        thresholdKesMinor: threshold,
        xml,
      },
      tx,
    );
    await recordStaffAction(tx, {
      by: caller,
      action: 'goaml_report.created',
      subjectType: 'goaml_report',
      subjectId: id,
      before: null,
      after: {
        kind: 'CTR',
        period_from: from.toISOString(),
        period_to: to.toISOString(),
        threshold_kes: formatAmount(threshold, 'KES'),
        transactions: transactions.length,
        total_kes: formatAmount(total, 'KES'),
      },
    });
    return report;
  });
  log.info({ reportId: id, transactions: transactions.length }, 'goAML CTR created');
  return reportView(stored, { orders: orders.length, deposits: deposits.length });
}

/** A stored report's XML, for compliance staff: 404 when there is none, 400 when the id is not a UUID. */
export async function goamlReportXml(caller: Caller, reportId: string): Promise<{ xml: string; filename: string }> {
  assertStaffInPerson(caller);
  if (!isUuid(reportId)) throw validationError('report_id', 'must be a UUID');
  const found = await findGoamlReportXml(reportId);
  if (!found) throw notFound('goAML report');
  return { xml: found.xml, filename: `goaml-${found.report.kind.toLowerCase()}-${found.report.id}.xml` };
}

/** What an STR is made from: a case's facts (the cases themselves come with transaction monitoring). */
export interface StrInput {
  /** The case's id: the report's `entity_reference`. */
  caseId: string;
  /** Why the movements are suspicious, in words: the grounds for suspicion. */
  reason: string;
  /** What was done: held, refused, the account frozen. */
  action?: string;
  /** goAML report indicator codes (the FRC's list). */
  indicators?: string[];
  transactions: GoamlTransaction[];
}

/** Render an STR from a case's facts with the configured reporting entity (pure but for the settings). */
export function renderStr(input: StrInput, submittedAt: Date = new Date()): string {
  const report: GoamlReport = {
    kind: 'STR',
    entityReference: input.caseId,
    submittedAt,
    entity: reportingEntity(),
    reason: input.reason,
    action: input.action,
    indicators: input.indicators,
    transactions: input.transactions,
  };
  const problems = reportProblems(report);
  if (problems.length > 0) throw validationError('report', problems.join('; '));
  return renderGoamlReport(report);
}

/**
 * Render and keep a case's STR in `tx` (the case's closure), audited as `goaml_report.created`: its id, served
 * by `GET /compliance/goaml/{report_id}.xml`. A case whose alerts name no payout or deposit is a 409.
 */
export async function keepStr(
  caller: Caller,
  input: Omit<StrInput, 'transactions'> & { orders: CtrOrderRow[]; deposits: CtrDepositRow[] },
  tx: Tx,
): Promise<string> {
  const transactions = [...input.orders.map(orderTransaction), ...input.deposits.map(depositTransaction)].sort(
    (a, b) => a.at.getTime() - b.at.getTime() || a.number.localeCompare(b.number),
  );
  if (transactions.length === 0) throw new AppError('conflict', "the case's alerts name no payout or deposit to report");
  const id = uuidv7();
  const createdAt = new Date();
  const xml = renderStr(
    { caseId: input.caseId, reason: input.reason, action: input.action, indicators: input.indicators, transactions },
    createdAt,
  );
  const total = transactions.reduce((sum, t) => sum + t.amountLocalMinor, 0n);
  await insertGoamlReport(
    {
      id,
      kind: 'STR',
      periodFrom: null,
      periodTo: null,
      createdBy: caller.id,
      createdAt,
      transactionCount: transactions.length,
      totalKesMinor: total,
      thresholdKesMinor: null,
      xml,
    },
    tx,
  );
  await recordStaffAction(tx, {
    by: caller,
    action: 'goaml_report.created',
    subjectType: 'goaml_report',
    subjectId: id,
    before: null,
    after: { kind: 'STR', case_id: input.caseId, transactions: transactions.length, total_kes: formatAmount(total, 'KES') },
  });
  log.info({ reportId: id, caseId: input.caseId, transactions: transactions.length }, 'goAML STR created');
  return id;
}
