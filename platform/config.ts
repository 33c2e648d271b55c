import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * The one place Paygate reads its environment. Every process calls `loadConfig()` at boot;
 * a bad or missing setting stops it with a message naming the variable.
 */

const DEV_JWT_SECRET = 'paygate-dev-secret-change-me-0123456789abcdef';
const DEV_SANDBOX_CALLBACK_SECRET = 'paygate-sandbox-callback-secret';
const DEV_METRICS_TOKEN = 'paygate-dev-metrics-token-change-me';

/** The secrets with a built-in (public) default, taken only by a local development or test run. */
const DEFAULTED_SECRETS = {
  JWT_SECRET: DEV_JWT_SECRET,
  SANDBOX_CALLBACK_SECRET: DEV_SANDBOX_CALLBACK_SECRET,
  METRICS_TOKEN: DEV_METRICS_TOKEN,
} as const;

/** A listen address only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/** A local run: development or test, listening on loopback. Only it may take public defaults or mix worlds. */
export const isLocalRun = (c: { env: string; http: { host: string } }): boolean =>
  (c.env === 'development' || c.env === 'test') && isLoopbackHost(c.http.host);

/** The variable that picks each method's rail. */
export const RAIL_VARIABLES = { bank_transfer: 'RAIL_BANK_TRANSFER', mobile_money: 'RAIL_MOBILE_MONEY', crypto: 'RAIL_CRYPTO' } as const;

