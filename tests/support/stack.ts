import type { Server } from 'node:http';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { reloadConfig } from '../../platform/config';
import { closeDatabase, database } from '../../platform/database';
import { closeRedis } from '../../platform/redis';
import { closeTemporal, temporalClient } from '../../platform/temporal';
import { migrateUp } from '../../models/migrate';
import { createApp } from '../../api/app';
import { createPaygateWorker } from '../../workers/temporal-worker';
import { PAYGATE_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { ensureCatalogue } from './catalogue';
import { dropDatabase, freePort, temporalCliPath } from './local-tools';
import { startRailFakes, type RailFakes } from '../fakes/rails';

export { ROOT, temporalCliPath } from './local-tools';

/**
 * The real stack for the suite: a fresh Postgres database, Redis, a Temporal dev server (the pinned CLI,
 * or the server at TEMPORAL_ADDRESS when set), the api on an ephemeral port and a Temporal worker.
 */

export interface Stack {
  baseUrl: string;
  temporalAddress: string;
}

let env: TestWorkflowEnvironment | undefined;
let server: Server | undefined;
let worker: Worker | undefined;
let workerRun: Promise<void> | undefined;
let workerConnection: NativeConnection | undefined;
let railFakes: RailFakes | undefined;
export let stack: Stack;

export async function startStack(): Promise<Stack> {
  Runtime.install({
    logger: new DefaultLogger(
      process.env.TEST_TEMPORAL_LOG_LEVEL === undefined ? 'ERROR' : (process.env.TEST_TEMPORAL_LOG_LEVEL as 'WARN'),
    ),
  });
  let temporalAddress = process.env.TEMPORAL_ADDRESS;
  if (!temporalAddress) {
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: temporalCliPath() },
        ip: '127.0.0.1',
        ui: false,
        searchAttributes: [...PAYGATE_SEARCH_ATTRIBUTES],
      },
    });
    temporalAddress = env.address;
    process.env.TEMPORAL_ADDRESS = temporalAddress;
  }
  const port = await freePort();
  process.env.PORT = String(port);
  process.env.PUBLIC_BASE_URL = `http://127.0.0.1:${port}`;
  // TEST_RAILS=real: every method on its real connector, pointed at the local provider fakes.
  if (process.env.TEST_RAILS === 'real') {
    railFakes = await startRailFakes();
    Object.assign(process.env, railFakes.env);
  }

  const cfg = reloadConfig();
  await dropDatabase(cfg.databaseUrl);
  await migrateUp(cfg.databaseUrl);
  // The platform catalogue, as the jobs process fills it at boot: payments validate destinations against it.
  await ensureCatalogue();

  const app = createApp();
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(port, '127.0.0.1', () => resolve(s));
  });

  workerConnection = await NativeConnection.connect({ address: temporalAddress });
  worker = await createPaygateWorker({ config: cfg, sequelize: database(), connection: workerConnection });
  workerRun = worker.run();
  stack = { baseUrl: `http://127.0.0.1:${port}`, temporalAddress };
  return stack;
}

/** The provider fakes the rails point at under TEST_RAILS=real; undefined on the sandbox rails. */
export const currentRailFakes = (): RailFakes | undefined => railFakes;

export async function stopStack(): Promise<void> {
  worker?.shutdown();
  await workerRun;
  await workerConnection?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server?.closeAllConnections();
  await closeTemporal();
  await closeRedis();
  await closeDatabase();
  await env?.teardown();
  await railFakes?.close();
  if (!process.env.TEST_KEEP_DATABASE) await dropDatabase(reloadConfig().databaseUrl);
}

export { temporalClient };
