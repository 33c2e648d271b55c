import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

import { createSequelize } from '../../platform/database';
import { migrateUp } from '../../models/migrate';
import { refreshBanks, refreshExchanges } from '../../workers/catalogue-refresh';
import { ROOT, dropDatabase } from '../support/local-tools';
import { closeDatabasePool, query, useDatabase } from './support/db';
import type { Infrastructure } from './support/paygate';
import { scoreboard } from './support/scoreboard';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { SCRATCH, removeScratch, startPrivateTemporal, type PrivateTemporal } from './support/servers';
import { openRepositories } from '../../repositories/transaction';

/**
 * Root hooks of the fault suite (`npm run test:faults`): a fresh database on the shared Postgres, and a
 * private Redis and a private Temporal dev server on free ports, which the scenarios may break at will.
 * Paygate itself runs as real processes, started by each scenario. At the end: the summary table, and the
 * ledger summed over the whole run, which must balance in every currency.
 */

export const RUN_ID = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

export interface FaultStack {
  databaseUrl: string;
  redis: PrivateRedis;
  temporal: PrivateTemporal;
  infra: Infrastructure;
}

export let faultStack: FaultStack;
let failures = 0;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(180_000);
    // The suite's own process uses the configuration only through the modules it borrows (migrations,
    // catalogue refresh): keep them quiet.
    process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';
    for (const entry of ['api/server.js', 'workers/temporal-worker.js', 'workers/jobs.js', 'workflow-bundle.js']) {
      if (!fs.existsSync(path.join(ROOT, 'dist', entry))) throw new Error(`dist/${entry} is missing: run \`npm run build\` first`);
    }
    const databaseUrl = process.env.TEST_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/paygate_faults_${RUN_ID}`;
    await dropDatabase(databaseUrl);
    await migrateUp(databaseUrl);
    // The platform catalogue, as a jobs process fills it at boot: payments check their destinations against it.
    const sequelize = createSequelize(databaseUrl, 2);
    // The refresh reaches the tables through the repositories: bind them to this database.
    openRepositories(sequelize);
    try {
      await refreshExchanges({ includeSandbox: true, probe: null });
      await refreshBanks();
    } finally {
      await sequelize.close();
    }
    useDatabase(databaseUrl);
    const redis = await startPrivateRedis();
    const temporal = await startPrivateTemporal('suite');
    faultStack = {
      databaseUrl,
      redis,
      temporal,
      infra: { databaseUrl, redisUrl: redis.url, temporalAddress: temporal.address },
    };
  },
  afterEach(this: Mocha.Context) {
    if (this.currentTest?.state === 'failed') failures += 1;
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    console.log(scoreboard());
    try {
      const imbalance = await query<{ currency: string; imbalance: string }>(
        `SELECT currency, sum(CASE direction WHEN 'debit' THEN amount_minor ELSE -amount_minor END)::text AS imbalance
           FROM ledger_entries GROUP BY currency`,
      );
      for (const row of imbalance) expect(row.imbalance, `ledger imbalance in ${row.currency} after the fault suite`).to.equal('0');
    } finally {
      await faultStack?.temporal.stop();
      await faultStack?.redis.crash();
      await closeDatabasePool();
      if (faultStack && !process.env.TEST_KEEP_DATABASE) await dropDatabase(faultStack.databaseUrl);
      if (failures > 0 || process.env.TEST_KEEP_LOGS) console.log(`  process logs of this run: ${SCRATCH}`);
      else removeScratch();
    }
  },
};