const intFrom = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(fallback);
const boolFrom = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/** Express's named subnets (proxy-addr): 127.0.0.1/8 and ::1/128; 169.254.0.0/16 and fe80::/10; 10/8, 172.16/12, 192.168/16, fc00::/7. */
const NAMED_SUBNETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrSubnet(entry: string): boolean {
  if (NAMED_SUBNETS.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0 || entry.includes('%')) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * Which peers may speak for the client in X-Forwarded-For: a hop count (how many proxies stand in front,
 * 0 = none, the default) or a comma-separated list of the proxies' addresses and subnets. Never `true`:
 * trusting every peer lets any client pick the address its login and registration limits are counted on.
 */
const trustProxy = z
  .string()
  .trim()
  .default('0')
  .transform((raw, ctx): number | string[] => {
    if (raw === '') return 0;
    if (/^\d{1,3}$/.test(raw)) return Number(raw);
    if (/^(true|false|yes|no|on|off)$/i.test(raw)) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a hop count (e.g. 1) or a comma-separated list of proxy addresses or CIDRs (e.g. 10.0.0.0/8), not "${raw}": trusting every peer lets clients choose their address`,
      });
      return z.NEVER;
    }
    const entries = raw
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const bad = entries.filter((entry) => !isAddressOrSubnet(entry));
    if (entries.length === 0 || bad.length > 0) {
      ctx.addIssue({ code: 'custom', message: `not an IP address or CIDR: "${bad.join('", "')}"` });
      return z.NEVER;
    }
    return entries;
  });

/** Safaricom's published Daraja callback addresses (docs/wallets.md#money-in-is-proven). */
const SAFARICOM_CALLBACK_IPS =
  '196.201.214.200,196.201.214.206,196.201.213.114,196.201.214.207,196.201.214.208,196.201.213.44,' +
  '196.201.212.127,196.201.212.138,196.201.212.129,196.201.212.136,196.201.212.74,196.201.212.69';

/** A comma-separated list of IP addresses and CIDRs (no named subnets: each source is spelt out). */
const addressList = (fallback: string) =>
  z
    .string()
    .trim()
    .default(fallback)
    .transform((raw, ctx): string[] => {
      const entries = raw
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
      const bad = entries.filter((entry) => NAMED_SUBNETS.has(entry) || !isAddressOrSubnet(entry));
      if (bad.length > 0) {
        ctx.addIssue({ code: 'custom', message: `not an IP address or CIDR: "${bad.join('", "')}"` });
        return z.NEVER;
      }
      return entries;
    });

/** A flat fee in KES (two decimals at most). */
const feeFlat = z
  .string()
  .regex(/^\d{1,9}(\.\d{1,2})?$/, 'must be a KES amount such as 30 or 12.50')
  .default('0');
/** A percentage of the amount, 0 to 100, four decimals at most. */
const feePercent = z
  .string()
  .regex(/^\d{1,3}(\.\d{1,4})?$/, 'must be a percentage such as 1.5')
  .refine((v) => Number(v.split('.')[0]) < 100 || /^100(\.0*)?$/.test(v), 'must be at most 100')
  .default('0');

const fxRates = z
  .string()
  .default('USD=129.00,USDT=129.00,USDC=129.00,BTC=11000000,ETH=400000')
  .transform((raw, ctx) => {
    const rates: Record<string, string> = { KES: '1' };
    for (const pair of raw
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const [code, rate] = pair.split('=');
      if (!code || !rate || !/^\d+(\.\d+)?$/.test(rate)) {
        ctx.addIssue({ code: 'custom', message: `expected CODE=RATE pairs, got "${pair}"` });
        return z.NEVER;
      }
      rates[code.toUpperCase()] = rate;
    }
    return rates;
  });

/** Which environment variable each setting is read from. */
const variables = z.registry<{ name: string }>();

/** A setting read from the environment variable `name`, checked and converted by `schema`. */
function fromEnv<S extends z.ZodType>(name: string, schema: S): S {
  const setting = schema.clone();
  variables.add(setting, { name });
  return setting;
}

/** A decimal amount of KES. */
const kesAmount = (fallback: string) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .default(fallback);
/** A comma-separated list of paths or URLs. */
const sourceList = z
  .string()
  .trim()
  .optional()
  .transform((raw) =>
    (raw ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
/** A provider's base URL, without its trailing slash. */
const baseUrl = (fallback: string) =>
  z
    .url()
    .default(fallback)
    .transform((url) => url.replace(/\/$/, ''));
/** A provider credential: empty when not set (required only when its rail is selected). */
const credential = () => z.string().default('');

/**
 * Every setting, declared once: where it sits in the configuration and the variable it is read from.
 * A few values are made from more than one variable, after the checks below (`withDerivedValues`).
 */
const settings = z.object({
  env: fromEnv('NODE_ENV', z.enum(['development', 'test', 'production']).default('development')),
  http: z.object({
    host: fromEnv('HOST', z.string().default('127.0.0.1')),
    port: fromEnv('PORT', intFrom(3000, 0, 65535)),
    /** Where clients (and Daraja's callbacks) reach the api; `http://HOST:PORT` when not set. */
    publicBaseUrl: fromEnv('PUBLIC_BASE_URL', z.url().optional()),
    trustProxy: fromEnv('TRUST_PROXY', trustProxy),
  }),
  logLevel: fromEnv('LOG_LEVEL', z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')),
  databaseUrl: fromEnv('DATABASE_URL', z.string().startsWith('postgres').default('postgres://postgres@127.0.0.1:5432/paygate')),
  databasePoolMax: fromEnv('DATABASE_POOL_MAX', intFrom(10, 1)),
  redisUrl: fromEnv('REDIS_URL', z.string().startsWith('redis').default('redis://127.0.0.1:6379')),
  queuePrefix: fromEnv('QUEUE_PREFIX', z.string().min(1).default('paygate')),
  temporal: z.object({
    address: fromEnv('TEMPORAL_ADDRESS', z.string().min(1).default('127.0.0.1:7233')),
    namespace: fromEnv('TEMPORAL_NAMESPACE', z.string().min(1).default('default')),
    taskQueue: fromEnv('TEMPORAL_TASK_QUEUE', z.string().min(1).default('paygate')),
    uiUrl: fromEnv('TEMPORAL_UI_URL', z.url().default('http://127.0.0.1:8233')),
    /** Register Paygate's search attributes on the namespace when they are missing (needs operator rights). */
    registerSearchAttributes: fromEnv('TEMPORAL_REGISTER_SEARCH_ATTRIBUTES', boolFrom(true)),
    /**
     * TLS to the frontend (a Temporal cluster behind TLS, or Temporal Cloud): on when asked for, or when a
     * client certificate or an API key is given. Paths are read when connecting.
     */
    tls: z.object({
      enabled: fromEnv('TEMPORAL_TLS', boolFrom(false)),
      clientCertPath: fromEnv('TEMPORAL_TLS_CERT_PATH', z.string().min(1).optional()),
      clientKeyPath: fromEnv('TEMPORAL_TLS_KEY_PATH', z.string().min(1).optional()),
      serverCaPath: fromEnv('TEMPORAL_TLS_CA_PATH', z.string().min(1).optional()),
    }),
    /** Temporal Cloud API key, sent as a bearer token (with TLS). */
    apiKey: fromEnv('TEMPORAL_API_KEY', z.string().min(1).optional()),
  }),
  metrics: z.object({
    /** How long /metrics reuses what it read from Postgres and Redis. */
    cacheMs: fromEnv('METRICS_CACHE_MS', intFrom(5000, 0, 300_000)),
    /** The bearer token Prometheus presents to read /metrics (docs/operations.md#metrics). */
    token: fromEnv('METRICS_TOKEN', z.string().min(24, 'must be at least 24 characters').default(DEV_METRICS_TOKEN)),
  }),
  jwt: z.object({
    secret: fromEnv('JWT_SECRET', z.string().min(32, 'must be at least 32 characters').default(DEV_JWT_SECRET)),
    issuer: fromEnv('JWT_ISSUER', z.string().min(1).default('paygate')),
    audience: fromEnv('JWT_AUDIENCE', z.string().min(1).default('paygate-api')),
    ttlSeconds: fromEnv('JWT_TTL_SECONDS', intFrom(900, 60, 3600)),
  }),
  /** The administrator created at boot: both or neither. */
  admin: z.object({
    email: fromEnv('ADMIN_EMAIL', z.email().optional()),
    password: fromEnv('ADMIN_PASSWORD', z.string().min(12, 'must be at least 12 characters').optional()),
  }),
  rateLimits: z.object({
    loginPerIp: fromEnv('RATE_LIMIT_LOGIN_PER_IP', intFrom(30, 1)),
    loginPerAccountAndIp: fromEnv('RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP', intFrom(5, 1)),
    loginPerAccount: fromEnv('RATE_LIMIT_LOGIN_PER_ACCOUNT', intFrom(100, 1)),
    registerPerIp: fromEnv('RATE_LIMIT_REGISTER_PER_IP', intFrom(10, 1)),
    /** Staff name searches (`GET /compliance/screen`) per user and minute. */
    screenPerMinute: fromEnv('RATE_LIMIT_SCREEN_PER_MINUTE', intFrom(60, 1)),
    /** Requests per minute under /api/v1 per API key, per signed-in user, or per address. */
    apiPerMinute: fromEnv('RATE_LIMIT_API_PER_MINUTE', intFrom(1200, 1)),
    /** Requests per minute under /api/v1 per account, whatever its credentials (all its keys and logins together). */
    apiPerAccountPerMinute: fromEnv('RATE_LIMIT_API_PER_ACCOUNT_PER_MINUTE', intFrom(3000, 1)),
    /** How often each api process sends its API quota counts to Redis, in ms (docs/conventions.md#rate-limits). */
    apiFlushMs: fromEnv('RATE_LIMIT_API_FLUSH_MS', intFrom(250, 10, 10_000)),
    /**
     * The most requests per quota an api process admits that Redis has not counted yet; the next one waits
     * for Redis's answer. The fleet admits at most the quota plus this per further process (docs/conventions.md#rate-limits).
     */
    apiBatch: fromEnv('RATE_LIMIT_API_BATCH', intFrom(10, 1, 1000)),
  }),
  apiKeys: z.object({
    /** The most keys one user may have in use (neither revoked nor expired). */
    maxPerUser: fromEnv('API_KEYS_MAX_PER_USER', intFrom(20, 1, 1000)),
  }),
  limits: z.object({
    /** Per payment, per 24 h, and the most any one wallet may hold (its KES equivalent), by tier. */
    unverified: z.object({
      perPaymentKes: fromEnv('LIMIT_UNVERIFIED_PER_PAYMENT_KES', kesAmount('10000')),
      dailyKes: fromEnv('LIMIT_UNVERIFIED_DAILY_KES', kesAmount('50000')),
      balanceKes: fromEnv('LIMIT_UNVERIFIED_BALANCE_KES', kesAmount('50000')),
    }),
    verified: z.object({
      perPaymentKes: fromEnv('LIMIT_VERIFIED_PER_PAYMENT_KES', kesAmount('1000000')),
      dailyKes: fromEnv('LIMIT_VERIFIED_DAILY_KES', kesAmount('5000000')),
      balanceKes: fromEnv('LIMIT_VERIFIED_BALANCE_KES', kesAmount('10000000')),
    }),
    fxToKes: fromEnv('FX_RATES_TO_KES', fxRates),
  }),
  /**
   * What each payout method charges on top of the amount, zero unless configured: a flat part
   * in KES (converted at the reference rate for payments in other currencies) plus a percentage of the
   * amount ("1.5" is 1.5 %).
   */
  fees: z.object({
    bank_transfer: z.object({
      flatKes: fromEnv('FEE_BANK_TRANSFER_FLAT_KES', feeFlat),
      percent: fromEnv('FEE_BANK_TRANSFER_PERCENT', feePercent),
    }),
    mobile_money: z.object({
      flatKes: fromEnv('FEE_MOBILE_MONEY_FLAT_KES', feeFlat),
      percent: fromEnv('FEE_MOBILE_MONEY_PERCENT', feePercent),
    }),
    crypto: z.object({ flatKes: fromEnv('FEE_CRYPTO_FLAT_KES', feeFlat), percent: fromEnv('FEE_CRYPTO_PERCENT', feePercent) }),
  }),
  payments: z.object({
    pollAfterMs: fromEnv('PAYMENT_POLL_AFTER_MS', intFrom(5000, 10)),
    settleTimeoutMs: fromEnv('PAYMENT_SETTLE_TIMEOUT_MS', intFrom(15 * 60 * 1000, 100)),
    maxPollIntervalMs: fromEnv('PAYMENT_POLL_MAX_INTERVAL_MS', intFrom(60_000, 10)),
  }),
  /** Bulk payouts (docs/payments.md#bulk-payouts): how many items of one batch are in flight at once, per rail. */
  batches: z.object({
    concurrency: z.object({
      mobile_money: fromEnv('BATCH_CONCURRENCY_MOBILE_MONEY', intFrom(20, 1, 500)),
      bank_transfer: fromEnv('BATCH_CONCURRENCY_BANK_TRANSFER', intFrom(10, 1, 500)),
      crypto: fromEnv('BATCH_CONCURRENCY_CRYPTO', intFrom(5, 1, 500)),
    }),
    /** Items one run of the `payout-batch` workflow sends before it continues as new. */
    pageSize: fromEnv('BATCH_PAGE_SIZE', intFrom(200, 1, 1000)),
  }),
  unresolvedPayouts: z.object({
    /** After this long without a definite answer from its rail, a payment is listed for operators. */
    afterMs: fromEnv('PAYMENT_UNRESOLVED_AFTER_MS', intFrom(24 * 3600 * 1000, 0)),
  }),
  sandbox: z.object({
    callbackDelayMs: fromEnv('SANDBOX_CALLBACK_DELAY_MS', intFrom(300)),
    callbackSecret: fromEnv('SANDBOX_CALLBACK_SECRET', z.string().min(16).default(DEV_SANDBOX_CALLBACK_SECRET)),
  }),
  reconciler: z.object({
    intervalMs: fromEnv('RECONCILE_INTERVAL_MS', intFrom(15000, 100)),
    graceMs: fromEnv('RECONCILE_GRACE_MS', intFrom(5000, 0)),
  }),
  wallets: z.object({
    /** How often the primary bank's statement is read for deposits quoting a deposit reference. */
    matchBankDepositsEveryMs: fromEnv('MATCH_BANK_DEPOSITS_EVERY_MS', intFrom(60_000, 100)),
    /** How often the exchange account's deposits are read (when the crypto rail is ccxt). */
    matchCryptoDepositsEveryMs: fromEnv('MATCH_CRYPTO_DEPOSITS_EVERY_MS', intFrom(60_000, 100)),
    /** How often each rail's own record is reconciled line by line with the ledger (daily by default). */
    reconcileRailsEveryMs: fromEnv('RECONCILE_RAILS_EVERY_MS', intFrom(24 * 3600 * 1000, 1000)),
    /**
     * A paybill claim Daraja's Transaction Status has not answered is asked again this long after its last
     * query, doubling per query (`recheck-c2b-claims`, which runs this often), up to the max interval.
     */
    c2bStatusRecheckAfterMs: fromEnv('C2B_STATUS_RECHECK_AFTER_MS', intFrom(60_000, 100)),
    c2bStatusRecheckMaxIntervalMs: fromEnv('C2B_STATUS_RECHECK_MAX_INTERVAL_MS', intFrom(3600 * 1000, 100)),
  }),
  discovery: z.object({
    primaryBankCode: fromEnv(
      'PRIMARY_BANK_CODE',
      z
        .string()
        .regex(/^\d{2,3}$/, 'must be a 2- or 3-digit CBK bank code, e.g. 68')
        .default('68'),
    ),
    refreshExchangesEveryMs: fromEnv('REFRESH_EXCHANGES_EVERY_MS', intFrom(15 * 60 * 1000, 1000)),
    refreshBanksEveryMs: fromEnv('REFRESH_BANKS_EVERY_MS', intFrom(24 * 60 * 60 * 1000, 1000)),
    probe: z.object({
      enabled: fromEnv('EXCHANGE_PROBE_ENABLED', boolFrom(true)),
      timeoutMs: fromEnv('EXCHANGE_PROBE_TIMEOUT_MS', intFrom(3000, 100)),
      totalMs: fromEnv('EXCHANGE_PROBE_TOTAL_MS', intFrom(15000, 100)),
      concurrency: fromEnv('EXCHANGE_PROBE_CONCURRENCY', intFrom(8, 1, 64)),
    }),
    /** Retries of a failed refresh (exponential backoff from `backoffMs`); `lockMs`: when a crashed worker's job is taken over. */
    jobs: z.object({
      attempts: fromEnv('DISCOVERY_JOB_ATTEMPTS', intFrom(5, 1, 50)),
      backoffMs: fromEnv('DISCOVERY_JOB_BACKOFF_MS', intFrom(10000, 10)),
      lockMs: fromEnv('DISCOVERY_JOB_LOCK_MS', intFrom(30000, 1000)),
    }),
  }),
  compliance: z.object({
    screening: z.object({
      /** Jaro-Winkler score (0-1] at or above which a name matches a blocklisted name (blocked). */
      nameThreshold: fromEnv('SCREENING_NAME_THRESHOLD', z.coerce.number().gt(0).max(1).default(0.92)),
      /** Score at or above which (and below `nameThreshold`) a name match goes to staff for review. */
      reviewThreshold: fromEnv('SCREENING_REVIEW_THRESHOLD', z.coerce.number().gt(0).max(1).default(0.88)),
      /** How long a payment held for review waits for staff before it is rejected. */
      reviewSlaMs: fromEnv('SCREENING_REVIEW_SLA_MS', intFrom(24 * 60 * 60 * 1000, 100)),
    }),
    /** Currency transaction report threshold, a USD decimal string. */
    ctrThresholdUsd: fromEnv(
      'CTR_THRESHOLD_USD',
      z
        .string()
        .regex(/^\d+(\.\d{1,2})?$/, 'must be a USD amount, e.g. 15000')
        .default('15000'),
    ),
    /** The sanctions lists the import loads, each from paths or URLs; an empty list is not imported. */
    sanctionsLists: z.object({
      /** OFAC SDN CSV files (`sdn.csv`, `alt.csv`). */
      ofac: fromEnv('SANCTIONS_LIST_PATH_OR_URL', sourceList),
      /** The UN Security Council consolidated list (XML). */
      un: fromEnv('UN_SANCTIONS_LIST_PATH_OR_URL', sourceList),
      /** The EU financial sanctions list (XML or CSV). */
      eu: fromEnv('EU_SANCTIONS_LIST_PATH_OR_URL', sourceList),
    }),
    sanctionsImportEveryMs: fromEnv('SANCTIONS_IMPORT_EVERY_MS', intFrom(24 * 60 * 60 * 1000, 1000)),
    reportMaxRows: fromEnv('COMPLIANCE_REPORT_MAX_ROWS', intFrom(10000, 1, 1_000_000)),
    reportTimeoutMs: fromEnv('COMPLIANCE_REPORT_TIMEOUT_MS', intFrom(120_000, 1000)),
    /** Evaluate each movement against the monitoring rules before its money moves (docs/monitoring.md#holds). */
    monitoringEnabled: fromEnv('MONITORING_ENABLED', boolFrom(true)),
  }),
  /**
   * goAML reports to the Financial Reporting Centre (docs/compliance.md#goaml-reports): the reporting entity's
   * registration, its reporting person and address, and the CTR threshold in KES.
   */
  goaml: z.object({
    /** The reporting entity's id at the FRC's goAML; no report is made without it. */
    rentityId: fromEnv('GOAML_RENTITY_ID', z.coerce.number().int().min(1).optional()),
    rentityBranch: fromEnv('GOAML_RENTITY_BRANCH', z.string().min(1).max(255).optional()),
    /** The reporting person (the money laundering reporting officer): full name, email, phone, occupation. */
    reportingPerson: z.object({
      fullName: fromEnv('GOAML_REPORTING_PERSON_NAME', z.string().min(1).max(200).optional()),
      email: fromEnv('GOAML_REPORTING_PERSON_EMAIL', z.email().optional()),
      phone: fromEnv(
        'GOAML_REPORTING_PERSON_PHONE',
        z
          .string()
          .regex(/^\+\d{7,15}$/, 'must be E.164, e.g. +254700000000')
          .optional(),
      ),
      occupation: fromEnv('GOAML_REPORTING_PERSON_OCCUPATION', z.string().min(1).max(255).default('Money Laundering Reporting Officer')),
    }),
    /** The reporting entity's address (goAML `location`). */
    location: z.object({
      address: fromEnv('GOAML_LOCATION_ADDRESS', z.string().min(1).max(100).optional()),
      city: fromEnv('GOAML_LOCATION_CITY', z.string().min(1).max(255).default('Nairobi')),
    }),
    /**
     * CTR threshold in KES (a plain decimal): a completed movement whose KES equivalent is at or above it is in
     * a CTR. Unset: `CTR_THRESHOLD_USD` at the `FX_RATES_TO_KES` USD rate, rounded up.
     */
    ctrThresholdKes: fromEnv(
      'CTR_THRESHOLD_KES',
      z
        .string()
        .regex(/^\d+(\.\d{1,2})?$/, 'must be a KES amount, e.g. 1935000')
        .optional(),
    ),
  }),
  p2p: z.object({
    /** KES per whole unit of each asset: what a floating price's margin applies to. */
    referencePricesKes: fromEnv('P2P_REFERENCE_PRICES_KES', fxRates),
  }),
  /**
   * Four eyes (README, "Four-eyes requests"): a money-moving staff action above this KES equivalent waits
   * for a second, different staff member's approval before money moves.
   */
  fourEyes: z.object({ aboveKes: fromEnv('FOUR_EYES_ABOVE_KES', kesAmount('100000')) }),
  /** How long an appeal waits for a decision before it is `expired`. */
  appeals: z.object({ slaMs: fromEnv('APPEAL_SLA_MS', intFrom(72 * 60 * 60 * 1000, 100)) }),
  rails: z.object({
    bank_transfer: fromEnv('RAIL_BANK_TRANSFER', z.enum(['sandbox', 'jenga']).default('sandbox')),
    mobile_money: fromEnv('RAIL_MOBILE_MONEY', z.enum(['sandbox', 'daraja']).default('sandbox')),
    crypto: fromEnv('RAIL_CRYPTO', z.enum(['sandbox', 'ccxt']).default('sandbox')),
  }),
  jenga: z.object({
    baseUrl: fromEnv('JENGA_BASE_URL', baseUrl('https://uat.finserve.africa')),
    apiKey: fromEnv('JENGA_API_KEY', credential()),
    merchantCode: fromEnv('JENGA_MERCHANT_CODE', credential()),
    consumerSecret: fromEnv('JENGA_CONSUMER_SECRET', credential()),
    /** PEM text of the RSA private key that signs Jenga requests (newlines may be written as `\n`). */
    privateKeyPem: fromEnv(
      'JENGA_PRIVATE_KEY',
      credential().transform((pem) => pem.replace(/\\n/g, '\n')),
    ),
    accountNumber: fromEnv('JENGA_ACCOUNT_NUMBER', credential()),
    accountName: fromEnv('JENGA_ACCOUNT_NAME', z.string().default('Paygate')),
    countryCode: fromEnv('JENGA_COUNTRY_CODE', z.string().length(2).default('KE')),
  }),
  daraja: z.object({
    baseUrl: fromEnv('DARAJA_BASE_URL', baseUrl('https://sandbox.safaricom.co.ke')),
    consumerKey: fromEnv('DARAJA_CONSUMER_KEY', credential()),
    consumerSecret: fromEnv('DARAJA_CONSUMER_SECRET', credential()),
    shortcode: fromEnv(
      'DARAJA_SHORTCODE',
      z
        .string()
        .regex(/^\d{5,7}$/, 'must be a 5-7 digit shortcode')
        .default(''),
    ),
    passkey: fromEnv('DARAJA_PASSKEY', credential()),
    transactionType: fromEnv(
      'DARAJA_TRANSACTION_TYPE',
      z.enum(['CustomerPayBillOnline', 'CustomerBuyGoodsOnline']).default('CustomerPayBillOnline'),
    ),
    /** Keys the per-request token in the callback URLs, so only callbacks for our own requests are taken. */
    callbackSecret: fromEnv('DARAJA_CALLBACK_SECRET', z.string().min(16).default('')),
    /** The only addresses a C2B confirmation is taken from, read through TRUST_PROXY (loopback too in a local run). */
    callbackAllowedIps: fromEnv('DARAJA_CALLBACK_ALLOWED_IPS', addressList(SAFARICOM_CALLBACK_IPS)),
    /** How long the paybill URLs' previous token is still taken once a new registration replaced it. */
    c2bTokenGraceMs: fromEnv('DARAJA_C2B_TOKEN_GRACE_MS', intFrom(24 * 60 * 60 * 1000, 0)),
    b2c: z.object({
      initiatorName: fromEnv('DARAJA_B2C_INITIATOR_NAME', credential()),
      securityCredential: fromEnv('DARAJA_B2C_SECURITY_CREDENTIAL', credential()),
    }),
  }),
  ccxt: z.object({
    exchange: fromEnv('CCXT_EXCHANGE', credential()),
    apiKey: fromEnv('CCXT_API_KEY', credential()),
    secret: fromEnv('CCXT_SECRET', credential()),
    sandbox: fromEnv('CCXT_SANDBOX', boolFrom(true)),
    /** Replaces the exchange's API base URL (a private gateway, or a local test double). */
    apiUrl: fromEnv('CCXT_API_URL', z.url().optional()),
    network: fromEnv('CCXT_WITHDRAW_NETWORK', z.string().optional()),
  }),
  webhooks: z.object({
    allowPrivateTargets: fromEnv('WEBHOOKS_ALLOW_PRIVATE_TARGETS', boolFrom(false)),
    maxAttempts: fromEnv('WEBHOOK_MAX_ATTEMPTS', intFrom(8, 1, 50)),
    /** How many times one delivery may be sent again on request (POST …/retry), whatever its status. */
    maxManualRetries: fromEnv('WEBHOOK_MAX_MANUAL_RETRIES', intFrom(5, 0, 100)),
    backoffMs: fromEnv('WEBHOOK_BACKOFF_MS', intFrom(5000, 10)),
    timeoutMs: fromEnv('WEBHOOK_TIMEOUT_MS', intFrom(5000, 100)),
    dispatchEveryMs: fromEnv('WEBHOOK_DISPATCH_EVERY_MS', intFrom(1000, 50)),
    maxEndpointsPerUser: fromEnv('WEBHOOK_MAX_ENDPOINTS_PER_USER', intFrom(10, 1, 1000)),
    maxInFlightPerEndpoint: fromEnv('WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT', intFrom(2, 1, 100)),
    /** Events (and their deliveries) older than this are pruned by the `prune-events` job. */
    eventRetentionDays: fromEnv('EVENTS_RETENTION_DAYS', intFrom(30, 1, 3650)),
    pruneEventsEveryMs: fromEnv('PRUNE_EVENTS_EVERY_MS', intFrom(60 * 60 * 1000, 100)),
  }),
});

