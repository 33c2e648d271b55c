import { spawn, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { stack } from './stack';

/** Child processes for the tests that crash, restart and reboot things: the jobs process and a private Redis. */

const JOBS_ENTRY = path.resolve(__dirname, '..', '..', 'workers', 'jobs.js');

export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export interface JobsProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** SIGTERM, and the exit code once it has stopped. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** `node dist/workers/jobs.js` against the test database, with `env` on top of the test settings. */
export function startJobsProcess(env: Record<string, string>): JobsProcess {
  const child = spawn(process.execPath, [JOBS_ENTRY], {
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

export interface RedisServer {
  port: number;
  url: string;
  /** Stop it (its data is gone: no persistence). */
  stop(): Promise<void>;
  /** Start it again on the same port, empty. */
  start(): Promise<void>;
}

async function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A private redis-server on a free port, so restarting it never disturbs the shared Redis. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      await until(`redis-server on port ${port}`, async () => ((await canConnect(port)) ? true : undefined), 10_000);
    },
    async stop() {
      const stopping = child;
      if (!stopping || stopping.exitCode !== null) return;
      const exited = new Promise((r) => stopping.once('exit', r));
      stopping.kill('SIGKILL');
      await exited;
    },
  };
  await server.start();
  return server;
}
