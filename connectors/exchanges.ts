import { z } from 'zod';
import type { ExchangeFees, ExchangeSource, ExchangeStatus, ExchangeUrls } from '../domain/discovery/exchanges';
import { SANDBOX_MAINTENANCE_EXCHANGE } from './sandbox';

/**
 * The crypto exchanges Paygate knows, from the metadata `ccxt` ships (no network needed): id, name,
 * countries, URLs, capabilities (`has`), trading fees, certified and pro. ccxt is large (about 60 MB and
 * 0.4 s to load, another 0.8 s to instantiate every exchange), and its metadata cannot change while a
 * process runs, so it is loaded on first use and read once per process.
 */

export { EXCHANGE_STATUSES } from '../domain/discovery/exchanges';
export type { ExchangeFees, ExchangeSource, ExchangeStatus, ExchangeUrls } from '../domain/discovery/exchanges';

export interface ExchangeEntry {
  id: string;
  name: string;
  /** ISO 3166-1 alpha-2 codes (plus `EU`). */
  countries: string[];
  urls: ExchangeUrls;
  /** The `has` capabilities ccxt reports as supported (e.g. `fetchTicker`, `withdraw`), sorted. */
  capabilities: string[];
  fees: ExchangeFees;
  certified: boolean;
  pro: boolean;
  source: ExchangeSource;
  /** A status the source knows by itself (the sandbox); otherwise only the live probe can tell. */
  fixedStatus?: ExchangeStatus;
  /** Which live call answers for the exchange's status, if any. */
  probeWith: 'fetchStatus' | 'fetchTime' | null;
}

export interface ExchangeCatalogue {
  entries: ExchangeEntry[];
  /** Every capability name the source knows, supported or not: what `?capability=` may ask for. */
  knownCapabilities: string[];
}

/** The narrow slice of a ccxt exchange instance Paygate uses. */
export interface CcxtExchange {
  describe(): unknown;
  fetchStatus(): Promise<unknown>;
  fetchTime(): Promise<unknown>;
}
type CcxtExchangeClass = new (options?: Record<string, unknown>) => CcxtExchange;
interface CcxtModule {
  exchanges: string[];
  [id: string]: unknown;
}

let ccxtModule: CcxtModule | undefined;

/** ccxt, loaded on first use: the api never pays for it, the jobs process only when it refreshes. */
export function loadCcxt(): CcxtModule {
  if (!ccxtModule) {
    // A plain require keeps ccxt's 100k lines of typings out of the build; we read it through CcxtModule.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require('ccxt') as CcxtModule;
    if (!Array.isArray(loaded.exchanges)) throw new Error('ccxt did not export its list of exchanges');
    ccxtModule = loaded;
  }
  return ccxtModule;
}

/** A fresh ccxt instance of one exchange, with a request timeout. */
export function ccxtExchange(id: string, options: Record<string, unknown> = {}): CcxtExchange {
  const ccxt = loadCcxt();
  const constructor = ccxt[id];
  if (typeof constructor !== 'function' || !ccxt.exchanges.includes(id)) throw new Error(`ccxt has no exchange "${id}"`);
  return new (constructor as CcxtExchangeClass)(options);
}

const urlValue = z.union([z.string(), z.array(z.unknown()), z.record(z.string(), z.unknown())]).optional();

const describedSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().min(1),
  countries: z.array(z.string()).optional(),
  urls: z.looseObject({ www: urlValue, doc: urlValue, api: urlValue, fees: urlValue, logo: urlValue }).optional(),
  has: z.record(z.string(), z.unknown()),
  fees: z.looseObject({ trading: z.looseObject({}).optional() }).optional(),
  certified: z.boolean().optional(),
  pro: z.boolean().optional(),
});

