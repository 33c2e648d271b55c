import { randomBytes } from 'node:crypto';

/**
 * Test settings, applied before anything reads the configuration. Each run gets its own database, task
 * queue and Redis prefix, so runs never see each other's data.
 */
export const RUN_ID = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

const defaults: Record<string, string> = {
  NODE_ENV: 'test',
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  DATABASE_URL: process.env.TEST_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/paygate_test_${RUN_ID}`,
  QUEUE_PREFIX: `paygate-test-${RUN_ID}`,
  TEMPORAL_TASK_QUEUE: `paygate-test-${RUN_ID}`,
  RATE_LIMIT_LOGIN_PER_IP: '100000',
  RATE_LIMIT_REGISTER_PER_IP: '100000',
  RATE_LIMIT_API_PER_MINUTE: '1000000',
  RATE_LIMIT_API_PER_ACCOUNT_PER_MINUTE: '1000000',
  RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP: '5',
  RATE_LIMIT_LOGIN_PER_ACCOUNT: '12',
  PAYMENT_POLL_AFTER_MS: '1000',
  SANDBOX_CALLBACK_DELAY_MS: '150',
  RECONCILE_GRACE_MS: '0',
  // Every test payer is funded generously (tests/support/funding.ts); the wallet-cap tests lower the caps.
  LIMIT_UNVERIFIED_BALANCE_KES: '100000000000',
  LIMIT_VERIFIED_BALANCE_KES: '100000000000',
  // Monitoring would hold those generous fundings (a new account's high value); tests of monitoring turn it on.
  MONITORING_ENABLED: 'false',
  // goAML reporting configured as a deployment would have it, with a CTR threshold test payments reach.
  GOAML_RENTITY_ID: '4242',
  GOAML_REPORTING_PERSON_NAME: 'Wanjiru Njeri Kamau',
  GOAML_LOCATION_ADDRESS: 'Waiyaki Way 12',
  CTR_THRESHOLD_KES: '1000',
};

for (const [name, value] of Object.entries(defaults)) process.env[name] = value;
