import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { stack } from './stack';
import { until } from './wait';

/** Child processes for the tests that crash, restart and reboot things: the jobs process and more api processes. */

const JOBS_ENTRY = path.resolve(__dirname, '..', '..', 'workers', 'jobs.js');

// What these tests use beside the processes, from where it lives.
export { freePort } from './local-tools';
export { until } from './wait';

export interface JobsProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** SIGTERM, and the exit code once it has stopped. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** `node <entry>` against the test database, with `env` on top of the test settings. */
function startNodeProcess(entry: string, env: Record<string, string>): JobsProcess {
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    exited,
    async stop() {
      if (running()) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** `node dist/workers/jobs.js` against the test database, with `env` on top of the test settings. */
export const startJobsProcess = (env: Record<string, string>): JobsProcess => startNodeProcess(JOBS_ENTRY, env);

const WORKER_ENTRY = path.resolve(__dirname, '..', '..', 'workers', 'temporal-worker.js');

/** `node dist/workers/temporal-worker.js`, with `env` on top of the test settings (its own task queue, say). */
export const startWorkerProcess = (env: Record<string, string>): JobsProcess => startNodeProcess(WORKER_ENTRY, env);

const API_ENTRY = path.resolve(__dirname, '..', '..', 'api', 'server.js');

export interface ApiProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** What it has written to the captured streams. */
  output: () => string;
}

/**
 * `node dist/api/server.js` on 127.0.0.1:`port`, beside the suite's own api (same database, Redis and Temporal),
 * with `env` on top of the test settings. The streams in `capture` are kept for `output()`; otherwise its
 * stdout is dropped and its stderr shown.
 */
export function startApiProcess(env: Record<string, string>, port: number, capture: ('stdout' | 'stderr')[] = []): ApiProcess {
  const chunks: Buffer[] = [];
  const child = spawn(process.execPath, [API_ENTRY], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', TEMPORAL_ADDRESS: stack.temporalAddress, ...env },
    stdio: ['ignore', capture.includes('stdout') ? 'pipe' : 'ignore', capture.includes('stderr') ? 'pipe' : 'inherit'],
  });
  child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => chunks.push(chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url: `http://127.0.0.1:${port}`, exited, output: () => Buffer.concat(chunks).toString('utf8') };
}

/** Once the process answers /healthz with 200. */
export async function untilHealthy(api: { url: string }, what: string): Promise<void> {
  await until(what, async () => {
    try {
      return (await request(api.url).get('/healthz')).status === 200 ? true : undefined;
    } catch {
      return undefined;
    }
  });
}

/** SIGTERM, if it still runs, and its exit. */
export async function stopApiProcess(api: ApiProcess | undefined): Promise<void> {
  if (api && api.child.exitCode === null && api.child.signalCode === null) {
    api.child.kill('SIGTERM');
    await api.exited;
  }
}
