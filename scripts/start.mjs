#!/usr/bin/env node
// `npm start`: the whole Paygate stack in the foreground.
//
//   setup -> build -> migrate -> Temporal (reuse a running server, or start a local dev server)
//   -> api + Temporal worker + jobs worker, with prefixed output -> a summary of URLs once healthy.
//
// Ctrl-C / SIGTERM stops the app processes first (SIGTERM, then SIGKILL after 15 s), then the
// Temporal dev server if this script started it. If any process exits on its own, everything
// is stopped and the script exits non-zero naming it.
//
// An optional `.env` file in the repo root is loaded first (KEY=VALUE lines; variables already
// set in the environment win). Plain Node ESM with no npm dependencies.

import { spawn } from 'node:child_process';
import console from 'node:console';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import process from 'node:process';
import readline from 'node:readline';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { URL } from 'node:url';

import { ROOT, SetupError, exitWithError, fail, info, loadDotEnv, paint, rel, runSetup, temporalCliPath, warn } from './lib.mjs';

const TAG = 'start';
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const APP_STOP_TIMEOUT_MS = 15_000;
const TEMPORAL_STOP_TIMEOUT_MS = 15_000;
const TEMPORAL_START_TIMEOUT_MS = 60_000;
const SEARCH_ATTRIBUTES = ['PaygateOrderId', 'PaygateUserId', 'PaygateStatus', 'PaygateMethod', 'PaygateOverdue'];

const ENTRY_POINTS = {
  api: 'dist/api/server.js',
  worker: 'dist/workers/temporal-worker.js',
  jobs: 'dist/workers/jobs.js',
  migrate: 'dist/models/migrate.js',
};

const TAG_COLORS = { api: 'cyan', worker: 'magenta', jobs: 'yellow', temporal: 'blue', migrate: 'gray' };
const TAG_WIDTH = Math.max(...Object.keys(TAG_COLORS).map((t) => t.length)) + 2;

// ---------------------------------------------------------------------------------------------
// Helpers

/** Strip the password from a connection URL before printing it. */
function redactUrl(raw) {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return raw;
  }
}

/** Split "host:port" / "[v6]:port" into parts. */
function parseHostPort(address, defaultPort) {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(address) ?? /^([^:]+)(?::(\d+))?$/.exec(address);
  if (!m) return { host: address, port: defaultPort };
  return { host: m[1], port: m[2] ? Number(m[2]) : defaultPort };
}

const isLoopbackOrAny = (host) => host === 'localhost' || host.startsWith('127.') || host === '::1' || host === '0.0.0.0' || host === '::';

/** A host name we can connect to (wildcard bind addresses mean "this machine"). */
function connectHost(host) {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

const hostForUrl = (host) => (host.includes(':') ? `[${host}]` : host);

/** Resolve true when host:port accepts a TCP connection within timeoutMs. */
function canConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: connectHost(host), port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** GET a URL; resolves with the status code, or 0 when nothing answers. */
function httpStatus(url, timeoutMs = 2000) {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(0));
  });
}

/** Forward each output line of a child, prefixed with a coloured tag. JSON lines stay intact. */
function pipeLines(stream, name, target, isMuted) {
  const label = paint(TAG_COLORS[name] ?? 'gray', `[${name}]`.padEnd(TAG_WIDTH));
  readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
    if (!isMuted()) target.write(`${label} ${line}\n`);
  });
}

// ---------------------------------------------------------------------------------------------
// Process supervision

/** @type {Map<string, {name: string, child: import('node:child_process').ChildProcess, exited: Promise<void>, done: boolean, muted: boolean}>} */
const running = new Map();
let shuttingDown = false;

function startProcess(name, command, args, { env = process.env } = {}) {
  const child = spawn(command, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal Ctrl-C reaches only this script, which then stops the
    // children in order (app processes first, Temporal last).
    detached: process.platform !== 'win32',
    windowsHide: true,
  });
  const proc = { name, child, done: false, muted: false };
  pipeLines(child.stdout, name, process.stdout, () => proc.muted);
  pipeLines(child.stderr, name, process.stderr, () => proc.muted);
  proc.exited = new Promise((resolve) => {
    child.once('error', (err) => {
      fail(TAG, `could not start ${name}: ${err.message}`);
      proc.done = true;
      resolve();
      if (!shuttingDown) void shutdown(1);
    });
    child.once('exit', (code, signal) => {
      proc.done = true;
      resolve();
      if (!shuttingDown) {
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        fail(TAG, `${name} ${how} unexpectedly; stopping everything`);
        void shutdown(1);
      }
    });
  });
  running.set(name, proc);
  return proc;
}

function signalProcess(proc, signal) {
  if (proc.done || proc.child.pid === undefined) return;
  try {
    if (process.platform === 'win32') proc.child.kill(signal);
    else process.kill(-proc.child.pid, signal); // the whole group, in case it spawned helpers
  } catch {
    // already gone
  }
}

