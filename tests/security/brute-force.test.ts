import { expect } from 'chai';
import request from 'supertest';
import { config } from '../../platform/config';
import { newUser } from '../support/api';
import { freePort } from '../support/local-tools';
import { startApiProcess, stopApiProcess, untilHealthy, type ApiProcess } from '../support/processes';
import { stack } from '../support/stack';
import { expectSafeProblem as expectProblem } from '../support/problems';

/**
 * OWASP API2/API4: password guessing. The failed-login limit per account and address lives in Redis, so two
 * api processes behind a load balancer share it: alternating between them buys an attacker nothing, and
 * neither does sending the guesses all at once. (Every request here comes from the same address; guesses
 * from elsewhere are in login-lockout.test.ts.)
 */

describe('security: login brute force across two api instances', function () {
  this.timeout(60_000);
  let second: ApiProcess;
  let limit: number;

  before(async () => {
    limit = config().rateLimits.loginPerAccountAndIp;
    expect(limit, 'the test settings allow 5 failed logins per account and address').to.equal(5);
    const port = await freePort();
    // Another api process on the same database and Redis (same prefix), as a second replica would be.
    second = startApiProcess({}, port);
    await untilHealthy(second, 'the second api instance');
  });

  after(() => stopApiProcess(second));

  const instances = () => [stack.baseUrl, second.url];
  const login = (instance: string, email: string, password: string) =>
    request(instance).post('/api/v1/auth/login').send({ email, password });

  describe('when failed logins for one account from one address alternate between the two instances', () => {
    it('then they are counted together: after the limit both answer 429 with Retry-After, even to the right password', async () => {
      const user = await newUser();
      for (let i = 0; i < limit; i += 1) {
        expectProblem(await login(instances()[i % 2], user.email, `wrong-password-${i}`), 401, 'unauthenticated', `attempt ${i + 1}`);
      }
      for (const instance of instances()) {
        const res = await login(instance, user.email, user.password);
        expectProblem(res, 429, 'rate_limited', instance);
        const retryAfter = Number(res.headers['retry-after']);
        expect(Number.isInteger(retryAfter), `Retry-After ${res.headers['retry-after']}`).to.equal(true);
        expect(retryAfter).to.be.within(1, 15 * 60);
      }
    });

    it('then a success on one instance clears the count on both', async () => {
      const user = await newUser();
      for (let round = 0; round < 2; round += 1) {
        for (let i = 0; i < limit - 1; i += 1) {
          expectProblem(await login(instances()[i % 2], user.email, 'wrong-password'), 401, 'unauthenticated');
        }
        const ok = await login(instances()[round % 2], user.email, user.password);
        expect(ok.status, ok.text).to.equal(200);
      }
    });

    it('then another account is not locked by it', async () => {
      const victim = await newUser();
      const bystander = await newUser();
      for (let i = 0; i <= limit; i += 1) await login(instances()[i % 2], victim.email, 'wrong-password');
      for (const instance of instances()) {
        expect((await login(instance, bystander.email, bystander.password)).status).to.equal(200);
      }
    });
  });

  describe('when many guesses arrive at once, spread over both instances', () => {
    it('then no more than the limit are even checked: the rest are 429 without a verdict on the password', async () => {
      const user = await newUser();
      const burst = 16;
      const answers = await Promise.all(Array.from({ length: burst }, (_, i) => login(instances()[i % 2], user.email, `guess-${i}`)));
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 401).length, `statuses ${statuses.join(',')}`).to.equal(limit);
      expect(statuses.filter((s) => s === 429).length, `statuses ${statuses.join(',')}`).to.equal(burst - limit);
      for (const res of answers.filter((r) => r.status === 429)) expect(res.headers['retry-after']).to.match(/^\d+$/);
    });
  });
});