/** Every URL string inside a ccxt `urls` value (a string, a list, or a map of named endpoints). */
function urlsIn(value: unknown): string[] {
  if (typeof value === 'string') return /^https?:\/\//.test(value) ? [value] : [];
  if (Array.isArray(value)) return [...new Set(value.flatMap(urlsIn))];
  if (value && typeof value === 'object') return [...new Set(Object.values(value).flatMap(urlsIn))];
  return [];
}

/** ccxt writes `UK` for the United Kingdom (ISO: `GB`) and once a locale (`pt-BR`); keep ISO codes. */
export function normaliseCountry(raw: string): string | null {
  const code = raw.trim().toUpperCase().split('-').pop() ?? '';
  if (code === 'UK') return 'GB';
  return /^[A-Z]{2}$/.test(code) ? code : null;
}

const numberOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const booleanOrNull = (value: unknown): boolean | null => (typeof value === 'boolean' ? value : null);

/** One exchange's catalogue entry from its ccxt description. */
export function entryFromDescription(described: unknown): ExchangeEntry {
  const d = describedSchema.parse(described);
  const trading = d.fees?.trading ?? {};
  const has = d.has;
  return {
    id: d.id,
    name: d.name,
    countries: [...new Set((d.countries ?? []).map(normaliseCountry).filter((c): c is string => c !== null))].sort(),
    urls: {
      www: urlsIn(d.urls?.www)[0] ?? null,
      doc: urlsIn(d.urls?.doc),
      api: urlsIn(d.urls?.api),
      fees: urlsIn(d.urls?.fees),
      logo: urlsIn(d.urls?.logo)[0] ?? null,
    },
    capabilities: Object.keys(has)
      .filter((name) => has[name] === true)
      .sort(),
    fees: {
      maker: numberOrNull(trading.maker),
      taker: numberOrNull(trading.taker),
      percentage: booleanOrNull(trading.percentage),
      tier_based: booleanOrNull(trading.tierBased),
    },
    certified: d.certified === true,
    pro: d.pro === true,
    source: 'ccxt',
    probeWith: has.fetchStatus === true ? 'fetchStatus' : has.fetchTime === true ? 'fetchTime' : null,
  };
}

let ccxtCatalogue: ExchangeCatalogue | undefined;

/** Every exchange ccxt knows, described offline. Built once per process (see above). */
export function ccxtExchanges(): ExchangeCatalogue {
  if (!ccxtCatalogue) {
    const ccxt = loadCcxt();
    const known = new Set<string>();
    const entries = ccxt.exchanges.map((id) => {
      const described = ccxtExchange(id).describe();
      const entry = entryFromDescription(described);
      for (const name of Object.keys((described as { has: Record<string, unknown> }).has)) known.add(name);
      return { ...entry, id };
    });
    ccxtCatalogue = { entries, knownCapabilities: [...known].sort() };
  }
  return ccxtCatalogue;
}

/**
 * The sandbox rail's own exchanges, listed while the crypto rail is the sandbox so that its magic values
 * are discoverable and payable like any other exchange: `sandbox_maintenance` is always in maintenance.
 */
export function sandboxExchanges(): ExchangeEntry[] {
  return [
    {
      id: SANDBOX_MAINTENANCE_EXCHANGE,
      name: 'Sandbox exchange (always in maintenance)',
      countries: [],
      urls: { www: null, doc: [], api: [], fees: [], logo: null },
      capabilities: ['fetchStatus', 'withdraw'],
      fees: { maker: null, taker: null, percentage: null, tier_based: null },
      certified: false,
      pro: false,
      source: 'sandbox',
      fixedStatus: 'maintenance',
      probeWith: null,
    },
  ];
}

/** What a refresh reads: ccxt's exchanges, plus the sandbox rail's while it is in use. */
export function discoverExchanges(options: { includeSandbox: boolean }): ExchangeCatalogue {
  const fromCcxt = ccxtExchanges();
  if (!options.includeSandbox) return fromCcxt;
  return { entries: [...fromCcxt.entries, ...sandboxExchanges()], knownCapabilities: fromCcxt.knownCapabilities };
}