async function stopProcesses(procs, timeoutMs) {
  const alive = procs.filter((p) => !p.done);
  if (alive.length === 0) return;
  for (const p of alive) signalProcess(p, 'SIGTERM');
  let timer;
  const timedOut = new Promise((resolve) => {
    timer = setTimeout(() => resolve(true), timeoutMs);
  });
  const finished = await Promise.race([Promise.all(alive.map((p) => p.exited)).then(() => false), timedOut]);
  clearTimeout(timer);
  if (finished) {
    for (const p of alive.filter((x) => !x.done)) {
      warn(TAG, `${p.name} did not stop within ${timeoutMs / 1000} s; killing it`);
      signalProcess(p, 'SIGKILL');
    }
    await Promise.all(alive.map((p) => p.exited));
  }
}

async function shutdown(code) {
  if (shuttingDown) return;
  shuttingDown = true;
  const apps = [...running.values()].filter((p) => p.name !== 'temporal');
  if (apps.some((p) => !p.done)) {
    info(
      TAG,
      `stopping ${apps
        .filter((p) => !p.done)
        .map((p) => p.name)
        .join(', ')}…`,
    );
    await stopProcesses(apps, APP_STOP_TIMEOUT_MS);
  }
  const temporal = running.get('temporal');
  if (temporal && !temporal.done) {
    info(TAG, 'stopping the Temporal dev server…');
    temporal.muted = true; // its shutdown chatter is noise
    await stopProcesses([temporal], TEMPORAL_STOP_TIMEOUT_MS);
  }
  info(TAG, code === 0 ? 'stopped' : 'stopped after a failure');
  process.exit(code);
}

function onSignal(signal) {
  if (shuttingDown) {
    warn(TAG, `${signal} again: killing everything now`);
    for (const p of running.values()) signalProcess(p, 'SIGKILL');
    process.exit(130);
  }
  console.log('');
  info(TAG, `${signal} received`);
  void shutdown(0);
}

// A closed pipe on our own output (e.g. `npm start | head`) must not crash the supervisor.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
process.on('SIGHUP', onSignal);
// Last resort (e.g. an uncaught error): never leave detached children behind.
process.on('exit', () => {
  for (const p of running.values()) signalProcess(p, 'SIGKILL');
});

/** Run a command to completion with inherited stdio (it shares our process group for Ctrl-C). */
function runForeground(command, args, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env,
      stdio: 'inherit',
      shell: process.platform === 'win32' && command.endsWith('.cmd'),
    });
    child.once('error', (err) => resolve({ code: 1, error: err }));
    child.once('exit', (code, signal) => resolve({ code: code ?? 1, signal }));
  });
}

/** Abort with a message unless the user already asked to stop. */
async function abort(message) {
  if (shuttingDown) return new Promise(() => {}); // shutdown() will exit
  fail(TAG, message);
  await shutdown(1);
}

// ---------------------------------------------------------------------------------------------
// Temporal

async function ensureTemporal(cli) {
  const address = process.env.TEMPORAL_ADDRESS || '127.0.0.1:7233';
  const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
  const { host, port } = parseHostPort(address, 7233);

  if (await canConnect(host, port, 1000)) {
    info(TAG, `using the Temporal server already listening at ${address}`);
    await registerSearchAttributes(cli, address, namespace);
    return { started: false };
  }
  if (!isLoopbackOrAny(host)) {
    await abort(`Temporal at TEMPORAL_ADDRESS=${address} is not reachable (and it is not local, so no dev server is started)`);
  }

  const uiUrl = new URL(process.env.TEMPORAL_UI_URL || 'http://127.0.0.1:8233');
  const uiPort = Number(uiUrl.port) || (uiUrl.protocol === 'https:' ? 443 : 80);
  const ip = host === 'localhost' ? '127.0.0.1' : host;
  const dbFile = path.join(ROOT, '.data', 'temporal', 'temporal.db');
  fs.mkdirSync(path.dirname(dbFile), { recursive: true });

  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--db-filename',
    dbFile,
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    ...SEARCH_ATTRIBUTES.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
  ];
  info(TAG, `starting a Temporal dev server on ${address} (UI port ${uiPort}, data in ${rel(dbFile)})`);
  const proc = startProcess('temporal', cli, args);

  const deadline = Date.now() + TEMPORAL_START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.done || shuttingDown) return new Promise(() => {}); // the exit handler reports it
    if (await canConnect(host, port, 1000)) {
      info(TAG, `Temporal dev server is up at ${address}`);
      return { started: true };
    }
    await sleep(250);
  }
  await abort(`the Temporal dev server did not accept connections on ${address} within ${TEMPORAL_START_TIMEOUT_MS / 1000} s`);
  return { started: false };
}

/**
 * Best effort on a server we did not start: `create` is a no-op for attributes that already exist.
 * One attribute per call: with several --name flags the CLI creates only the first.
 */
