import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * The one place Paygate reads its environment. Every process calls `loadConfig()` at boot;
 * a bad or missing setting stops it with a message naming the variable.
 */

const DEV_JWT_SECRET = 'paygate-dev-secret-change-me-0123456789abcdef';
const DEV_SANDBOX_CALLBACK_SECRET = 'paygate-sandbox-callback-secret';

/** The secrets with a built-in (public) default, taken only by a local development or test run. */
const DEFAULTED_SECRETS = { JWT_SECRET: DEV_JWT_SECRET, SANDBOX_CALLBACK_SECRET: DEV_SANDBOX_CALLBACK_SECRET } as const;

/** A listen address only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}

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

const schema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    HOST: z.string().default('127.0.0.1'),
    PORT: intFrom(3000, 0, 65535),
    PUBLIC_BASE_URL: z.url().optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    TRUST_PROXY: trustProxy,

    DATABASE_URL: z.string().startsWith('postgres').default('postgres://postgres@127.0.0.1:5432/paygate'),
    DATABASE_POOL_MAX: intFrom(10, 1),
    REDIS_URL: z.string().startsWith('redis').default('redis://127.0.0.1:6379'),
    QUEUE_PREFIX: z.string().min(1).default('paygate'),

    TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('paygate'),
    TEMPORAL_UI_URL: z.url().default('http://127.0.0.1:8233'),
    TEMPORAL_REGISTER_SEARCH_ATTRIBUTES: boolFrom(true),
    TEMPORAL_TLS: boolFrom(false),
    TEMPORAL_TLS_CERT_PATH: z.string().min(1).optional(),
    TEMPORAL_TLS_KEY_PATH: z.string().min(1).optional(),
    TEMPORAL_TLS_CA_PATH: z.string().min(1).optional(),
    TEMPORAL_API_KEY: z.string().min(1).optional(),
    METRICS_CACHE_MS: intFrom(5000, 0, 300_000),

    JWT_SECRET: z.string().min(32, 'must be at least 32 characters').default(DEV_JWT_SECRET),
    JWT_ISSUER: z.string().min(1).default('paygate'),
    JWT_AUDIENCE: z.string().min(1).default('paygate-api'),
    JWT_TTL_SECONDS: intFrom(900, 60, 3600),

    ADMIN_EMAIL: z.email().optional(),
    ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters').optional(),

    RATE_LIMIT_LOGIN_PER_IP: intFrom(30, 1),
    RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP: intFrom(5, 1),
    RATE_LIMIT_LOGIN_PER_ACCOUNT: intFrom(100, 1),
    RATE_LIMIT_REGISTER_PER_IP: intFrom(10, 1),
    RATE_LIMIT_API_PER_MINUTE: intFrom(1200, 1),
    RATE_LIMIT_SCREEN_PER_MINUTE: intFrom(60, 1),

    LIMIT_UNVERIFIED_PER_PAYMENT_KES: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .default('10000'),
    LIMIT_UNVERIFIED_DAILY_KES: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .default('50000'),
    LIMIT_VERIFIED_PER_PAYMENT_KES: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .default('1000000'),
    LIMIT_VERIFIED_DAILY_KES: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .default('5000000'),
    LIMIT_UNVERIFIED_BALANCE_KES: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .default('50000'),
    LIMIT_VERIFIED_BALANCE_KES: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .default('10000000'),
    FX_RATES_TO_KES: fxRates,
    FEE_BANK_TRANSFER_FLAT_KES: feeFlat,
    FEE_BANK_TRANSFER_PERCENT: feePercent,
    FEE_MOBILE_MONEY_FLAT_KES: feeFlat,
    FEE_MOBILE_MONEY_PERCENT: feePercent,
    FEE_CRYPTO_FLAT_KES: feeFlat,
    FEE_CRYPTO_PERCENT: feePercent,

    PAYMENT_POLL_AFTER_MS: intFrom(5000, 10),
    PAYMENT_SETTLE_TIMEOUT_MS: intFrom(15 * 60 * 1000, 100),
    PAYMENT_POLL_MAX_INTERVAL_MS: intFrom(60_000, 10),
    SANDBOX_CALLBACK_DELAY_MS: intFrom(300),
    SANDBOX_CALLBACK_SECRET: z.string().min(16).default(DEV_SANDBOX_CALLBACK_SECRET),

    RECONCILE_INTERVAL_MS: intFrom(15000, 100),
    MATCH_BANK_DEPOSITS_EVERY_MS: intFrom(60_000, 100),
    MATCH_CRYPTO_DEPOSITS_EVERY_MS: intFrom(60_000, 100),
    RECONCILE_GRACE_MS: intFrom(5000, 0),

    PRIMARY_BANK_CODE: z
      .string()
      .regex(/^\d{2,3}$/, 'must be a 2- or 3-digit CBK bank code, e.g. 68')
      .default('68'),
    REFRESH_EXCHANGES_EVERY_MS: intFrom(15 * 60 * 1000, 1000),
    REFRESH_BANKS_EVERY_MS: intFrom(24 * 60 * 60 * 1000, 1000),
    EXCHANGE_PROBE_ENABLED: boolFrom(true),
    EXCHANGE_PROBE_TIMEOUT_MS: intFrom(3000, 100),
    EXCHANGE_PROBE_TOTAL_MS: intFrom(15000, 100),
    EXCHANGE_PROBE_CONCURRENCY: intFrom(8, 1, 64),
    DISCOVERY_JOB_ATTEMPTS: intFrom(5, 1, 50),
    DISCOVERY_JOB_BACKOFF_MS: intFrom(10000, 10),
    DISCOVERY_JOB_LOCK_MS: intFrom(30000, 1000),

    SCREENING_NAME_THRESHOLD: z.coerce.number().gt(0).max(1).default(0.92),
    SCREENING_REVIEW_THRESHOLD: z.coerce.number().gt(0).max(1).default(0.88),
    SCREENING_REVIEW_SLA_MS: intFrom(24 * 60 * 60 * 1000, 100),
    CTR_THRESHOLD_USD: z
      .string()
      .regex(/^\d+(\.\d{1,2})?$/, 'must be a USD amount, e.g. 15000')
      .default('15000'),
    SANCTIONS_LIST_PATH_OR_URL: z.string().trim().optional(),
    UN_SANCTIONS_LIST_PATH_OR_URL: z.string().trim().optional(),
    EU_SANCTIONS_LIST_PATH_OR_URL: z.string().trim().optional(),
    SANCTIONS_IMPORT_EVERY_MS: intFrom(24 * 60 * 60 * 1000, 1000),
    COMPLIANCE_REPORT_MAX_ROWS: intFrom(10000, 1, 1_000_000),
    COMPLIANCE_REPORT_TIMEOUT_MS: intFrom(120_000, 1000),
    P2P_REFERENCE_PRICES_KES: fxRates,
    APPEAL_SLA_MS: intFrom(72 * 60 * 60 * 1000, 100),

    RAIL_BANK_TRANSFER: z.enum(['sandbox', 'jenga']).default('sandbox'),
    RAIL_MOBILE_MONEY: z.enum(['sandbox', 'daraja']).default('sandbox'),
    RAIL_CRYPTO: z.enum(['sandbox', 'ccxt']).default('sandbox'),
    JENGA_BASE_URL: z.url().default('https://uat.finserve.africa'),
    JENGA_API_KEY: z.string().optional(),
    JENGA_MERCHANT_CODE: z.string().optional(),
    JENGA_CONSUMER_SECRET: z.string().optional(),
    /** PEM text of the RSA private key that signs Jenga requests (newlines may be written as `\n`). */
    JENGA_PRIVATE_KEY: z.string().optional(),
    JENGA_ACCOUNT_NUMBER: z.string().optional(),
    JENGA_ACCOUNT_NAME: z.string().default('Paygate'),
    JENGA_COUNTRY_CODE: z.string().length(2).default('KE'),
    DARAJA_BASE_URL: z.url().default('https://sandbox.safaricom.co.ke'),
    DARAJA_CONSUMER_KEY: z.string().optional(),
    DARAJA_CONSUMER_SECRET: z.string().optional(),
    DARAJA_SHORTCODE: z
      .string()
      .regex(/^\d{5,7}$/, 'must be a 5-7 digit shortcode')
      .optional(),
    DARAJA_PASSKEY: z.string().optional(),
    DARAJA_TRANSACTION_TYPE: z.enum(['CustomerPayBillOnline', 'CustomerBuyGoodsOnline']).default('CustomerPayBillOnline'),
    DARAJA_CALLBACK_SECRET: z.string().min(16).optional(),
    DARAJA_B2C_INITIATOR_NAME: z.string().optional(),
    DARAJA_B2C_SECURITY_CREDENTIAL: z.string().optional(),
    CCXT_EXCHANGE: z.string().optional(),
    CCXT_API_KEY: z.string().optional(),
    CCXT_SECRET: z.string().optional(),
    CCXT_SANDBOX: boolFrom(true),
    /** Replaces the exchange's API base URL (a private gateway, or a local test double). */
    CCXT_API_URL: z.url().optional(),
    CCXT_WITHDRAW_NETWORK: z.string().optional(),

    WEBHOOKS_ALLOW_PRIVATE_TARGETS: boolFrom(false),
    WEBHOOK_MAX_ATTEMPTS: intFrom(8, 1, 50),
    WEBHOOK_BACKOFF_MS: intFrom(5000, 10),
    WEBHOOK_TIMEOUT_MS: intFrom(5000, 100),
    WEBHOOK_DISPATCH_EVERY_MS: intFrom(1000, 50),
    WEBHOOK_MAX_ENDPOINTS_PER_USER: intFrom(10, 1, 1000),
    WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: intFrom(2, 1, 100),
    EVENTS_RETENTION_DAYS: intFrom(30, 1, 3650),
    PRUNE_EVENTS_EVERY_MS: intFrom(60 * 60 * 1000, 100),
  })
  .superRefine((env, ctx) => {
    // A public default secret is only for a local run: development or test, listening on loopback. Any
    // other deployment (production, or a forgotten NODE_ENV on a public HOST) must set its own.
    const localRun = (env.NODE_ENV === 'development' || env.NODE_ENV === 'test') && isLoopbackHost(env.HOST);
    for (const [name, builtIn] of Object.entries(DEFAULTED_SECRETS)) {
      if (!localRun && env[name as keyof typeof DEFAULTED_SECRETS] === builtIn) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message:
            env.NODE_ENV === 'production'
              ? `the built-in default is refused in production; set ${name}`
              : `the built-in default is accepted only with NODE_ENV=development or test and a loopback HOST (HOST is ${env.HOST}); set ${name}`,
        });
      }
    }
    if ((env.TEMPORAL_TLS_CERT_PATH === undefined) !== (env.TEMPORAL_TLS_KEY_PATH === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['TEMPORAL_TLS_KEY_PATH'],
        message: 'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together',
      });
    }
    if (env.SCREENING_REVIEW_THRESHOLD > env.SCREENING_NAME_THRESHOLD) {
      ctx.addIssue({ code: 'custom', path: ['SCREENING_REVIEW_THRESHOLD'], message: 'must not be above SCREENING_NAME_THRESHOLD' });
    }
    if ((env.ADMIN_EMAIL === undefined) !== (env.ADMIN_PASSWORD === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['ADMIN_PASSWORD'], message: 'ADMIN_EMAIL and ADMIN_PASSWORD go together' });
    }
    if (!env.FX_RATES_TO_KES.USD) {
      ctx.addIssue({ code: 'custom', path: ['FX_RATES_TO_KES'], message: 'must include USD (the CTR threshold is in USD)' });
    }
    const requireWhen = (selected: boolean, rail: string, names: (keyof typeof env)[]) => {
      for (const name of names) {
        if (selected && !env[name]) ctx.addIssue({ code: 'custom', path: [name], message: `required when ${rail}` });
      }
    };
    requireWhen(env.RAIL_BANK_TRANSFER === 'jenga', 'RAIL_BANK_TRANSFER=jenga', [
      'JENGA_API_KEY',
      'JENGA_MERCHANT_CODE',
      'JENGA_CONSUMER_SECRET',
      'JENGA_PRIVATE_KEY',
      'JENGA_ACCOUNT_NUMBER',
    ]);
    requireWhen(env.RAIL_MOBILE_MONEY === 'daraja', 'RAIL_MOBILE_MONEY=daraja', [
      'DARAJA_CONSUMER_KEY',
      'DARAJA_CONSUMER_SECRET',
      'DARAJA_SHORTCODE',
      'DARAJA_PASSKEY',
      'DARAJA_CALLBACK_SECRET',
      'DARAJA_B2C_INITIATOR_NAME',
      'DARAJA_B2C_SECURITY_CREDENTIAL',
    ]);
    requireWhen(env.RAIL_CRYPTO === 'ccxt', 'RAIL_CRYPTO=ccxt', ['CCXT_EXCHANGE', 'CCXT_API_KEY', 'CCXT_SECRET']);
    // Daraja posts every result to PUBLIC_BASE_URL: without it the results would go to the listen address.
    if (env.RAIL_MOBILE_MONEY === 'daraja') {
      if (!env.PUBLIC_BASE_URL) {
        ctx.addIssue({
          code: 'custom',
          path: ['PUBLIC_BASE_URL'],
          message: 'required when RAIL_MOBILE_MONEY=daraja (the callback base URL)',
        });
      } else if (!env.PUBLIC_BASE_URL.startsWith('https://') && env.NODE_ENV === 'production') {
        ctx.addIssue({
          code: 'custom',
          path: ['PUBLIC_BASE_URL'],
          message: 'must be an https URL when RAIL_MOBILE_MONEY=daraja in production',
        });
      }
    }
  });

