import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { PAYGATE_SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

/** Process, port and statistics helpers shared by the benchmark runner. */

/** The repository root (this file runs from dist/bench). */
export const ROOT = path.resolve(__dirname, '..', '..');
export { freePort, temporalCliPath } from '../tests/support/local-tools';

export const RESULTS_DIR = path.join(ROOT, 'bench', 'results');

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function envInt(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}, got "${raw}"`);
  return value;
}

/** The Temporal CLI the setup script installed, found the same way as the test suite finds it. */

// ---------------------------------------------------------------------------------------------
// Child processes

export interface Child {
  name: string;
  proc: ChildProcess;
  logFile: string;
  exited: Promise<void>;
  stop(): Promise<void>;
}

/** Where BENCH_CPU_PROF=1 has each spawned process write its CPU profile (`<name>-<n>.cpuprofile`), on exit. */
export const PROFILES_DIR = path.join(RESULTS_DIR, 'profiles');
let profiled = 0;

/** Node's flags for a spawned process: `--cpu-prof` into PROFILES_DIR when BENCH_CPU_PROF=1, else none. */
export function profileArgs(name: string): string[] {
  if (process.env.BENCH_CPU_PROF !== '1') return [];
  fs.mkdirSync(PROFILES_DIR, { recursive: true });
  profiled += 1;
  return ['--cpu-prof', `--cpu-prof-dir=${PROFILES_DIR}`, `--cpu-prof-name=${name}-${profiled}.cpuprofile`];
}

/** Run `node <script>` with `env`, its output going to bench/results/<name>.log. */
export function spawnNode(name: string, script: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Child {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const logFile = path.join(RESULTS_DIR, `${name}.log`);
  const fd = fs.openSync(logFile, 'w');
  const proc = spawn(process.execPath, [...profileArgs(name), ...nodeArgs, script], { cwd: ROOT, env, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const running = () => proc.exitCode === null && proc.signalCode === null;
  return {
    name,
    proc,
    logFile,
    exited,
    async stop() {
      if (!running()) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (running()) proc.kill('SIGKILL');
      }, 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function tailOf(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Poll `url` until it answers 200; fail early when the child dies. */
export async function waitForHttp(url: string, child: Child, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(
        `${child.name} exited (${child.proc.exitCode ?? child.proc.signalCode}) before answering ${url}:\n${tailOf(child.logFile)}`,
      );
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms:\n${tailOf(child.logFile)}`);
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------
// Statistics

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Nearest-rank percentile of raw samples. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Run `task` for each item with at most `concurrency` in flight. */
export async function pool<T>(items: T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      await task(item);
    }
  });
  await Promise.all(lanes);
}

/** CPU time (user + system, ms) a process has used so far: Linux /proc only, else undefined. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  if (pid === process.pid) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the full line, in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms) used so far by the whole machine (every CPU's busy time, from /proc/stat) and by each process
 * group named: a pid, or a command name whose processes are summed (`postgres`: every backend). Linux only,
 * else undefined. Differences of two snapshots around a round show where the round's CPU went.
 */
export function cpuSnapshot(groups: Record<string, number | string | undefined>): Record<string, number> | undefined {
  let stat: string;
  let entries: string[];
  try {
    stat = fs.readFileSync('/proc/stat', 'utf8');
    entries = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  // cpu  user nice system idle iowait irq softirq steal …, in clock ticks (USER_HZ, 100 on Linux).
  const [user, nice, system, , , irq, softirq, steal] = stat.split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const snapshot: Record<string, number> = { machine: (user + nice + system + irq + softirq + steal) * 10 };
  const byName = new Map<string, string[]>();
  for (const [label, group] of Object.entries(groups)) {
    if (typeof group === 'number') snapshot[label] = processCpuMs(group) ?? 0;
    else if (group !== undefined) byName.set(group, [...(byName.get(group) ?? []), label]);
  }
  for (const labels of byName.values()) for (const label of labels) snapshot[label] = 0;
  for (const name of entries) {
    try {
      const line = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const labels = byName.get(line.slice(line.indexOf('(') + 1, line.lastIndexOf(')')));
      if (!labels) continue;
      const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
      for (const label of labels) snapshot[label] += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // gone meanwhile
    }
  }
  return snapshot;
}

/**
 * Register Paygate's search attributes (all Keyword) on the bench's namespace, as `npm start` does on its dev
 * server, so that workflows the bench starts as the api does may carry them. Those already there are left.
 */
export async function registerSearchAttributes(connection: Connection, namespace = 'default'): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = PAYGATE_SEARCH_ATTRIBUTES.filter(({ name }) => customAttributes[name] === undefined);
  if (missing.length === 0) return;
  const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map(({ name }) => [name, keyword])),
  });
}

/** Pids of this process's children whose command line contains `pattern`: Linux /proc only, else none. */
export function childPids(pattern: string): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').includes(pattern)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * Money in for a bench user, as a completed bank deposit would leave it: a `deposits` row and its posting
 * `rail:bank_transfer → wallet:<user>:<currency>` (the database moves the balance). Payments are paid from the
 * wallet, so every payer is funded first; enough that no measured payment is refused for funds.
 */
export async function fundBenchUser(
  db: { query: (sql: string, values: unknown[]) => Promise<unknown> },
  userId: string,
  currency = 'KES',
): Promise<void> {
  await db.query(
    `WITH d AS (
       INSERT INTO deposits (user_id, channel, rail, currency, amount_minor, status, provider_reference)
       VALUES ($1::uuid, 'bank_transfer', 'sandbox', $3, $2::numeric, 'completed', 'BENCH-' || $3 || '-' || $1::text) RETURNING id
     ), t AS (
       INSERT INTO ledger_transactions (id, deposit_id, kind, currency) SELECT gen_random_uuid(), id, 'deposit', $3 FROM d RETURNING id
     )
     INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor)
     SELECT id, 'rail:bank_transfer', $3, 'debit', $2::numeric FROM t
     UNION ALL SELECT id, 'wallet:' || $1::text || ':' || $3, $3, 'credit', $2::numeric FROM t`,
    [userId, '100000000000000', currency],
  );
}