async function registerSearchAttributes(cli, address, namespace) {
  for (const name of SEARCH_ATTRIBUTES) {
    const args = ['operator', 'search-attribute', 'create', '--address', address, '--namespace', namespace];
    args.push('--name', name, '--type', 'Keyword', '--command-timeout', '10s');
    const result = await new Promise((resolve) => {
      let output = '';
      const child = spawn(cli, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.once('error', (err) => resolve({ code: 1, output: err.message }));
      child.once('exit', (code) => resolve({ code: code ?? 1, output }));
    });
    if (result.code !== 0) {
      const reason = result.output.trim().split('\n')[0] || 'unknown error';
      warn(TAG, `could not register search attribute ${name} on ${address}: ${reason}`);
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Main

function printSummary(baseUrl, temporalUi) {
  const rows = [
    ['API', `${baseUrl}/api/v1`],
    ['Home', `${baseUrl}/`],
    ['Docs', `${baseUrl}/docs`],
    ['OpenAPI', `${baseUrl}/openapi.json`],
    ['Temporal Web UI', temporalUi],
    ['Queue dashboard', `${baseUrl}/admin/queues`],
    ['Metrics', `${baseUrl}/metrics (bearer METRICS_TOKEN)`],
  ];
  const title = 'Paygate is running';
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, url]) => `${label.padEnd(labelWidth)}  ${url}`);
  const width = Math.max(title.length, ...lines.map((l) => l.length));
  const border = '─'.repeat(width + 2);
  const out = [
    '',
    paint('green', `┌${border}┐`),
    `${paint('green', '│')} ${paint('bold', title.padEnd(width))} ${paint('green', '│')}`,
    paint('green', `├${border}┤`),
    ...lines.map((l) => `${paint('green', '│')} ${l.padEnd(width)} ${paint('green', '│')}`),
    paint('green', `└${border}┘`),
    `  Press Ctrl-C to stop.`,
    '',
  ];
  console.log(out.join('\n'));
}

async function waitForHealthy(healthUrl) {
  const started = Date.now();
  let warned = false;
  while (!shuttingDown) {
    if ((await httpStatus(healthUrl)) === 200) return true;
    if (!warned && Date.now() - started > 60_000) {
      warn(TAG, `${healthUrl} has not answered 200 after 60 s; still waiting`);
      warned = true;
    }
    await sleep(500);
  }
  return false;
}

async function main() {
  const loaded = loadDotEnv();
  if (loaded.length > 0) info(TAG, `loaded ${loaded.length} setting(s) from .env`);

  runSetup({ tag: 'setup' });
  const cli = temporalCliPath();

  info(TAG, 'building (npm run build)');
  const build = await runForeground(NPM, ['run', 'build']);
  if (build.code !== 0) return abort(`npm run build failed (exit ${build.code}${build.signal ? `, ${build.signal}` : ''})`);

  const missing = Object.values(ENTRY_POINTS).filter((file) => !fs.existsSync(path.join(ROOT, file)));
  if (missing.length > 0) {
    return abort(`the build did not produce ${missing.join(', ')}; is the application code complete?`);
  }

  const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/paygate';
  info(TAG, `migrating ${redactUrl(databaseUrl)}`);
  const migrate = await runForeground(process.execPath, [ENTRY_POINTS.migrate, 'up']);
  if (migrate.code !== 0) {
    return abort(
      `migrations failed (exit ${migrate.code}). Is PostgreSQL running and reachable at DATABASE_URL=${redactUrl(databaseUrl)}?\n` +
        '  Start one (e.g. `docker compose up -d postgres`) or set DATABASE_URL in the environment or in .env.',
    );
  }

  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  try {
    const r = new URL(redisUrl);
    if (!(await canConnect(r.hostname.replace(/^\[|\]$/g, ''), Number(r.port) || 6379, 1000))) {
      warn(TAG, `nothing answers at REDIS_URL=${redactUrl(redisUrl)}; the jobs worker and API queues need Redis`);
    }
  } catch {
    // malformed URL: the app's config validation reports it
  }

  await ensureTemporal(cli);
  if (shuttingDown) return undefined;

  for (const name of ['api', 'worker', 'jobs']) {
    startProcess(name, process.execPath, [ENTRY_POINTS[name]]);
  }

  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT || 3000);
  const localBase = `http://${hostForUrl(connectHost(host))}:${port}`;
  const baseUrl = (process.env.PUBLIC_BASE_URL || localBase).replace(/\/$/, '');
  if (await waitForHealthy(`${localBase}/healthz`)) {
    printSummary(baseUrl, process.env.TEMPORAL_UI_URL || 'http://127.0.0.1:8233');
  }
  return undefined;
}

main().catch((err) => {
  if (err instanceof SetupError) {
    shuttingDown = true;
    exitWithError('setup', err);
  }
  fail(TAG, err?.stack ?? String(err));
  void shutdown(1);
});