/** Each setting's place in the configuration and its variable, found once from the declaration. */
const SETTINGS: { path: string[]; name: string }[] = [];
(function collect(shape: z.ZodRawShape, path: string[]) {
  for (const [key, schema] of Object.entries(shape)) {
    const name = variables.get(schema)?.name;
    if (name !== undefined) SETTINGS.push({ path: [...path, key], name });
    else if (schema instanceof z.ZodObject) collect(schema.shape, [...path, key]);
    else throw new Error(`config: ${[...path, key].join('.')} is neither a setting nor a group of settings`);
  }
})(settings.shape, []);

const VARIABLE_AT = new Map(SETTINGS.map(({ path, name }) => [path.join('.'), name]));
const PATH_OF = new Map(SETTINGS.map(({ path, name }) => [name, path]));

/** The settings' input, from the flat environment into the declaration's places. */
function fromEnvironment(source: NodeJS.ProcessEnv): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const { path, name } of SETTINGS) {
    let group = input;
    for (const key of path.slice(0, -1)) group = (group[key] ??= {}) as Record<string, unknown>;
    group[path[path.length - 1]] = source[name];
  }
  return input;
}

type Settings = z.output<typeof settings>;

/** A setting's parsed value, by its variable. */
function valueOf(parsed: Settings, name: string): unknown {
  return (PATH_OF.get(name) ?? []).reduce<unknown>((group, key) => (group as Record<string, unknown>)[key], parsed);
}

