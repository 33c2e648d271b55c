import { expect } from 'chai';
import { unservedSimulators } from '../services/sandbox-money-service';
import { api, newUser, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { expectProblem } from './support/problems';
import { realRails } from './support/rails';

/**
 * One world per deployment (README, "Sandbox and live"; docs/access.md#test-and-live-keys): a sandbox takes only
 * `test` keys, a live deployment only `live` keys, and the money-in simulators exist only in a sandbox. A
 * local run (development or test on loopback) may mix rails, and there each key is held to its own rails.
 */

const STRONG_SECRET = 'a-deployment-secret-that-is-long-enough-0123456789';
const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });

const createKey = (owner: TestUser, mode: string) =>
  api()
    .post('/api/v1/api-keys')
    .set(owner.auth)
    .send({ name: 'one world', mode, scopes: ['wallets:read'] });

describe('one world per deployment', () => {
  // The suite's own rails: all sandbox, or all real under TEST_RAILS=real.
  const [served, other] = realRails ? (['live', 'test'] as const) : (['test', 'live'] as const);

  describe('when the deployment is not a local run', () => {
    let owner: TestUser;
    let otherKey: string;
    let restore: () => void;
    before(async () => {
      owner = await newUser({ funded: false });
      // Made while the run was local (as a key made before a deployment changed worlds).
      const made = await createKey(owner, other);
      expect(made.status, JSON.stringify(made.body)).to.equal(201);
      otherKey = (made.body as { secret: string }).secret;
      restore = withEnv({
        HOST: '0.0.0.0',
        JWT_SECRET: STRONG_SECRET,
        SANDBOX_CALLBACK_SECRET: STRONG_SECRET,
        METRICS_TOKEN: STRONG_SECRET,
      });
    });
    after(() => restore());

    it(`then a ${other} key cannot be created (422), and a ${served} key can`, async () => {
      const refused = expectProblem(await createKey(owner, other), 422, 'key_mode_not_served');
      expect(refused.detail).to.include(`only ${served} keys`);
      const made = await createKey(owner, served);
      expect(made.status, JSON.stringify(made.body)).to.equal(201);
      expect(
        (
          await api()
            .get('/api/v1/wallets')
            .set(bearer((made.body as { secret: string }).secret))
        ).status,
      ).to.equal(200);
    });

    it(`then a ${other} key made before is refused on use (403)`, async () => {
      const res = await api().get('/api/v1/wallets').set(bearer(otherKey));
      expectProblem(res, 403, 'forbidden');
      expect((res.body as { detail: string }).detail).to.include(`not ${other} keys`);
    });
  });

  describe('when the rails are mixed (a local run on loopback)', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({
        RAIL_BANK_TRANSFER: 'jenga',
        RAIL_MOBILE_MONEY: 'sandbox',
        RAIL_CRYPTO: 'sandbox',
        JENGA_API_KEY: 'k',
        JENGA_MERCHANT_CODE: 'm',
        JENGA_CONSUMER_SECRET: 's',
        JENGA_PRIVATE_KEY: 'pem',
        JENGA_ACCOUNT_NUMBER: '1100000000',
      });
    });
    after(() => restore());

    it('then no money-in simulator is served, not even for the rails still on the sandbox', () => {
      expect(unservedSimulators()).to.have.members(['/sandbox/c2b', '/sandbox/bank-credits', '/sandbox/crypto-deposits']);
    });
  });

  describe('when every rail is the sandbox', () => {
    let restore: () => void;
    before(() => {
      restore = withEnv({ RAIL_BANK_TRANSFER: 'sandbox', RAIL_MOBILE_MONEY: 'sandbox', RAIL_CRYPTO: 'sandbox' });
    });
    after(() => restore());

    it('then every money-in simulator is served', () => {
      expect(unservedSimulators()).to.deep.equal([]);
    });
  });
});
