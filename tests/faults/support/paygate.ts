import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { ROOT, freePort } from '../../support/local-tools';
import { SCRATCH } from './servers';
import { until } from './wait';

/**
 * Paygate's own processes, run as a deployment runs them: `node dist/api/server.js`,
 * `node dist/workers/temporal-worker.js` and `node dist/workers/jobs.js`, each a child process with its
 * settings in the environment, so that a SIGKILL is a real crash and nothing is shared in memory.
 */

export type Role = 'api' | 'worker' | 'jobs';

const ENTRY_POINTS: Record<Role, string> = {
  api: path.join(ROOT, 'dist', 'api', 'server.js'),
  worker: path.join(ROOT, 'dist', 'workers', 'temporal-worker.js'),
  jobs: path.join(ROOT, 'dist', 'workers', 'jobs.js'),
};

/** The log line each process writes once it takes work (the api is asked over HTTP instead). */
const READY_MESSAGE: Record<Exclude<Role, 'api'>, string> = {
  worker: 'temporal worker running',
  jobs: 'jobs running',
};

const BOOT_TIMEOUT_MS = 60_000;

export interface LogRecord {
  msg?: string;
  level?: number;
  [field: string]: unknown;
}

export interface Infrastructure {
  databaseUrl: string;
  redisUrl: string;
  temporalAddress: string;
}

export class PaygateProcess {
  /** Every JSON log line the process wrote, across its restarts. */
  readonly records: LogRecord[] = [];
  /** Exits nobody asked for (neither `kill` nor `stop`). */
  unexpectedExits = 0;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private expectingExit = false;
  private readonly logFile: string;

  constructor(
    readonly name: string,
    readonly role: Role,
    readonly env: Record<string, string>,
    readonly port?: number,
  ) {
    this.logFile = path.join(SCRATCH, `${name}.log`);
  }

  get baseUrl(): string {
    if (this.port === undefined) throw new Error(`${this.name} serves no HTTP`);
    return `http://127.0.0.1:${this.port}`;
  }

