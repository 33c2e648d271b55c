import { expect } from 'chai';
import { Redis } from 'ioredis';
import request from 'supertest';
import { api, newUser } from './support/api';
import { freePort, startApiProcess, stopApiProcess, until, untilHealthy, type ApiProcess } from './support/processes';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server';
import { awayFromQuotaWindowEnd, sleep } from './support/wait';

/**
 * The API quota across api processes (docs/conventions.md#rate-limits): each process counts in its memory and
 * tells Redis in batches, so a key's quota admits at least its limit and at most limit + (N − 1) × B requests a
 * window, N processes and B = RATE_LIMIT_API_BATCH.
 */

const LIMIT = 20;
const BATCH = 4;
const PROCESSES = 2;

/** A new account's API key that reads wallets. */
async function newKey(): Promise<{ keyId: string; auth: { Authorization: string } }> {
  const owner = await newUser({ funded: false });
  const created = await api()
    .post('/api/v1/api-keys')
    .set(owner.auth)
    .send({ name: 'quota', mode: 'test', scopes: ['wallets:read'] });
  expect(created.status, created.text).to.equal(201);
  const body = created.body as { key_id: string; secret: string };
  return { keyId: body.key_id, auth: { Authorization: `Bearer ${body.secret}` } };
}

describe('the API quota across two api processes', function () {
  this.timeout(120_000);
  const fleet: ApiProcess[] = [];

  before(async () => {
    for (let i = 0; i < PROCESSES; i += 1) {
      fleet.push(
        startApiProcess(
          { RATE_LIMIT_API_PER_MINUTE: String(LIMIT), RATE_LIMIT_API_BATCH: String(BATCH), RATE_LIMIT_API_FLUSH_MS: '250' },
          await freePort(),
        ),
      );
    }
    await Promise.all(fleet.map((p, i) => untilHealthy(p, `api process ${i + 1}`)));
  });

  after(() => Promise.all(fleet.map((p) => stopApiProcess(p))));

  describe('when one key sends a burst of three times its quota to both at once', () => {
    it(`then at least ${LIMIT} and at most ${LIMIT} + (${PROCESSES} − 1) × ${BATCH} are answered, and the rest are 429 with Retry-After`, async () => {
      const key = await newKey();
      await awayFromQuotaWindowEnd();

      const answers = await Promise.all(
        Array.from({ length: 3 * LIMIT }, (_, i) =>
          request(fleet[i % PROCESSES].url)
            .get('/api/v1/wallets')
            .set(key.auth),
        ),
      );
      const statuses = answers.map((res) => res.status);
      const served = answers.filter((res) => res.status === 200);
      const refused = answers.filter((res) => res.status !== 200);
      expect(served.length, statuses.join(',')).to.be.within(LIMIT, LIMIT + (PROCESSES - 1) * BATCH);
      for (const res of refused) {
        expect(res.status, res.text).to.equal(429);
        expect((res.body as { code: string }).code).to.equal('rate_limited');
        expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
        expect(res.headers['ratelimit-policy']).to.match(new RegExp(`^"default";q=${LIMIT};w=60, "account";q=\\d+;w=60$`));
        expect(res.headers.ratelimit).to.match(/^"default";r=0;t=\d+, "account";r=\d+;t=\d+$/);
      }
      for (const res of served) expect(res.headers['ratelimit-policy']).to.match(new RegExp(`^"default";q=${LIMIT};w=60`));
      // Both processes served and refused: the bound held across them, not inside one.
      for (const p of fleet) {
        expect(answers.some((res, i) => fleet[i % PROCESSES] === p && res.status === 200)).to.equal(true);
      }

      // Once both have told Redis, a further request to either is refused.
      await sleep(600);
      for (const p of fleet) {
        const after = await request(p.url).get('/api/v1/wallets').set(key.auth);
        expect(after.status, after.text).to.equal(429);
      }
    });
  });

  describe('when another key of another account asks meanwhile', () => {
    it('then it has a quota of its own in every process', async () => {
      const other = await newUser({ funded: false });
      for (const p of fleet) expect((await request(p.url).get('/api/v1/wallets').set(other.auth)).status).to.equal(200);
    });
  });
});

describe('the API quota of an api process and its own Redis', function () {
  this.timeout(120_000);
  const LIMIT_HERE = 5;
  let redis: PrivateRedis;
  let connection: Redis;
  let running: ApiProcess | undefined;

  before(async () => {
    redis = await startPrivateRedis();
    connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    connection.on('error', () => undefined);
  });
  afterEach(() => stopApiProcess(running));
  after(async () => {
    connection?.disconnect();
    await redis?.crash();
  });

  /** Its streams are kept rather than shown: with Redis gone, its clients report every reconnection. */
  const startApi = async (flushMs: number) => {
    running = startApiProcess(
      { REDIS_URL: redis.url, RATE_LIMIT_API_PER_MINUTE: String(LIMIT_HERE), RATE_LIMIT_API_FLUSH_MS: String(flushMs) },
      await freePort(),
      ['stdout', 'stderr'],
    );
    await untilHealthy(running, 'the api process');
    return running;
  };

  /** What Redis holds of a key's quota, over its windows. */
  async function countedInRedis(keyId: string): Promise<number> {
    const keys = await connection.keys(`*:rl:api:key:${keyId}:*`);
    const values = keys.length > 0 ? await connection.mget(...keys) : [];
    return values.reduce((sum, v) => sum + Number(v ?? 0), 0);
  }

  describe('when the process is stopped with counts Redis has not had yet', () => {
    it('then it sends them before it exits', async () => {
      const api1 = await startApi(10_000);
      const key = await newKey();
      await awayFromQuotaWindowEnd();
      for (let i = 0; i < 3; i += 1) expect((await request(api1.url).get('/api/v1/wallets').set(key.auth)).status).to.equal(200);
      expect(await countedInRedis(key.keyId), 'before the stop: nothing flushed yet').to.equal(0);
      await stopApiProcess(api1);
      expect(await api1.exited).to.equal(0);
      expect(await countedInRedis(key.keyId)).to.equal(3);
    });
  });

  describe('when Redis goes away under a running process', () => {
    it('then requests are still admitted by counting in the process, up to the limit and without waiting, and Redis has the counts once it is back', async () => {
      const api1 = await startApi(200);
      const key = await newKey();
      await awayFromQuotaWindowEnd();
      await redis.crash();
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT_HERE + 3; i += 1) {
        const started = Date.now();
        const res = await request(api1.url).get('/api/v1/wallets').set(key.auth);
        expect(Date.now() - started, `request ${i + 1} answered without waiting on Redis`).to.be.below(1_000);
        statuses.push(res.status);
        if (res.status === 429) expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
      }
      expect(statuses).to.deep.equal([...Array<number>(LIMIT_HERE).fill(200), 429, 429, 429]);
      await redis.start();
      await until('the counts in Redis', async () => ((await countedInRedis(key.keyId)) === LIMIT_HERE ? true : undefined), 20_000, 200);
    });
  });
});
