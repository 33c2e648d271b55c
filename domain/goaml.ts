import { XMLBuilder } from 'fast-xml-parser';
import { formatAmount, type Currency } from './money';
import type { PaymentMethod } from './orders';

/**
 * goAML reports to Kenya's Financial Reporting Centre (docs/compliance.md#goaml-reports): a typed report in,
 * goAML XML out. Pure: the service gathers the movements and the settings, the repository keeps the XML.
 *
 * Elements are written in goAML's order (the XML schema is a sequence); amounts are exact decimal strings
 * made from minor units, never floats; text is escaped by the builder and stripped of the characters XML 1.0
 * cannot carry.
 */

export const GOAML_REPORT_KINDS = ['CTR', 'STR'] as const;
export type GoamlReportKind = (typeof GOAML_REPORT_KINDS)[number];

/**
 * goAML conduction types (`transmode_code`), as the FRC's lookup lists them for Kenya: `MM01` mobile money,
 * `EFT01` an electronic funds transfer (PesaLink, an internal transfer), `RTGS` a real-time gross settlement.
 * The list has no code for a virtual-asset transfer that we know of: a crypto movement carries goAML's
 * "unknown" value `-` with `transmode_comment` saying what it was (confirm with the FRC before filing).
 */
export type ConductionCode = 'MM01' | 'EFT01' | 'RTGS' | 'SWIFT' | '-';

/** goAML's "unknown" lookup value: the funds code of every side until the FRC's funds-type list is configured. */
export const UNKNOWN_CODE = '-';

/** The conduction type of a movement by its method (and, for a bank transfer, the route the money took). */
export function conductionOf(method: PaymentMethod, bankRoute?: string | null): { code: ConductionCode; comment?: string } {
  switch (method) {
    case 'mobile_money':
      return { code: 'MM01' };
    case 'bank_transfer':
      return bankRoute === 'rtgs' ? { code: 'RTGS' } : { code: 'EFT01', comment: bankRoute === 'pesalink' ? 'PesaLink' : undefined };
    case 'crypto':
      return { code: '-', comment: 'virtual asset transfer' };
    case 'p2p':
      return { code: '-', comment: 'P2P trade' };
  }
}

export interface GoamlAddress {
  /** goAML contact type code of the address (the FRC's list; e.g. the business address's code). */
  addressType: string;
  address: string;
  city: string;
  /** ISO 3166-1 alpha-2. */
  countryCode: string;
}

export interface GoamlPerson {
  firstName: string;
  lastName: string;
  email?: string;
  /** E.164. */
  phone?: string;
  occupation?: string;
  idNumber?: string;
}

export interface GoamlAccount {
  /** The institution holding it: a bank, "M-PESA", or the network of a crypto address. */
  institutionName: string;
  institutionCode?: string;
  nonBankInstitution?: boolean;
  /** The account number, phone number or address. */
  account: string;
  currency?: string;
  accountName?: string;
  /** The account's holder, when known. */
  holder?: GoamlPerson;
}

export interface GoamlEntity {
  name: string;
  incorporationNumber?: string;
}

/** One side of a transaction: a person, an account or an entity; `myClient` when it is Paygate's customer. */
export type GoamlParty = { myClient: boolean; country: string } & (
  { person: GoamlPerson } | { account: GoamlAccount } | { entity: GoamlEntity }
);

export interface GoamlTransaction {
  /** Unique within the reporting entity: the order's or deposit's id. */
  number: string;
  internalRef?: string;
  description?: string;
  at: Date;
  conduction: { code: ConductionCode; comment?: string };
  /** The amount in KES (the local currency), minor units. */
  amountLocalMinor: bigint;
  /** The movement's own amount when it was not in KES, with the reference rate it was converted at. */
  foreign?: { currency: Currency; amountMinor: bigint; rateToKes: string };
  from: GoamlParty;
  to: GoamlParty;
  comments?: string;
}

/** The reporting entity's registration with the FRC (`GOAML_*` settings). */
export interface GoamlReportingEntity {
  rentityId: number;
  branch?: string;
  reportingPerson: GoamlPerson;
  location: GoamlAddress;
}

export interface GoamlReport {
  kind: GoamlReportKind;
  /** Our reference for it (the report id). */
  entityReference: string;
  submittedAt: Date;
  entity: GoamlReportingEntity;
  reason?: string;
  action?: string;
  indicators?: string[];
  transactions: GoamlTransaction[];
}

/** What a report needs before it can be rendered; an STR says why, and has at least one transaction. */
export function reportProblems(report: GoamlReport): string[] {
  const problems: string[] = [];
  if (report.transactions.length === 0) problems.push('a goAML report needs at least one transaction');
  if (report.kind === 'STR' && !report.reason?.trim()) problems.push('an STR needs a reason');
  if (!Number.isInteger(report.entity.rentityId) || report.entity.rentityId < 1) problems.push('rentity_id must be a positive integer');
  return problems;
}