  running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Start the process and wait until it takes work. */
  async start(): Promise<void> {
    if (this.running()) throw new Error(`${this.name} is already running`);
    const from = this.records.length;
    const out = fs.createWriteStream(this.logFile, { flags: 'a' });
    const child = spawn(process.execPath, [ENTRY_POINTS[this.role]], { cwd: ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.expectingExit = false;
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      out.write(`${line}\n`);
      if (!line.startsWith('{')) return;
      try {
        this.records.push(JSON.parse(line) as LogRecord);
      } catch {
        // not a log record
      }
    });
    child.stderr.pipe(out, { end: false });
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        if (!this.expectingExit) this.unexpectedExits += 1;
        resolve();
      }),
    );
    await until(
      `${this.name} to boot (its output is in ${this.logFile})`,
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`${this.name} exited during boot (${child.exitCode ?? child.signalCode}); its output is in ${this.logFile}`);
        }
        return (await this.ready(from)) ? true : undefined;
      },
      BOOT_TIMEOUT_MS,
      100,
    );
  }

  private async ready(from: number): Promise<boolean> {
    if (this.role === 'api') {
      try {
        return (await fetch(`${this.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) })).status === 200;
      } catch {
        return false;
      }
    }
    const message = READY_MESSAGE[this.role];
    return this.records.slice(from).some((r) => r.msg === message);
  }

  /** SIGKILL: the process dies where it stands, as in a crash or an OOM kill. */
  async kill(): Promise<void> {
    if (!this.running()) return;
    this.expectingExit = true;
    this.child!.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, and wait for the graceful shutdown (SIGKILL after 25 s). */
  async stop(): Promise<number | null> {
    if (!this.running()) return this.child?.exitCode ?? null;
    const child = this.child!;
    this.expectingExit = true;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    await this.exited;
    clearTimeout(timer);
    return child.exitCode;
  }

  /** Log records with this message, since the process first started. */
  logged(message: string): LogRecord[] {
    return this.records.filter((r) => r.msg === message);
  }
}

/** Settings every fault-suite process gets, on top of the deployment's own. */
const SUITE_DEFAULTS: Record<string, string> = {
  NODE_ENV: 'test',
  HOST: '127.0.0.1',
  DATABASE_POOL_MAX: '5',
  RATE_LIMIT_LOGIN_PER_IP: '100000',
  RATE_LIMIT_REGISTER_PER_IP: '100000',
  RATE_LIMIT_API_PER_MINUTE: '1000000',
  RATE_LIMIT_API_PER_ACCOUNT_PER_MINUTE: '1000000',
  RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP: '100',
  RATE_LIMIT_LOGIN_PER_ACCOUNT: '100',
  // Customers are funded with KES 10,000,000 before they pay out.
  LIMIT_UNVERIFIED_BALANCE_KES: '100000000',
  // Those fundings would be held by transaction monitoring as a new account's high value (docs/monitoring.md);
  // the faults here are the infrastructure's, and monitoring has its own tests.
  MONITORING_ENABLED: 'false',
  PAYMENT_POLL_AFTER_MS: '1000',
  SANDBOX_CALLBACK_DELAY_MS: '300',
  RECONCILE_GRACE_MS: '0',
  RECONCILE_INTERVAL_MS: '2000',
  EXCHANGE_PROBE_ENABLED: 'false',
  WEBHOOK_DISPATCH_EVERY_MS: '5000',
};

/**
 * One Paygate deployment on one stack: its own task queue and queue prefix, so that deployments of
 * different tests never take each other's work, and any number of each process.
 */
export class Deployment {
  readonly processes: PaygateProcess[] = [];
  readonly taskQueue: string;
  readonly queuePrefix: string;

  constructor(
    readonly name: string,
    readonly infra: Infrastructure,
    readonly settings: Record<string, string> = {},
  ) {
    const unique = `${name}-${Date.now().toString(36)}`;
    this.taskQueue = `faults-${unique}`;
    this.queuePrefix = `paygate-faults-${unique}`;
  }

  private env(role: Role, extra: Record<string, string>): Record<string, string> {
    const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
    return {
      ...inherited,
      ...SUITE_DEFAULTS,
      LOG_LEVEL: role === 'api' ? 'warn' : 'info',
      DATABASE_URL: this.infra.databaseUrl,
      REDIS_URL: this.infra.redisUrl,
      TEMPORAL_ADDRESS: this.infra.temporalAddress,
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      QUEUE_PREFIX: this.queuePrefix,
      ...this.settings,
      ...extra,
    };
  }

  private add(role: Role, extra: Record<string, string>, port?: number): PaygateProcess {
    const count = this.processes.filter((p) => p.role === role).length + 1;
    const proc = new PaygateProcess(`${this.name}-${role}-${count}`, role, this.env(role, extra), port);
    this.processes.push(proc);
    return proc;
  }

  async startApi(extra: Record<string, string> = {}): Promise<PaygateProcess> {
    const port = await freePort();
    const proc = this.add('api', { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...extra }, port);
    await proc.start();
    return proc;
  }

  /** A Temporal worker; the sandbox rails it drives call back to `api`. */
  async startWorker(api: PaygateProcess, extra: Record<string, string> = {}): Promise<PaygateProcess> {
    const proc = this.add('worker', { PUBLIC_BASE_URL: api.baseUrl, ...extra });
    await proc.start();
    return proc;
  }

  async startJobs(extra: Record<string, string> = {}): Promise<PaygateProcess> {
    const proc = this.add('jobs', extra);
    await proc.start();
    return proc;
  }

  /** Processes that died without being asked to, across the deployment. */
  unexpectedExits(): number {
    return this.processes.reduce((sum, p) => sum + p.unexpectedExits, 0);
  }

  /** Stop everything gracefully (SIGKILL what hangs). */
  async stopAll(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop()));
  }
}