type Env = z.infer<typeof schema>;

/** A payout method's fee (SPEC §11): a flat part in KES plus a percentage of the amount. */
export interface FeeSchedule {
  /** A decimal amount of KES, converted at the reference rate for payments in other currencies. */
  flatKes: string;
  /** A decimal percentage of the amount, at most four decimals ("1.5" is 1.5 %). */
  percent: string;
}

/** The sanctions lists an import can load, by source (SPEC §8). */
export interface SanctionsListSources {
  /** OFAC SDN CSV files (`sdn.csv`, `alt.csv`). */
  ofac: string[];
  /** The UN Security Council consolidated list (XML). */
  un: string[];
  /** The EU financial sanctions list (XML or CSV). */
  eu: string[];
}

/** A comma-separated list of paths or URLs. */
const sourceList = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export interface Config {
  env: Env['NODE_ENV'];
  http: { host: string; port: number; publicBaseUrl: string; trustProxy: number | string[] };
  logLevel: Env['LOG_LEVEL'];
  databaseUrl: string;
  databasePoolMax: number;
  redisUrl: string;
  queuePrefix: string;
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    uiUrl: string;
    /** Register Paygate's search attributes on the namespace when they are missing (needs operator rights). */
    registerSearchAttributes: boolean;
    /**
     * TLS to the frontend (a Temporal cluster behind TLS, or Temporal Cloud): on when asked for, or when a
     * client certificate or an API key is given. Paths are read when connecting.
     */
    tls?: { clientCertPath?: string; clientKeyPath?: string; serverCaPath?: string };
    /** Temporal Cloud API key, sent as a bearer token (with TLS). */
    apiKey?: string;
  };
  /** How long /metrics reuses what it read from Postgres and Redis. */
  metrics: { cacheMs: number };
  jwt: { secret: string; issuer: string; audience: string; ttlSeconds: number };
  admin?: { email: string; password: string };
  rateLimits: {
    loginPerIp: number;
    loginPerAccountAndIp: number;
    loginPerAccount: number;
    registerPerIp: number;
    /** Staff name searches (`GET /compliance/screen`) per user and minute. */
    screenPerMinute: number;
    /** Requests per minute under /api/v1 per API key, per signed-in user, or per address. */
    apiPerMinute: number;
  };
  limits: {
    /** Per payment, per 24 h, and the most any one wallet may hold (its KES equivalent), by tier. */
    unverified: { perPaymentKes: string; dailyKes: string; balanceKes: string };
    verified: { perPaymentKes: string; dailyKes: string; balanceKes: string };
    fxToKes: Record<string, string>;
  };
  /** What each payout method charges on top of the amount; zero unless configured. */
  fees: Record<'bank_transfer' | 'mobile_money' | 'crypto', FeeSchedule>;
  payments: { pollAfterMs: number; settleTimeoutMs: number; maxPollIntervalMs: number };
  sandbox: { callbackDelayMs: number; callbackSecret: string };
  reconciler: { intervalMs: number; graceMs: number };
  /** How often the primary bank's statement is read for deposits quoting a deposit reference. */
  /** How often the exchange account's deposits are read (when the crypto rail is ccxt). */
  wallets: { matchBankDepositsEveryMs: number; matchCryptoDepositsEveryMs: number };
  discovery: {
    primaryBankCode: string;
    refreshExchangesEveryMs: number;
    refreshBanksEveryMs: number;
    probe: { enabled: boolean; timeoutMs: number; totalMs: number; concurrency: number };
    /** Retries of a failed refresh (exponential backoff from `backoffMs`); `lockMs`: when a crashed worker's job is taken over. */
    jobs: { attempts: number; backoffMs: number; lockMs: number };
  };
  compliance: {
    screening: {
      /** Jaro-Winkler score (0-1] at or above which a name matches a blocklisted name (blocked). */
      nameThreshold: number;
      /** Score at or above which (and below `nameThreshold`) a name match goes to staff for review. */
      reviewThreshold: number;
      /** How long a payment held for review waits for staff before it is rejected. */
      reviewSlaMs: number;
    };
    /** Currency transaction report threshold, a USD decimal string. */
    ctrThresholdUsd: string;
    /** The sanctions lists the import loads, each from paths or URLs; an empty list is not imported. */
    sanctionsLists: SanctionsListSources;
    sanctionsImportEveryMs: number;
    reportMaxRows: number;
    reportTimeoutMs: number;
  };
  p2p: {
    /** KES per whole unit of each asset: what a floating price's margin applies to. */
    referencePricesKes: Record<string, string>;
  };
  /** How long an appeal waits for a decision before it is `expired`. */
  appeals: { slaMs: number };
  rails: {
    bank_transfer: 'sandbox' | 'jenga';
    mobile_money: 'sandbox' | 'daraja';
    crypto: 'sandbox' | 'ccxt';
  };
  jenga: {
    baseUrl: string;
    apiKey: string;
    merchantCode: string;
    consumerSecret: string;
    privateKeyPem: string;
    accountNumber: string;
    accountName: string;
    countryCode: string;
  };
  daraja: {
    baseUrl: string;
    consumerKey: string;
    consumerSecret: string;
    shortcode: string;
    passkey: string;
    transactionType: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
    /** Keys the per-request token in the callback URLs, so only callbacks for our own requests are taken. */
    callbackSecret: string;
    b2c: { initiatorName: string; securityCredential: string };
  };
  ccxt: { exchange: string; apiKey: string; secret: string; sandbox: boolean; apiUrl?: string; network?: string };
  webhooks: {
    allowPrivateTargets: boolean;
    maxAttempts: number;
    backoffMs: number;
    timeoutMs: number;
    dispatchEveryMs: number;
    maxEndpointsPerUser: number;
    maxInFlightPerEndpoint: number;
    /** Events (and their deliveries) older than this are pruned by the `prune-events` job. */
    eventRetentionDays: number;
    pruneEventsEveryMs: number;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
  }
  const e = parsed.data;
  return Object.freeze({
    env: e.NODE_ENV,
    http: {
      host: e.HOST,
      port: e.PORT,
      publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/$/, ''),
      trustProxy: e.TRUST_PROXY,
    },
    logLevel: e.LOG_LEVEL,
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.QUEUE_PREFIX,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      uiUrl: e.TEMPORAL_UI_URL,
      registerSearchAttributes: e.TEMPORAL_REGISTER_SEARCH_ATTRIBUTES,
      ...(e.TEMPORAL_TLS || e.TEMPORAL_TLS_CERT_PATH || e.TEMPORAL_TLS_CA_PATH || e.TEMPORAL_API_KEY
        ? {
            tls: {
              ...(e.TEMPORAL_TLS_CERT_PATH ? { clientCertPath: e.TEMPORAL_TLS_CERT_PATH, clientKeyPath: e.TEMPORAL_TLS_KEY_PATH } : {}),
              ...(e.TEMPORAL_TLS_CA_PATH ? { serverCaPath: e.TEMPORAL_TLS_CA_PATH } : {}),
            },
          }
        : {}),
      ...(e.TEMPORAL_API_KEY ? { apiKey: e.TEMPORAL_API_KEY } : {}),
    },
    metrics: { cacheMs: e.METRICS_CACHE_MS },
    jwt: { secret: e.JWT_SECRET, issuer: e.JWT_ISSUER, audience: e.JWT_AUDIENCE, ttlSeconds: e.JWT_TTL_SECONDS },
    admin: e.ADMIN_EMAIL && e.ADMIN_PASSWORD ? { email: e.ADMIN_EMAIL, password: e.ADMIN_PASSWORD } : undefined,
    rateLimits: {
      loginPerIp: e.RATE_LIMIT_LOGIN_PER_IP,
      loginPerAccountAndIp: e.RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP,
      loginPerAccount: e.RATE_LIMIT_LOGIN_PER_ACCOUNT,
      registerPerIp: e.RATE_LIMIT_REGISTER_PER_IP,
      screenPerMinute: e.RATE_LIMIT_SCREEN_PER_MINUTE,
      apiPerMinute: e.RATE_LIMIT_API_PER_MINUTE,
    },
    limits: {
      unverified: {
        perPaymentKes: e.LIMIT_UNVERIFIED_PER_PAYMENT_KES,
        dailyKes: e.LIMIT_UNVERIFIED_DAILY_KES,
        balanceKes: e.LIMIT_UNVERIFIED_BALANCE_KES,
      },
      verified: {
        perPaymentKes: e.LIMIT_VERIFIED_PER_PAYMENT_KES,
        dailyKes: e.LIMIT_VERIFIED_DAILY_KES,
        balanceKes: e.LIMIT_VERIFIED_BALANCE_KES,
      },
      fxToKes: e.FX_RATES_TO_KES,
    },
    fees: {
      bank_transfer: { flatKes: e.FEE_BANK_TRANSFER_FLAT_KES, percent: e.FEE_BANK_TRANSFER_PERCENT },
      mobile_money: { flatKes: e.FEE_MOBILE_MONEY_FLAT_KES, percent: e.FEE_MOBILE_MONEY_PERCENT },
      crypto: { flatKes: e.FEE_CRYPTO_FLAT_KES, percent: e.FEE_CRYPTO_PERCENT },
    },
    payments: {
      pollAfterMs: e.PAYMENT_POLL_AFTER_MS,
      settleTimeoutMs: e.PAYMENT_SETTLE_TIMEOUT_MS,
      maxPollIntervalMs: e.PAYMENT_POLL_MAX_INTERVAL_MS,
    },
    sandbox: { callbackDelayMs: e.SANDBOX_CALLBACK_DELAY_MS, callbackSecret: e.SANDBOX_CALLBACK_SECRET },
    reconciler: { intervalMs: e.RECONCILE_INTERVAL_MS, graceMs: e.RECONCILE_GRACE_MS },
    wallets: { matchBankDepositsEveryMs: e.MATCH_BANK_DEPOSITS_EVERY_MS, matchCryptoDepositsEveryMs: e.MATCH_CRYPTO_DEPOSITS_EVERY_MS },
    discovery: {
      primaryBankCode: e.PRIMARY_BANK_CODE,
      refreshExchangesEveryMs: e.REFRESH_EXCHANGES_EVERY_MS,
      refreshBanksEveryMs: e.REFRESH_BANKS_EVERY_MS,
      probe: {
        enabled: e.EXCHANGE_PROBE_ENABLED,
        timeoutMs: e.EXCHANGE_PROBE_TIMEOUT_MS,
        totalMs: e.EXCHANGE_PROBE_TOTAL_MS,
        concurrency: e.EXCHANGE_PROBE_CONCURRENCY,
      },
      jobs: { attempts: e.DISCOVERY_JOB_ATTEMPTS, backoffMs: e.DISCOVERY_JOB_BACKOFF_MS, lockMs: e.DISCOVERY_JOB_LOCK_MS },
    },
    compliance: {
      screening: {
        nameThreshold: e.SCREENING_NAME_THRESHOLD,
        reviewThreshold: e.SCREENING_REVIEW_THRESHOLD,
        reviewSlaMs: e.SCREENING_REVIEW_SLA_MS,
      },
      ctrThresholdUsd: e.CTR_THRESHOLD_USD,
      sanctionsLists: {
        ofac: sourceList(e.SANCTIONS_LIST_PATH_OR_URL),
        un: sourceList(e.UN_SANCTIONS_LIST_PATH_OR_URL),
        eu: sourceList(e.EU_SANCTIONS_LIST_PATH_OR_URL),
      },
      sanctionsImportEveryMs: e.SANCTIONS_IMPORT_EVERY_MS,
      reportMaxRows: e.COMPLIANCE_REPORT_MAX_ROWS,
      reportTimeoutMs: e.COMPLIANCE_REPORT_TIMEOUT_MS,
    },
    p2p: { referencePricesKes: e.P2P_REFERENCE_PRICES_KES },
    appeals: { slaMs: e.APPEAL_SLA_MS },
    rails: { bank_transfer: e.RAIL_BANK_TRANSFER, mobile_money: e.RAIL_MOBILE_MONEY, crypto: e.RAIL_CRYPTO },
    jenga: {
      baseUrl: e.JENGA_BASE_URL.replace(/\/$/, ''),
      apiKey: e.JENGA_API_KEY ?? '',
      merchantCode: e.JENGA_MERCHANT_CODE ?? '',
      consumerSecret: e.JENGA_CONSUMER_SECRET ?? '',
      privateKeyPem: (e.JENGA_PRIVATE_KEY ?? '').replace(/\\n/g, '\n'),
      accountNumber: e.JENGA_ACCOUNT_NUMBER ?? '',
      accountName: e.JENGA_ACCOUNT_NAME,
      countryCode: e.JENGA_COUNTRY_CODE,
    },
    daraja: {
      baseUrl: e.DARAJA_BASE_URL.replace(/\/$/, ''),
      consumerKey: e.DARAJA_CONSUMER_KEY ?? '',
      consumerSecret: e.DARAJA_CONSUMER_SECRET ?? '',
      shortcode: e.DARAJA_SHORTCODE ?? '',
      passkey: e.DARAJA_PASSKEY ?? '',
      transactionType: e.DARAJA_TRANSACTION_TYPE,
      callbackSecret: e.DARAJA_CALLBACK_SECRET ?? '',
      b2c: { initiatorName: e.DARAJA_B2C_INITIATOR_NAME ?? '', securityCredential: e.DARAJA_B2C_SECURITY_CREDENTIAL ?? '' },
    },
    ccxt: {
      exchange: e.CCXT_EXCHANGE ?? '',
      apiKey: e.CCXT_API_KEY ?? '',
      secret: e.CCXT_SECRET ?? '',
      sandbox: e.CCXT_SANDBOX,
      apiUrl: e.CCXT_API_URL,
      network: e.CCXT_WITHDRAW_NETWORK,
    },
    webhooks: {
      allowPrivateTargets: e.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
      maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
      backoffMs: e.WEBHOOK_BACKOFF_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      dispatchEveryMs: e.WEBHOOK_DISPATCH_EVERY_MS,
      maxEndpointsPerUser: e.WEBHOOK_MAX_ENDPOINTS_PER_USER,
      maxInFlightPerEndpoint: e.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT,
      eventRetentionDays: e.EVENTS_RETENTION_DAYS,
      pruneEventsEveryMs: e.PRUNE_EVENTS_EVERY_MS,
    },
  });
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
