import { expect } from 'chai';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { MAINTENANCE_QUEUE } from '../../workers/queues';
import { DISCOVERY_QUEUE } from '../../workers/queues';
import { auditPayments, awaitTerminal, duplicateCount } from './support/audit';
import { initiatePayment, newCustomer, paymentBody, readiness, type Attempted, type Customer } from './support/client';
import { query } from './support/db';
import { Deployment, type PaygateProcess } from './support/paygate';
import { score } from './support/scoreboard';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { sleep, until } from './support/wait';
import { faultStack } from './setup';

const RESTARTS = 2;
const DOWN_MS = 2000;

async function lastBankRefresh(): Promise<number> {
  const [row] = await query<{ refreshed_at: Date }>("SELECT refreshed_at FROM catalogue_refreshes WHERE catalogue = 'banks'");
  return new Date(row.refreshed_at).getTime();
}

async function login(baseUrl: string, customer: Customer): Promise<number> {
  const res = await fetch(`${baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: customer.email, password: 'a-long-enough-password' }),
    signal: AbortSignal.timeout(15_000),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('faults: Redis restarts, empty, under a running deployment', () => {
  let redis: PrivateRedis;
  let deployment: Deployment;
  let api: PaygateProcess;
  let connection: Redis;

  before(async function () {
    this.timeout(120_000);
    redis = await startPrivateRedis();
    deployment = new Deployment('redis', { ...faultStack.infra, redisUrl: redis.url }, { REFRESH_BANKS_EVERY_MS: '1000' });
    api = await deployment.startApi();
    await deployment.startWorker(api);
    await deployment.startJobs();
    connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    connection.on('error', () => undefined);
  });
  after(async function () {
    this.timeout(60_000);
    connection?.disconnect();
    await deployment?.stopAll();
    await redis?.crash();
  });

  it(`when Redis is killed and comes back empty ${RESTARTS} times, then every process carries on: payments complete, logins answer 503 while it is down, and the schedulers are put back and tick again`, async function () {
    this.timeout(180_000);
    const customer = await newCustomer(api.baseUrl);
    const schedulers = async (): Promise<number> => {
      const discovery = new Queue(DISCOVERY_QUEUE, { connection, prefix: deployment.queuePrefix });
      const maintenance = new Queue(MAINTENANCE_QUEUE, { connection, prefix: deployment.queuePrefix });
      try {
        return (await discovery.getJobSchedulersCount()) + (await maintenance.getJobSchedulersCount());
      } catch {
        return 0;
      } finally {
        await discovery.close();
        await maintenance.close();
      }
    };
    const expectedSchedulers = await schedulers();
    expect(expectedSchedulers, 'discovery and maintenance schedulers at boot').to.be.at.least(4);

    const attempts: Attempted[] = [];
    const outageLogins: number[] = [];
    const outageReadiness: string[] = [];
    let recovered = 0;
    let n = 0;
    const pay = async () => {
      n += 1;
      attempts.push(await initiatePayment(api.baseUrl, customer, paymentBody(n % 2 === 0 ? 'mpesa_callback' : 'bank_transfer', n)));
    };

    for (let restart = 0; restart < RESTARTS; restart += 1) {
      await pay();
      await redis.crash();
      const downSince = Date.now();
      // While Redis is away: payments are still taken (they need Postgres and Temporal only), logins are refused.
      while (Date.now() - downSince < DOWN_MS) {
        await pay();
        await sleep(200);
      }
      outageLogins.push(await login(api.baseUrl, customer));
      outageReadiness.push((await readiness(api.baseUrl)).checks.redis);
      await redis.start();
      const restarted = Date.now();
      await pay();

      await until('the schedulers to be put back', async () => ((await schedulers()) === expectedSchedulers ? true : undefined), 30_000);
      await until(
        'a scheduled bank refresh after the restart',
        async () => ((await lastBankRefresh()) > restarted ? true : undefined),
        30_000,
      );
      await until('logins to be taken again', async () => ((await login(api.baseUrl, customer)) === 200 ? true : undefined), 30_000);
      expect((await readiness(api.baseUrl)).checks.redis).to.equal('up');
      recovered += 1;
    }

    await awaitTerminal(
      attempts.filter((a) => a.orderId).map((a) => a.orderId!),
      60_000,
    );
    const audit = await auditPayments(attempts, {
      customerIds: [customer.userId],
      temporalAddress: faultStack.temporal.address,
      taskQueue: deployment.taskQueue,
    });
    score({
      scenario: 'Redis restart (empty)',
      injected: RESTARTS,
      recovered,
      requests: audit.requests,
      lost: audit.lost.length,
      duplicates: duplicateCount(audit),
      note: `${DOWN_MS} ms down each time; logins while down answered ${outageLogins.join(', ')}; payments while down: all accepted`,
    });

    expect(
      outageLogins.every((status) => status === 503),
      `logins while Redis is down: ${outageLogins.join(', ')}`,
    ).to.equal(true);
    expect(outageReadiness, '/readyz while Redis is down').to.deep.equal(Array<string>(RESTARTS).fill('down'));
    expect(audit.lost, 'requests lost').to.deep.equal([]);
    expect(audit.completed).to.equal(audit.requests);
    expect(duplicateCount(audit), 'duplicates').to.equal(0);
    for (const a of attempts) expect(a.attempts, 'payments needed no retry while Redis was down').to.equal(1);
    expect(deployment.unexpectedExits(), 'processes that died on their own').to.equal(0);
  });
});
