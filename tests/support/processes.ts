import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { stack } from './stack';

/** Child processes for the tests that crash, restart and reboot things: the jobs process. */

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