/** Checks across settings; each problem is reported against a variable. */
function checkTogether(c: Settings, ctx: z.RefinementCtx): void {
  const problem = (name: string, message: string) => ctx.addIssue({ code: 'custom', path: [name], message });
  // A public default secret is only for a local run: development or test, listening on loopback. Any
  // other deployment (production, or a forgotten NODE_ENV on a public HOST) must set its own.
  const localRun = isLocalRun(c);
  for (const [name, builtIn] of Object.entries(DEFAULTED_SECRETS)) {
    if (!localRun && valueOf(c, name) === builtIn) {
      problem(
        name,
        c.env === 'production'
          ? `the built-in default is refused in production; set ${name}`
          : `the built-in default is accepted only with NODE_ENV=development or test and a loopback HOST (HOST is ${c.http.host}); set ${name}`,
      );
    }
  }
  const { tls } = c.temporal;
  if ((tls.clientCertPath === undefined) !== (tls.clientKeyPath === undefined)) {
    problem('TEMPORAL_TLS_KEY_PATH', 'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together');
  }
  if (c.compliance.screening.reviewThreshold > c.compliance.screening.nameThreshold) {
    problem('SCREENING_REVIEW_THRESHOLD', 'must not be above SCREENING_NAME_THRESHOLD');
  }
  if ((c.admin.email === undefined) !== (c.admin.password === undefined)) {
    problem('ADMIN_PASSWORD', 'ADMIN_EMAIL and ADMIN_PASSWORD go together');
  }
  if (!c.limits.fxToKes.USD) problem('FX_RATES_TO_KES', 'must include USD (the CTR threshold is in USD)');
  const requireWhen = (selected: boolean, rail: string, names: string[]) => {
    for (const name of names) if (selected && !valueOf(c, name)) problem(name, `required when ${rail}`);
  };
  requireWhen(c.rails.bank_transfer === 'jenga', 'RAIL_BANK_TRANSFER=jenga', [
    'JENGA_API_KEY',
    'JENGA_MERCHANT_CODE',
    'JENGA_CONSUMER_SECRET',
    'JENGA_PRIVATE_KEY',
    'JENGA_ACCOUNT_NUMBER',
  ]);
  requireWhen(c.rails.mobile_money === 'daraja', 'RAIL_MOBILE_MONEY=daraja', [
    'DARAJA_CONSUMER_KEY',
    'DARAJA_CONSUMER_SECRET',
    'DARAJA_SHORTCODE',
    'DARAJA_PASSKEY',
    'DARAJA_CALLBACK_SECRET',
    'DARAJA_B2C_INITIATOR_NAME',
    'DARAJA_B2C_SECURITY_CREDENTIAL',
  ]);
  requireWhen(c.rails.crypto === 'ccxt', 'RAIL_CRYPTO=ccxt', ['CCXT_EXCHANGE', 'CCXT_API_KEY', 'CCXT_SECRET']);
  // One world per deployment (README, "Sandbox and live"): money a sandbox made up must never leave through a
  // real rail, so sandbox and real rails mix only in a local run.
  const rails = Object.entries(c.rails) as [keyof typeof RAIL_VARIABLES, string][];
  const onSandbox = rails.filter(([, rail]) => rail === 'sandbox').map(([m, rail]) => `${RAIL_VARIABLES[m]}=${rail}`);
  const onReal = rails.filter(([, rail]) => rail !== 'sandbox').map(([m, rail]) => `${RAIL_VARIABLES[m]}=${rail}`);
  if (!localRun && onSandbox.length > 0 && onReal.length > 0) {
    problem(
      onReal[0].split('=')[0],
      `one world per deployment: ${onReal.join(', ')} ${onReal.length > 1 ? 'are real rails' : 'is a real rail'} while ${onSandbox.join(', ')} ${onSandbox.length > 1 ? 'are' : 'is'} the sandbox; set every rail to the sandbox or every rail to a real connector (a mix is accepted only with NODE_ENV=development or test on a loopback HOST)`,
    );
  }
  // Daraja posts every result to PUBLIC_BASE_URL: without it the results would go to the listen address.
  if (c.rails.mobile_money === 'daraja') {
    if (!c.http.publicBaseUrl) {
      problem('PUBLIC_BASE_URL', 'required when RAIL_MOBILE_MONEY=daraja (the callback base URL)');
    } else if (!c.http.publicBaseUrl.startsWith('https://') && c.env === 'production') {
      problem('PUBLIC_BASE_URL', 'must be an https URL when RAIL_MOBILE_MONEY=daraja in production');
    }
  }
}

