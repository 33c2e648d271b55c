import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';

/** Every entry point refuses a bad setting before it does anything else, with the config module's message. */

const DIST = path.resolve(__dirname, '..');
const ENTRY_POINTS = ['api/server.js', 'workers/temporal-worker.js', 'workers/jobs.js'];

async function boot(entry: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [path.join(DIST, entry)], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stderr };
}

describe('boot with a bad setting', () => {
  for (const entry of ENTRY_POINTS) {
    describe(`when ${entry} is started with PORT=abc`, () => {
      it('then it exits 78 with a message naming the variable, not a stack trace', async function () {
        this.timeout(20_000);
        const { code, stderr } = await boot(entry, { PORT: 'abc' });
        expect(code).to.equal(78);
        expect(stderr).to.match(/^Invalid configuration:\n {2}PORT: /);
        expect(stderr).not.to.match(/\bat .+\.js:\d+/);
      });
    });
  }
});

describe('boot with sandbox and real rails mixed', () => {
  describe('when the api is started in production with the bank on Jenga and the other rails on the sandbox', () => {
    it('then it exits 78 with a message naming the rails, before it serves anything', async function () {
      this.timeout(20_000);
      const secret = 'a-production-secret-that-is-long-enough-0123456789';
      const { code, stderr } = await boot('api/server.js', {
        NODE_ENV: 'production',
        HOST: '0.0.0.0',
        JWT_SECRET: secret,
        SANDBOX_CALLBACK_SECRET: secret,
        METRICS_TOKEN: secret,
        RAIL_BANK_TRANSFER: 'jenga',
        RAIL_MOBILE_MONEY: 'sandbox',
        RAIL_CRYPTO: 'sandbox',
        JENGA_API_KEY: 'k',
        JENGA_MERCHANT_CODE: 'm',
        JENGA_CONSUMER_SECRET: 's',
        JENGA_PRIVATE_KEY: 'pem',
        JENGA_ACCOUNT_NUMBER: '1100000000',
      });
      expect(code).to.equal(78);
      expect(stderr).to.match(/^Invalid configuration:\n {2}RAIL_BANK_TRANSFER: one world per deployment/);
      for (const rail of ['RAIL_BANK_TRANSFER=jenga', 'RAIL_MOBILE_MONEY=sandbox', 'RAIL_CRYPTO=sandbox']) expect(stderr).to.include(rail);
      expect(stderr).not.to.match(/\bat .+\.js:\d+/);
    });
  });
});
