import { config } from '../platform/config';
import { AppError, type FieldError } from '../platform/errors';
import { ADDITIONAL_BANK_CAPABILITIES, PRIMARY_BANK_CAPABILITIES } from '../domain/discovery/bank-registry';
import { normaliseCountry, type ExchangeFees, type ExchangeSource, type ExchangeStatus, type ExchangeUrls } from '../connectors/exchanges';
import { routesInto, type BankRoute } from '../domain/discovery/routing';
import {
  activeBanks,
  lastRefresh,
  listActiveExchanges,
  type BankRecord,
  type ExchangeFilter,
  type ExchangeRecord,
} from '../repositories/catalogue';
import { railConnectors } from './connectors';
import { decodeCursorKey, keysetPage, pageLimit, type Page } from './paging';

export interface ExchangeView {
  /** The ccxt id; a crypto payment names it as `destination.exchange_id`. */
  id: string;
  name: string;
  /** ISO 3166-1 alpha-2 codes (plus `EU`) of the countries the exchange is based in. */
  countries: string[];
  urls: ExchangeUrls;
  /** The ccxt `has` capabilities the exchange supports, e.g. `fetchTicker`, `withdraw`, `fetchStatus`. */
  capabilities: string[];
  fees: ExchangeFees;
  /** Certified by ccxt (its integration is reviewed and maintained to a higher standard). */
  certified: boolean;
  /** ccxt pro (websocket streams) supports it. */
  pro: boolean;
  /** `ccxt`, or `sandbox` for the sandbox rail's simulated exchanges. */
  source: ExchangeSource;
  /**
   * Live status from the last probe (`fetchStatus`, else `fetchTime`): `ok`, `maintenance`, `shutdown`,
   * `error`, or `unknown` when the exchange could not be asked or did not answer in time.
   */
  status: ExchangeStatus;
  /** When the status was last checked; null when it never was. */
  checked_at: string | null;
}

export interface ExchangeList extends Page<ExchangeView> {
  /** When the catalogue was last refreshed; null before the first refresh. */
  refreshed_at: string | null;
}

export interface ExchangeQuery {
  q?: string;
  country?: string;
  capability?: string;
  certified?: boolean;
  limit?: number;
  cursor?: string;
}

export interface BankView {
  /** CBK bank code; a bank transfer names it as `destination.bank_code`. */
  code: string;
  name: string;
  swift_bic: string | null;
  /** False when the SWIFT/BIC came from a single public directory and is not confirmed by a second source. */
  swift_bic_confirmed: boolean;
  /** The bank takes PesaLink transfers. */
  pesalink: boolean;
  /** What Paygate can do with the bank: `payments` (pay into it); the primary bank adds `balance` and `transactions`. */
  capabilities: string[];
  /** How a payment into this bank leaves the primary bank: `internal`, `pesalink` (KES up to 999,999.00), `rtgs`. */
  routes: BankRoute[];
  /** Where the registry row comes from. */
  source: string;
  /** When the registry row was last checked against its source (YYYY-MM-DD). */
  verified_on: string;
}

export interface PrimaryBankView extends BankView {
  /** From the primary bank connector's health check: `up`, `down`, or `unknown` when it did not answer in time. */
  status: 'up' | 'down' | 'unknown';
  checked_at: string;
}

export interface BankDirectory {
  /** The bank Paygate holds its accounts at and sends every bank transfer through (`PRIMARY_BANK_CODE`). */
  primary: PrimaryBankView | null;
  /** Every other bank Paygate can pay into, by code. */
  additional: BankView[];
  /** When the catalogue was last refreshed; null before the first refresh. */
  refreshed_at: string | null;
}

const EXCHANGE_ID = /^[a-z0-9_]{1,64}$/;

function toExchangeView(e: ExchangeRecord): ExchangeView {
  return {
    id: e.id,
    name: e.name,
    countries: e.countries,
    urls: e.urls,
    capabilities: e.capabilities,
    fees: e.fees,
    certified: e.certified,
    pro: e.pro,
    source: e.source,
    status: e.status,
    checked_at: e.checkedAt ? e.checkedAt.toISOString() : null,
  };
}