/** The values made from more than one variable. */
function withDerivedValues(c: Settings) {
  const { tls, apiKey, ...connection } = c.temporal;
  const { email, password } = c.admin;
  return {
    ...c,
    http: { ...c.http, publicBaseUrl: (c.http.publicBaseUrl ?? `http://${c.http.host}:${c.http.port}`).replace(/\/$/, '') },
    temporal: {
      ...connection,
      ...(tls.enabled || tls.clientCertPath || tls.serverCaPath || apiKey
        ? {
            tls: {
              ...(tls.clientCertPath ? { clientCertPath: tls.clientCertPath, clientKeyPath: tls.clientKeyPath } : {}),
              ...(tls.serverCaPath ? { serverCaPath: tls.serverCaPath } : {}),
            },
          }
        : {}),
      ...(apiKey ? { apiKey } : {}),
    },
    admin: email && password ? { email, password } : undefined,
    /** Webhook targets are https only, except in a local run (docs/events.md#webhooks). */
    webhooks: { ...c.webhooks, httpsOnly: !isLocalRun(c) },
  };
}

const schema = settings.superRefine(checkTogether).transform(withDerivedValues);

export type Config = z.output<typeof schema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** A problem's variable: the setting at (or above) its path, else the path as reported. */
function variableOf(path: PropertyKey[]): string {
  for (let n = path.length; n > 0; n -= 1) {
    const name = VARIABLE_AT.get(path.slice(0, n).join('.'));
    if (name !== undefined) return name;
  }
  return path.map(String).join('.') || '(env)';
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(fromEnvironment(source));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${variableOf(i.path)}: ${i.message}`));
  }
  return Object.freeze(parsed.data);
}

let current: Config | undefined;

/** The process-wide configuration, validated on first use. */
export function config(): Config {
  current ??= loadConfig();
  return current;
}

/** Load and validate at boot, or print what is wrong and exit. */
export function configOrExit(): Config {
  try {
    return config();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}

/** Re-read the environment: for test harnesses that learn addresses (ports) only after start-up. */
export function reloadConfig(): Config {
  current = loadConfig();
  return current;
}
