import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { exitOf, freePort, temporalCliPath } from '../../support/local-tools';
import { until } from './wait';

/**
 * The infrastructure the fault suite breaks on purpose: a private Temporal dev server on a free port, so that
 * stopping it never disturbs anyone else's Temporal (its private Redis is `startPrivateRedis`).
 */

const SEARCH_ATTRIBUTES = ['PaygateOrderId', 'PaygateUserId', 'PaygateStatus', 'PaygateMethod', 'PaygateOverdue'];

/** A scratch folder for this run's server data and process logs, removed by `removeScratch`. */
export const SCRATCH = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-faults-'));

export function removeScratch(): void {
  fs.rmSync(SCRATCH, { recursive: true, force: true });
}

export interface PrivateTemporal {
  address: string;
  port: number;
  /** Start (or restart) the dev server on the same port and the same database file. */
  start(): Promise<void>;
  /** Kill the server process, as a crash would. */
  crash(): Promise<void>;
  /** Stop it for good. */
  stop(): Promise<void>;
}

/** Ask the server something that needs its persistence, not just its socket. */
async function temporalAnswers(address: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: '1s' });
    await connection.withDeadline(Date.now() + 2000, () => connection!.workflowService.describeNamespace({ namespace: 'default' }));
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/**
 * `temporal server start-dev` from the project's pinned CLI, with a SQLite file in the scratch folder, so a
 * restart on the same port finds every workflow where it was. The search attributes the workflows set are
 * registered at every start (a no-op when the file already has them).
 */
export async function startPrivateTemporal(name: string): Promise<PrivateTemporal> {
  const cli = temporalCliPath();
  if (!fs.existsSync(cli)) throw new Error(`the Temporal CLI is missing at ${cli}: run \`npm run setup\``);
  const [port, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const dbFile = path.join(SCRATCH, `${name}-temporal.db`);
  const address = `127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const log = fs.createWriteStream(path.join(SCRATCH, `${name}-temporal.log`), { flags: 'a' });
  const server: PrivateTemporal = {
    address,
    port,
    async start() {
      const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless'];
      args.push('--http-port', String(httpPort), '--metrics-port', String(metricsPort));
      args.push('--db-filename', dbFile, '--log-level', 'warn');
      for (const attribute of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${attribute}=Keyword`);
      const started = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      started.stdout?.pipe(log, { end: false });
      started.stderr?.pipe(log, { end: false });
      child = started;
      await until(
        `the Temporal dev server on ${address}`,
        async () => {
          if (started.exitCode !== null)
            throw new Error(`the Temporal dev server exited with ${started.exitCode}; see ${log.path as string}`);
          return (await temporalAnswers(address)) ? true : undefined;
        },
        60_000,
        250,
      );
    },
    async crash() {
      if (!child) return;
      const dying = child;
      child = undefined;
      dying.kill('SIGKILL');
      await exitOf(dying);
    },
    async stop() {
      if (!child) return;
      const stopping = child;
      child = undefined;
      stopping.kill('SIGTERM');
      const timer = setTimeout(() => stopping.kill('SIGKILL'), 10_000);
      await exitOf(stopping);
      clearTimeout(timer);
      log.end();
    },
  };
  await server.start();
  return server;
}