// XML 1.0 allows tab, newline, carriage return and the characters from U+0020 on (less the surrogates and
// U+FFFE/U+FFFF); anything else in customer-supplied text is dropped rather than producing a file the FRC refuses.
// eslint-disable-next-line no-control-regex
const NOT_XML = /[^\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text for an element: XML-safe characters only, cut to the schema's length (never an empty element). */
function text(value: string | undefined, max: number): string | undefined {
  if (value === undefined) return undefined;
  const clean = [...value.replace(NOT_XML, '').trim()].slice(0, max).join('');
  return clean === '' ? undefined : clean;
}

/** goAML's date-time: no zone, seconds precision; rendered in UTC. */
export const goamlDate = (at: Date): string => at.toISOString().slice(0, 19);

/** A goAML decimal: the exact amount, from minor units. */
export const goamlAmount = (minor: bigint, currency: Currency): string => formatAmount(minor, currency);

function person(p: GoamlPerson): Record<string, unknown> {
  return {
    first_name: text(p.firstName, 100) ?? UNKNOWN_CODE,
    last_name: text(p.lastName, 100) ?? UNKNOWN_CODE,
    id_number: text(p.idNumber, 255),
    phones: p.phone
      ? { phone: { tph_contact_type: UNKNOWN_CODE, tph_communication_type: UNKNOWN_CODE, tph_number: text(p.phone, 50) } }
      : undefined,
    email: text(p.email, 255),
    occupation: text(p.occupation, 255),
  };
}

function account(a: GoamlAccount): Record<string, unknown> {
  return {
    institution_name: text(a.institutionName, 255) ?? UNKNOWN_CODE,
    institution_code: text(a.institutionCode, 50),
    non_bank_institution: a.nonBankInstitution === undefined ? undefined : String(a.nonBankInstitution),
    account: text(a.account, 50) ?? UNKNOWN_CODE,
    currency_code: a.currency,
    account_name: text(a.accountName, 255),
    signatory: a.holder ? { is_primary: 'true', t_person: person(a.holder) } : undefined,
  };
}

function side(prefix: 'from' | 'to', party: GoamlParty, foreign: GoamlTransaction['foreign']): Record<string, unknown> {
  const subject =
    'person' in party
      ? { [`${prefix}_person`]: person(party.person) }
      : 'account' in party
        ? { [`${prefix}_account`]: account(party.account) }
        : {
            [`${prefix}_entity`]: {
              name: text(party.entity.name, 255) ?? UNKNOWN_CODE,
              incorporation_number: text(party.entity.incorporationNumber, 50),
            },
          };
  return {
    [`${prefix}_funds_code`]: UNKNOWN_CODE,
    [`${prefix}_foreign_currency`]: foreign
      ? {
          foreign_currency_code: foreign.currency,
          foreign_amount: goamlAmount(foreign.amountMinor, foreign.currency),
          foreign_exchange_rate: foreign.rateToKes,
        }
      : undefined,
    ...subject,
    [`${prefix}_country`]: party.country,
  };
}

function transaction(t: GoamlTransaction): Record<string, unknown> {
  return {
    transactionnumber: text(t.number, 100),
    internal_ref_number: text(t.internalRef, 100),
    transaction_description: text(t.description, 4000),
    date_transaction: goamlDate(t.at),
    transmode_code: t.conduction.code,
    transmode_comment: text(t.conduction.comment, 50),
    amount_local: goamlAmount(t.amountLocalMinor, 'KES'),
    [t.from.myClient ? 't_from_my_client' : 't_from']: side('from', t.from, t.foreign),
    [t.to.myClient ? 't_to_my_client' : 't_to']: side('to', t.to, t.foreign),
    comments: text(t.comments, 4000),
  };
}

const builder = new XMLBuilder({ format: true, indentBy: '  ', processEntities: true, suppressEmptyNode: true });

/** The report as goAML XML (UTF-8, with its declaration). Throws when `reportProblems` finds any. */
export function renderGoamlReport(report: GoamlReport): string {
  const problems = reportProblems(report);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const { entity } = report;
  const body = {
    report: {
      rentity_id: String(entity.rentityId),
      rentity_branch: text(entity.branch, 255),
      submission_code: 'E',
      report_code: report.kind,
      entity_reference: text(report.entityReference, 255),
      submission_date: goamlDate(report.submittedAt),
      currency_code_local: 'KES',
      reporting_person: person(entity.reportingPerson),
      location: {
        address_type: text(entity.location.addressType, 5) ?? UNKNOWN_CODE,
        address: text(entity.location.address, 100) ?? UNKNOWN_CODE,
        city: text(entity.location.city, 255) ?? UNKNOWN_CODE,
        country_code: entity.location.countryCode,
      },
      reason: text(report.reason, 4000),
      action: text(report.action, 4000),
      transaction: report.transactions.map(transaction),
      report_indicators: report.indicators?.length ? { indicator: report.indicators.map((i) => text(i, 25)) } : undefined,
    },
  };
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build(body)}`;
}

/** A person's full name as goAML's first and last name: the last word is the family name. */
export function splitName(fullName: string): { firstName: string; lastName: string } {
  const words = fullName.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { firstName: UNKNOWN_CODE, lastName: UNKNOWN_CODE };
  if (words.length === 1) return { firstName: words[0], lastName: words[0] };
  return { firstName: words.slice(0, -1).join(' '), lastName: words[words.length - 1] };
}
