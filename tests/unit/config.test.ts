import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../platform/config';
import { temporalConnectionOptions } from '../../platform/temporal';

const STRONG_SECRET = 'a-production-secret-that-is-long-enough-0123456789';

function expectConfigError(env: Record<string, string>, variable: string): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    const configError = err as ConfigError;
    expect(
      configError.problems.some((p) => p.startsWith(`${variable}: `)),
      configError.message,
    ).to.equal(true);
    expect(configError.message).to.include(variable);
    return configError;
  }
  return expect.fail(`expected loadConfig to refuse ${variable}`);
}

const JENGA = {
  RAIL_BANK_TRANSFER: 'jenga',
  JENGA_API_KEY: 'k',
  JENGA_MERCHANT_CODE: 'm',
  JENGA_CONSUMER_SECRET: 's',
  JENGA_PRIVATE_KEY: 'pem',
  JENGA_ACCOUNT_NUMBER: '1100000000',
};
const CCXT = { RAIL_CRYPTO: 'ccxt', CCXT_EXCHANGE: 'binance', CCXT_API_KEY: 'k', CCXT_SECRET: 's' };

describe('unit: config', () => {
  describe('when the environment is empty', () => {
    it('then every setting has its development default', () => {
      const cfg = loadConfig({});
      expect(cfg.env).to.equal('development');
      expect(cfg.http).to.deep.equal({ host: '127.0.0.1', port: 3000, publicBaseUrl: 'http://127.0.0.1:3000', trustProxy: 0 });
      expect(cfg.logLevel).to.equal('info');
      expect(cfg.databaseUrl).to.equal('postgres://postgres@127.0.0.1:5432/paygate');
      expect(cfg.redisUrl).to.equal('redis://127.0.0.1:6379');
      expect(cfg.queuePrefix).to.equal('paygate');
      expect(cfg.temporal).to.deep.equal({
        address: '127.0.0.1:7233',
        namespace: 'default',
        taskQueue: 'paygate',
        uiUrl: 'http://127.0.0.1:8233',
        registerSearchAttributes: true,
      });
      expect(cfg.metrics).to.deep.equal({ cacheMs: 5000, token: 'paygate-dev-metrics-token-change-me' });
      expect(cfg.webhooks).to.include({ allowPrivateTargets: false, maxEndpointsPerUser: 10, maxInFlightPerEndpoint: 2 });
      expect(cfg.payments).to.deep.equal({ pollAfterMs: 5000, settleTimeoutMs: 900_000, maxPollIntervalMs: 60_000 });
      expect(cfg.jwt.issuer).to.equal('paygate');
      expect(cfg.jwt.audience).to.equal('paygate-api');
      expect(cfg.jwt.ttlSeconds).to.equal(900);
      expect(cfg.jwt.secret.length).to.be.at.least(32);
      expect(cfg.admin).to.equal(undefined);
      expect(cfg.rateLimits).to.deep.equal({
        loginPerIp: 30,
        loginPerAccountAndIp: 5,
        loginPerAccount: 100,
        registerPerIp: 10,
        apiPerMinute: 1200,
        apiPerAccountPerMinute: 3000,
        apiFlushMs: 250,
        apiBatch: 10,
        screenPerMinute: 60,
      });
      expect(cfg.apiKeys).to.deep.equal({ maxPerUser: 20 });
      expect(cfg.limits.fxToKes).to.deep.equal({ KES: '1', USD: '129.00', USDT: '129.00', USDC: '129.00', BTC: '11000000', ETH: '400000' });
    });

    it('then the result is frozen', () => {
      expect(Object.isFrozen(loadConfig({}))).to.equal(true);
    });
  });

  describe('when settings are given', () => {
    it('then they are parsed and typed', () => {
      const cfg = loadConfig({
        NODE_ENV: 'production',
        JWT_SECRET: STRONG_SECRET,
        SANDBOX_CALLBACK_SECRET: STRONG_SECRET,
        METRICS_TOKEN: STRONG_SECRET,
        PORT: '8080',
        HOST: '0.0.0.0',
        PUBLIC_BASE_URL: 'https://pay.example.com/',
        TRUST_PROXY: '1',
        JWT_TTL_SECONDS: '300',
        ADMIN_EMAIL: 'root@example.com',
        ADMIN_PASSWORD: 'a-very-long-admin-password',
        FX_RATES_TO_KES: 'usd=130.5, btc=12000000',
      });
      expect(cfg.env).to.equal('production');
      expect(cfg.http).to.deep.equal({ host: '0.0.0.0', port: 8080, publicBaseUrl: 'https://pay.example.com', trustProxy: 1 });
      expect(cfg.jwt.secret).to.equal(STRONG_SECRET);
      expect(cfg.jwt.ttlSeconds).to.equal(300);
      expect(cfg.admin).to.deep.equal({ email: 'root@example.com', password: 'a-very-long-admin-password' });
      expect(cfg.limits.fxToKes).to.deep.equal({ KES: '1', USD: '130.5', BTC: '12000000' });
    });
  });

  describe('when production runs with the default JWT secret', () => {
    it('then it is refused with a ConfigError naming JWT_SECRET', () => {
      const err = expectConfigError({ NODE_ENV: 'production' }, 'JWT_SECRET');
      expect(err.message).to.match(/refused in production/);
    });

    it('then development and test accept it', () => {
      expect(loadConfig({ NODE_ENV: 'development' }).env).to.equal('development');
      expect(loadConfig({ NODE_ENV: 'test' }).env).to.equal('test');
    });
  });

  describe('when a built-in default secret is used', () => {
    const secrets = ['JWT_SECRET', 'SANDBOX_CALLBACK_SECRET', 'METRICS_TOKEN'];
    const others = (name: string) => Object.fromEntries(secrets.filter((s) => s !== name).map((s) => [s, STRONG_SECRET]));

    for (const name of secrets) {
      it(`then ${name} is refused on HOST=0.0.0.0 even with NODE_ENV=development, naming ${name}`, () => {
        const err = expectConfigError({ NODE_ENV: 'development', HOST: '0.0.0.0', ...others(name) }, name);
        expect(err.problems).to.have.length(1);
        expect(err.message).to.include('loopback');
      });

      it(`then ${name} is refused on HOST=0.0.0.0 when NODE_ENV is not set`, () => {
        expectConfigError({ HOST: '0.0.0.0', ...others(name) }, name);
      });

      it(`then ${name} is refused in production even on loopback`, () => {
        const err = expectConfigError({ NODE_ENV: 'production', HOST: '127.0.0.1', ...others(name) }, name);
        expect(err.message).to.match(/refused in production/);
      });

      it(`then ${name} set to its public default value explicitly is refused just the same`, () => {
        const defaults = loadConfig({});
        const builtIns: Record<string, string> = {
          JWT_SECRET: defaults.jwt.secret,
          SANDBOX_CALLBACK_SECRET: defaults.sandbox.callbackSecret,
          METRICS_TOKEN: defaults.metrics.token,
        };
        const builtIn = builtIns[name] ?? '';
        expectConfigError({ HOST: '10.0.0.5', [name]: builtIn, ...others(name) }, name);
      });
    }

    for (const host of ['127.0.0.1', '127.0.1.1', '::1', '[::1]', 'localhost']) {
      it(`then test and development on loopback ${host} accept them`, () => {
        expect(loadConfig({ NODE_ENV: 'test', HOST: host }).env).to.equal('test');
        expect(loadConfig({ NODE_ENV: 'development', HOST: host }).env).to.equal('development');
      });
    }

    it('then a public HOST with real secrets boots', () => {
      const cfg = loadConfig({
        HOST: '0.0.0.0',
        JWT_SECRET: STRONG_SECRET,
        SANDBOX_CALLBACK_SECRET: STRONG_SECRET,
        METRICS_TOKEN: STRONG_SECRET,
      });
      expect(cfg.http.host).to.equal('0.0.0.0');
    });
  });

  describe('when M-Pesa goes through Daraja', () => {
    const daraja = {
      RAIL_MOBILE_MONEY: 'daraja',
      DARAJA_CONSUMER_KEY: 'k',
      DARAJA_CONSUMER_SECRET: 's',
      DARAJA_SHORTCODE: '174379',
      DARAJA_PASSKEY: 'p',
      DARAJA_CALLBACK_SECRET: 'a-daraja-callback-secret-0123456789',
      DARAJA_B2C_INITIATOR_NAME: 'i',
      DARAJA_B2C_SECURITY_CREDENTIAL: 'c',
    };
    // A production deployment is one world: with M-Pesa real, every rail is real.
    const production = {
      NODE_ENV: 'production',
      JWT_SECRET: STRONG_SECRET,
      SANDBOX_CALLBACK_SECRET: STRONG_SECRET,
      METRICS_TOKEN: STRONG_SECRET,
      ...JENGA,
      ...CCXT,
    };

    it('then a missing PUBLIC_BASE_URL is refused at boot, naming it', () => {
      const err = expectConfigError({ ...daraja }, 'PUBLIC_BASE_URL');
      expect(err.message).to.include('RAIL_MOBILE_MONEY=daraja');
    });

    it('then production needs an https PUBLIC_BASE_URL', () => {
      expectConfigError({ ...daraja, ...production, PUBLIC_BASE_URL: 'http://pay.example.com' }, 'PUBLIC_BASE_URL');
      expect(loadConfig({ ...daraja, ...production, PUBLIC_BASE_URL: 'https://pay.example.com' }).http.publicBaseUrl).to.equal(
        'https://pay.example.com',
      );
    });

    it('then a test run may call back on loopback http', () => {
      expect(loadConfig({ ...daraja, NODE_ENV: 'test', PUBLIC_BASE_URL: 'http://127.0.0.1:3000' }).rails.mobile_money).to.equal('daraja');
    });
  });

  describe('when sandbox and real rails are mixed', () => {
    const deployed = { JWT_SECRET: STRONG_SECRET, SANDBOX_CALLBACK_SECRET: STRONG_SECRET, METRICS_TOKEN: STRONG_SECRET };

    it('then production refuses to boot, naming every rail and which world each is in', () => {
      const err = expectConfigError({ ...deployed, ...JENGA, NODE_ENV: 'production' }, 'RAIL_BANK_TRANSFER');
      expect(err.message)
        .to.include('RAIL_BANK_TRANSFER=jenga')
        .and.include('RAIL_MOBILE_MONEY=sandbox')
        .and.include('RAIL_CRYPTO=sandbox');
    });

    it('then development or test on a public HOST refuses it too', () => {
      for (const env of ['development', 'test']) {
        const err = expectConfigError({ ...deployed, ...CCXT, NODE_ENV: env, HOST: '0.0.0.0' }, 'RAIL_CRYPTO');
        expect(err.message).to.include('one world per deployment');
      }
    });

    it('then a local run on loopback may mix them', () => {
      expect(loadConfig({ ...JENGA, NODE_ENV: 'test', HOST: '127.0.0.1' }).rails.bank_transfer).to.equal('jenga');
      expect(loadConfig({ ...CCXT, NODE_ENV: 'development', HOST: '::1' }).rails.crypto).to.equal('ccxt');
    });

    it('then every rail on the sandbox, or every rail real, boots in production', () => {
      expect(loadConfig({ ...deployed, NODE_ENV: 'production', HOST: '0.0.0.0' }).rails).to.deep.equal({
        bank_transfer: 'sandbox',
        mobile_money: 'sandbox',
        crypto: 'sandbox',
      });
    });
  });

  describe('when FOUR_EYES_ABOVE_KES is read', () => {
    it('then it is KES 100,000 unless set, and must be a KES amount', () => {
      expect(loadConfig({}).fourEyes.aboveKes).to.equal('100000');
      expect(loadConfig({ FOUR_EYES_ABOVE_KES: '2500.50' }).fourEyes.aboveKes).to.equal('2500.50');
      expectConfigError({ FOUR_EYES_ABOVE_KES: 'lots' }, 'FOUR_EYES_ABOVE_KES');
    });
  });

  describe('when a setting is invalid', () => {
    const cases: [string, Record<string, string>, string][] = [
      ['a non-numeric PORT', { PORT: 'abc' }, 'PORT'],
      ['a fractional PORT', { PORT: '80.5' }, 'PORT'],
      ['a negative PORT', { PORT: '-1' }, 'PORT'],
      ['a PORT above 65535', { PORT: '70000' }, 'PORT'],
      ['a short JWT_SECRET', { JWT_SECRET: 'too-short' }, 'JWT_SECRET'],
      ['an unknown NODE_ENV', { NODE_ENV: 'staging' }, 'NODE_ENV'],
      ['a non-postgres DATABASE_URL', { DATABASE_URL: 'mysql://localhost/paygate' }, 'DATABASE_URL'],
      ['a non-redis REDIS_URL', { REDIS_URL: 'http://localhost:6379' }, 'REDIS_URL'],
      ['a bad TRUST_PROXY', { TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
      ['a TRUST_PROXY that is not an address', { TRUST_PROXY: '10.0.0.0/8,proxy.internal' }, 'TRUST_PROXY'],
      ['a TRUST_PROXY CIDR with a prefix too long', { TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
      ['a zero login limit', { RATE_LIMIT_LOGIN_PER_ACCOUNT: '0' }, 'RATE_LIMIT_LOGIN_PER_ACCOUNT'],
      ['a zero login limit per address', { RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP: '0' }, 'RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP'],
      ['a JWT TTL under a minute', { JWT_TTL_SECONDS: '10' }, 'JWT_TTL_SECONDS'],
      ['a JWT TTL over an hour', { JWT_TTL_SECONDS: '86400' }, 'JWT_TTL_SECONDS'],
      ['no webhook slot per endpoint', { WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '0' }, 'WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT'],
      ['a malformed FX table', { FX_RATES_TO_KES: 'USD:129' }, 'FX_RATES_TO_KES'],
      ['a negative limit', { LIMIT_VERIFIED_DAILY_KES: '-1' }, 'LIMIT_VERIFIED_DAILY_KES'],
      ['a poll interval cap under 10 ms', { PAYMENT_POLL_MAX_INTERVAL_MS: '5' }, 'PAYMENT_POLL_MAX_INTERVAL_MS'],
      ['a bad ADMIN_EMAIL', { ADMIN_EMAIL: 'root', ADMIN_PASSWORD: 'a-very-long-admin-password' }, 'ADMIN_EMAIL'],
      ['a short ADMIN_PASSWORD', { ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'short' }, 'ADMIN_PASSWORD'],
    ];
    for (const [what, env, variable] of cases) {
      it(`then ${what} is a ConfigError naming ${variable}`, () => {
        expectConfigError(env, variable);
      });
    }

    it('then every bad setting is reported at once', () => {
      const err = expectConfigError({ PORT: 'abc', JWT_SECRET: 'short', NODE_ENV: 'staging' }, 'PORT');
      expect(err.problems.map((p) => p.split(':')[0])).to.include.members(['PORT', 'JWT_SECRET', 'NODE_ENV']);
    });
  });

  describe('when TRUST_PROXY says which proxies may name the client', () => {
    it('then true is refused, naming TRUST_PROXY: trusting every peer lets a client choose its address', () => {
      for (const value of ['true', 'TRUE', 'false', 'yes']) {
        const err = expectConfigError({ TRUST_PROXY: value }, 'TRUST_PROXY');
        expect(err.message).to.include('hop count');
      }
    });

    it('then a hop count is accepted', () => {
      expect(loadConfig({ TRUST_PROXY: '2' }).http.trustProxy).to.equal(2);
      expect(loadConfig({ TRUST_PROXY: '0' }).http.trustProxy).to.equal(0);
    });

    it('then a list of addresses, CIDRs and named subnets is accepted', () => {
      expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,2001:db8::/32, loopback' }).http.trustProxy).to.deep.equal([
        '10.0.0.0/8',
        '192.0.2.7',
        '2001:db8::/32',
        'loopback',
      ]);
    });
  });

  describe('when only one of ADMIN_EMAIL and ADMIN_PASSWORD is set', () => {
    it('then ADMIN_EMAIL without ADMIN_PASSWORD names both', () => {
      const err = expectConfigError({ ADMIN_EMAIL: 'root@example.com' }, 'ADMIN_PASSWORD');
      expect(err.message).to.include('ADMIN_EMAIL');
    });

    it('then ADMIN_PASSWORD without ADMIN_EMAIL names both', () => {
      const err = expectConfigError({ ADMIN_PASSWORD: 'a-very-long-admin-password' }, 'ADMIN_PASSWORD');
      expect(err.message).to.include('ADMIN_EMAIL');
    });
  });

  describe('when Temporal is reached over TLS (a secured cluster or Temporal Cloud)', () => {
    it('then a client certificate without its key names both', () => {
      const err = expectConfigError({ TEMPORAL_TLS_CERT_PATH: '/etc/paygate/client.pem' }, 'TEMPORAL_TLS_KEY_PATH');
      expect(err.message).to.include('TEMPORAL_TLS_CERT_PATH');
    });

    it('then by default the connection is plain, with no API key', () => {
      expect(temporalConnectionOptions(loadConfig({}).temporal)).to.deep.equal({ address: '127.0.0.1:7233' });
    });

    it('then an API key turns TLS on and is sent', () => {
      const cfg = loadConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'cloud-api-key' });
      expect(temporalConnectionOptions(cfg.temporal)).to.deep.equal({
        address: 'ns.acct.tmprl.cloud:7233',
        tls: {},
        apiKey: 'cloud-api-key',
      });
    });

    it('then the client certificate pair and the server CA are read from their files', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-tls-'));
      try {
        for (const name of ['client.pem', 'client.key', 'ca.pem']) fs.writeFileSync(path.join(dir, name), `contents of ${name}`);
        const cfg = loadConfig({
          TEMPORAL_TLS_CERT_PATH: path.join(dir, 'client.pem'),
          TEMPORAL_TLS_KEY_PATH: path.join(dir, 'client.key'),
          TEMPORAL_TLS_CA_PATH: path.join(dir, 'ca.pem'),
        });
        const { tls } = temporalConnectionOptions(cfg.temporal);
        expect(tls?.clientCertPair?.crt.toString()).to.equal('contents of client.pem');
        expect(tls?.clientCertPair?.key.toString()).to.equal('contents of client.key');
        expect(tls?.serverRootCACertificate?.toString()).to.equal('contents of ca.pem');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
