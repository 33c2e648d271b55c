import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { canConnect, exitOf, freePort } from './local-tools';
import { until } from './wait';

/**
 * A private `redis-server` on a free port, for the tests that stop and restart Redis under a running process:
 * restarting it never disturbs the shared Redis.
 */

export interface PrivateRedis {
  port: number;
  url: string;
  /** Start it (again) on the same port, empty: it keeps nothing on disk. */
  start(): Promise<void>;
  /** Kill it: whatever it held is gone. */
  crash(): Promise<void>;
  /** The same as `crash`: with nothing on disk, a clean shutdown would keep nothing more. */
  stop(): Promise<void>;
}

/** Fail early, and say why, when the machine has no redis-server. */
export function assertRedisServerInstalled(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'these tests start their own Redis and need `redis-server` on the PATH (Debian/Ubuntu: `apt-get install redis-server`); ' +
        'they never restart the shared one',
    );
  }
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  assertRedisServerInstalled();
  const port = await freePort();
  let child: ChildProcess | undefined;
  const kill = async () => {
    if (!child) return;
    const dying = child;
    child = undefined;
    dying.kill('SIGKILL');
    await exitOf(dying);
  };
  const redis: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      await until(`redis-server on port ${port}`, async () => ((await canConnect(port)) ? true : undefined), 10_000);
    },
    crash: kill,
    stop: kill,
  };
  await redis.start();
  return redis;
}