/** Active exchanges by id, filtered and keyset-paged; every bad filter is named in one 400. */
export async function listExchanges(query: ExchangeQuery): Promise<ExchangeList> {
  const errors: FieldError[] = [];
  let limit = 20;
  try {
    limit = pageLimit(query.limit);
  } catch {
    errors.push({ field: 'limit', message: 'must be an integer from 1 to 100' });
  }
  const refresh = await lastRefresh('exchanges');
  const filter: ExchangeFilter = {};

  if (query.q !== undefined) {
    const text = query.q.trim();
    if (text.length < 1 || text.length > 100) errors.push({ field: 'q', message: 'must be 1 to 100 characters' });
    else filter.text = text;
  }
  if (query.country !== undefined) {
    const code = /^[A-Za-z]{2}$/.test(query.country) ? normaliseCountry(query.country) : null;
    if (!code) errors.push({ field: 'country', message: 'must be an ISO 3166-1 alpha-2 country code (or EU), e.g. US' });
    else filter.country = code;
  }
  if (query.capability !== undefined) {
    const known = refresh?.knownCapabilities ?? [];
    const wanted = query.capability.toLowerCase();
    const capability = known.length > 0 ? known.find((k) => k.toLowerCase() === wanted) : query.capability;
    if (!capability || !/^[A-Za-z][A-Za-z0-9]{0,63}$/.test(capability)) {
      errors.push({ field: 'capability', message: 'is not a capability ccxt knows, e.g. fetchTicker, fetchStatus, withdraw' });
    } else filter.capability = capability;
  }
  if (query.certified !== undefined) filter.certified = query.certified;
  if (query.cursor !== undefined) {
    try {
      [filter.after] = decodeCursorKey(query.cursor, [EXCHANGE_ID]);
    } catch {
      errors.push({ field: 'cursor', message: 'is not a cursor returned by this endpoint' });
    }
  }
  if (errors.length > 0) {
    throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  }

  const rows = await listActiveExchanges(filter, limit + 1);
  return {
    ...keysetPage(rows, limit, toExchangeView),
    refreshed_at: refresh ? refresh.refreshedAt.toISOString() : null,
  };
}

const HEALTH_TTL_MS = 15_000;
const HEALTH_TIMEOUT_MS = 2_000;
let health: { status: PrimaryBankView['status']; checkedAt: Date } | undefined;

/** The primary bank connector's health, asked at most every 15 s and never waited on for more than 2 s. */
async function primaryBankHealth(): Promise<{ status: PrimaryBankView['status']; checkedAt: Date }> {
  if (health && Date.now() - health.checkedAt.getTime() < HEALTH_TTL_MS) return health;
  const primaryConnector = railConnectors().bank_transfer;
  const checkedAt = new Date();
  let timer: NodeJS.Timeout | undefined;
  const status = await Promise.race([
    primaryConnector.health().catch(() => 'unknown' as const),
    new Promise<'unknown'>((resolve) => {
      timer = setTimeout(() => resolve('unknown'), HEALTH_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  health = { status, checkedAt };
  return health;
}

function toBankView(b: BankRecord, primaryCode: string): BankView {
  const primary = b.code === primaryCode;
  return {
    code: b.code,
    name: b.name,
    swift_bic: b.swiftBic,
    swift_bic_confirmed: b.swiftBicConfirmed,
    pesalink: b.pesalink,
    capabilities: [...(primary ? PRIMARY_BANK_CAPABILITIES : ADDITIONAL_BANK_CAPABILITIES)],
    routes: routesInto(b.code, primaryCode, b.pesalink),
    source: b.source,
    verified_on: b.verifiedOn,
  };
}

/** The primary bank (with its live status) and every other active bank. */
export async function bankDirectory(): Promise<BankDirectory> {
  const primaryCode = config().discovery.primaryBankCode;
  const [banks, refresh] = await Promise.all([activeBanks(), lastRefresh('banks')]);
  const primaryRow = banks.find((b) => b.code === primaryCode);
  let primary: PrimaryBankView | null = null;
  if (primaryRow) {
    const { status, checkedAt } = await primaryBankHealth();
    primary = { ...toBankView(primaryRow, primaryCode), status, checked_at: checkedAt.toISOString() };
  }
  return {
    primary,
    additional: banks.filter((b) => b.code !== primaryCode).map((b) => toBankView(b, primaryCode)),
    refreshed_at: refresh ? refresh.refreshedAt.toISOString() : null,
  };
}
