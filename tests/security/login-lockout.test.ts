import { expect } from 'chai';
import request from 'supertest';
import { api as mainApi, newUser, type TestUser } from '../support/api';
import { freePort } from '../support/local-tools';
import { startApiProcess, stopApiProcess as stopApi, untilHealthy, type ApiProcess } from '../support/processes';
import { expectSafeProblem as expectProblem } from '../support/problems';

/**
 * OWASP API2 / the authentication cheat sheet: failed logins are bounded per account *and address*, tightly,
 * and per account, loosely, so a guesser cannot lock the owner out by failing on purpose. The api runs behind
 * a "proxy" here: TRUST_PROXY names the loopback subnet, so each request's X-Forwarded-For is its client
 * address, as a load balancer would set it.
 */

const PER_ACCOUNT_AND_IP = 5;
const PER_ACCOUNT = 12;

/** Its output, both streams, is read back when it refuses to boot. */
const startApi = (env: Record<string, string>, port: number) => startApiProcess(env, port, ['stdout', 'stderr']);

describe('security: login lockout by someone else', function () {
  this.timeout(60_000);
  let proxied: ApiProcess;

  before(async () => {
    proxied = startApi(
      {
        TRUST_PROXY: '127.0.0.0/8,::1/128',
        RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP: String(PER_ACCOUNT_AND_IP),
        RATE_LIMIT_LOGIN_PER_ACCOUNT: String(PER_ACCOUNT),
      },
      await freePort(),
    );
    await untilHealthy(proxied, 'the api behind the proxy');
  });

  after(() => stopApi(proxied));

  const login = (from: string, email: string, password: string) =>
    request(proxied.url).post('/api/v1/auth/login').set('X-Forwarded-For', from).send({ email, password });

  async function failFrom(from: string, user: TestUser, times: number): Promise<void> {
    for (let i = 0; i < times; i += 1) {
      expectProblem(await login(from, user.email, `wrong-password-${i}`), 401, 'unauthenticated', `failure ${i + 1} from ${from}`);
    }
  }

  describe('when an attacker at one address fails many times on the victim account', () => {
    it('then the attacker is refused and the victim at another address still logs in', async () => {
      const victim = await newUser();
      await failFrom('203.0.113.66', victim, PER_ACCOUNT_AND_IP);
      for (let i = 0; i < 20; i += 1) expectProblem(await login('203.0.113.66', victim.email, 'wrong-again'), 429, 'rate_limited');
      const owner = await login('198.51.100.20', victim.email, victim.password);
      expect(owner.status, owner.text).to.equal(200);
      expect((owner.body as { token_type: string }).token_type).to.equal('Bearer');
    });
  });

  describe('when one address fails on one account up to the bound', () => {
    it('then that address gets 429 with Retry-After, even with the right password', async () => {
      const user = await newUser();
      await failFrom('203.0.113.7', user, PER_ACCOUNT_AND_IP);
      const blocked = await login('203.0.113.7', user.email, user.password);
      expectProblem(blocked, 429, 'rate_limited');
      expect((blocked.body as { detail: string }).detail).to.include('from this address');
      const retryAfter = Number(blocked.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).to.equal(true);
      expect(retryAfter).to.be.within(1, 15 * 60);
    });

    it('then a success from that address before the bound clears its count', async () => {
      const user = await newUser();
      // Two rounds of one failure short of the bound: without the reset the second round would be refused.
      for (let round = 0; round < 2; round += 1) {
        await failFrom('203.0.113.8', user, PER_ACCOUNT_AND_IP - 1);
        const ok = await login('203.0.113.8', user.email, user.password);
        expect(ok.status, ok.text).to.equal(200);
      }
    });

    it('then its IPv4-mapped IPv6 form counts as the same address', async () => {
      const user = await newUser();
      await failFrom('203.0.113.9', user, PER_ACCOUNT_AND_IP);
      expectProblem(await login('::ffff:203.0.113.9', user.email, user.password), 429, 'rate_limited');
    });
  });

  describe('when failures on one account come from many addresses', () => {
    it('then the account as a whole is bounded too, and other accounts are not', async () => {
      const user = await newUser();
      const bystander = await newUser();
      let spent = 0;
      for (let n = 1; spent < PER_ACCOUNT; n += 1) {
        const times = Math.min(PER_ACCOUNT_AND_IP, PER_ACCOUNT - spent);
        await failFrom(`192.0.2.${n}`, user, times);
        spent += times;
      }
      const fresh = await login('192.0.2.200', user.email, user.password);
      expectProblem(fresh, 429, 'rate_limited');
      const { detail } = fresh.body as { detail: string };
      expect(detail).to.include('failed logins for this account');
      expect(detail).not.to.include('from this address');
      expect((await login('192.0.2.200', bystander.email, bystander.password)).status).to.equal(200);
    });
  });

  describe('when the client is IPv6', () => {
    it('then addresses in one /64 share a bound and another /64 does not', async () => {
      const user = await newUser();
      await failFrom('2001:db8:1:2::a', user, PER_ACCOUNT_AND_IP);
      expectProblem(await login('2001:db8:1:2::b', user.email, user.password), 429, 'rate_limited');
      expectProblem(await login('2001:db8:1:2:ffff:1:2:3', user.email, user.password), 429, 'rate_limited');
      const other = await login('2001:db8:1:3::a', user.email, user.password);
      expect(other.status, other.text).to.equal(200);
    });
  });

  describe('when no proxy is trusted (the default)', () => {
    it('then X-Forwarded-For cannot pick a fresh address to guess from', async () => {
      const user = await newUser();
      for (let i = 0; i < PER_ACCOUNT_AND_IP; i += 1) {
        const res = await mainApi()
          .post('/api/v1/auth/login')
          .set('X-Forwarded-For', `198.18.0.${i}`)
          .send({ email: user.email, password: 'wrong' });
        expectProblem(res, 401, 'unauthenticated');
      }
      const spoofed = await mainApi()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', '198.18.1.1')
        .send({ email: user.email, password: 'wrong' });
      expectProblem(spoofed, 429, 'rate_limited');
    });
  });

  describe('when the api is started with TRUST_PROXY=true', () => {
    it('then it refuses to boot, naming TRUST_PROXY', async () => {
      const refused = startApi({ TRUST_PROXY: 'true' }, await freePort());
      try {
        const code = await refused.exited;
        expect(code, refused.output()).to.be.a('number');
        expect(code).not.to.equal(0);
        expect(refused.output()).to.include('TRUST_PROXY');
      } finally {
        await stopApi(refused);
      }
    });
  });
});
