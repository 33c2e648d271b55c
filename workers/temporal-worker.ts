import fs from 'node:fs';
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import type { Sequelize } from 'sequelize';
import { configOrExit, type Config } from '../platform/config';
import { closeDatabase, database } from '../platform/database';
import { componentLogger } from '../platform/logger';
import { onShutdown } from '../platform/shutdown';
import { temporalConnectionOptions } from '../platform/temporal';
import { openRepositories } from '../repositories/transaction';
import { buildConnectors } from '../services/connectors';
import { createDepositActivities } from '../workflows/activities/deposits';
import { createActivities } from '../workflows/activities';
import { createPayoutBatchActivities } from '../workflows/activities/payout-batches';
import { createComplianceActivities } from '../workflows/activities/compliance';
import { createAdmissionActivities } from '../workflows/activities/admission';
import { createP2pActivities } from '../workflows/activities/p2p';
import { createAppealActivities } from '../workflows/activities/appeals';
import { WORKFLOW_BUNDLE_PATH } from './bundle-workflows';

export interface PaygateWorkerOptions {
  config: Config;
  sequelize: Sequelize;
  connection: NativeConnection;
  taskQueue?: string;
  /** Load the prebuilt bundle from the build instead of bundling the workflow code at start-up. */
  usePrebuiltBundle?: boolean;
  /** Other workflows and activities beside Paygate's (the benchmarks' baseline). */
  extra?: WorkerExtras;
}

export interface WorkerExtras {
  /** A workflows module re-exporting Paygate's (`workflows/index.ts`) and more; bundled at start-up. */
  workflowsPath?: string;
  activities?: Record<string, (...args: never[]) => Promise<unknown>>;
}

/** The Temporal worker that runs the payment workflows and their activities. */
export async function createPaygateWorker({
  config,
  sequelize,
  connection,
  taskQueue,
  usePrebuiltBundle = false,
  extra = {},
}: PaygateWorkerOptions): Promise<Worker> {
  openRepositories(sequelize);
  const workflows =
    usePrebuiltBundle && !extra.workflowsPath && fs.existsSync(WORKFLOW_BUNDLE_PATH)
      ? { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } }
      : { workflowsPath: extra.workflowsPath ?? require.resolve('../workflows') };
  const connectors = buildConnectors(config);
  const payments = createActivities({ connectors, config });
  const compliance = createComplianceActivities({ config });
  return Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: taskQueue ?? config.temporal.taskQueue,
    ...workflows,
    activities: {
      ...payments,
      ...compliance,
      ...createAdmissionActivities(payments, compliance),
      ...createP2pActivities(),
      ...createAppealActivities(),
      ...createDepositActivities({ connectors, config }),
      ...createPayoutBatchActivities(),
      ...extra.activities,
    },
    // Parked workflows (awaiting callbacks) are evicted and replayed on demand rather than held in memory.
    maxCachedWorkflows: 500,
  });
}

/** The worker process: Paygate's worker (with `extra`, for the benchmarks) until it is told to stop. */
export async function main(extra?: WorkerExtras): Promise<void> {
  const config = configOrExit();
  const log = componentLogger('worker');
  Runtime.install({
    logger: {
      log: (level, message, meta) => log[level.toLowerCase() as Lowercase<typeof level>](meta ?? {}, message),
      trace: (message, meta) => log.trace(meta ?? {}, message),
      debug: (message, meta) => log.debug(meta ?? {}, message),
      info: (message, meta) => log.info(meta ?? {}, message),
      warn: (message, meta) => log.warn(meta ?? {}, message),
      error: (message, meta) => log.error(meta ?? {}, message),
    },
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } },
    shutdownSignals: [],
  });
  const connection = await NativeConnection.connect(temporalConnectionOptions(config.temporal));
  const sequelize = database();
  const worker = await createPaygateWorker({ config, sequelize, connection, usePrebuiltBundle: true, extra });
  const running = worker.run();
  onShutdown(log, [
    {
      name: 'worker',
      run: async () => {
        worker.shutdown();
        await running;
      },
    },
    { name: 'temporal', run: () => connection.close() },
    { name: 'database', run: closeDatabase },
  ]);
  log.info({ taskQueue: config.temporal.taskQueue, address: config.temporal.address }, 'temporal worker running');
  await running;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    componentLogger('worker').fatal({ err }, 'worker failed');
    process.exit(1);
  });
}
