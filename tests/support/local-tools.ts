import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';

/** Helpers shared by the test stack and the benchmarks (compiled to dist/tests/support/). */

export const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The Temporal CLI the setup script installed (or TEMPORAL_CLI). */
export function temporalCliPath(): string {
  if (process.env.TEMPORAL_CLI) return process.env.TEMPORAL_CLI;
  const recorded = path.join(ROOT, '.tools', 'temporal-cli-path');
  if (fs.existsSync(recorded)) return fs.readFileSync(recorded, 'utf8').trim();
  return path.join(ROOT, '.tools', 'temporal', 'bin', 'temporal');
}

/** A TCP port that was free a moment ago on the loopback interface. */
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

/** Whether something accepts a TCP connection on `host:port` within a second. */
export function canConnect(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Resolves once `child` has exited (at once if it already has). */
export function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Drop a per-run database, closing whatever is still connected to it. */
export async function dropDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  target.pathname = '/postgres';
  const admin = new Client({ connectionString: target.toString() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
