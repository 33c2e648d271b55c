import '../support/env';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { api, blocklist, completedPayment, newUser, postAd, postAppeal, sellAd, uniqueKenyanPhone, type TestUser } from '../support/api';
import { startWebhookReceiver } from '../fakes/webhook-receiver';
import { ROOT } from '../support/local-tools';
import { startStack, stopStack } from '../support/stack';

/**
 * API fuzzing: Schemathesis (pinned, installed by scripts/setup.mjs) against /openapi.json of a real stack,
 * once per role (anonymous, user, compliance, admin), with the examples, coverage, fuzzing and stateful
 * phases and every check. Exits non-zero when any role reports a failure or an error.
 *
 * Knobs: FUZZ_MAX_EXAMPLES (per operation and phase, default 25), FUZZ_SEED (default 1), FUZZ_WORKERS
 * (default 1), FUZZ_ROLES (comma-separated subset), FUZZ_MAX_FAILURES (stop a role early).
 */

// Brute-force limits on login and registration are tested by the suite; here they would only turn the
// fuzzer's registrations and logins into 429s. Tokens outlive the run.
process.env.RATE_LIMIT_LOGIN_PER_IP = '1000000';
process.env.RATE_LIMIT_API_PER_MINUTE = '1000000';
process.env.RATE_LIMIT_API_PER_ACCOUNT_PER_MINUTE = '1000000';
process.env.RATE_LIMIT_LOGIN_PER_ACCOUNT_AND_IP = '1000000';
process.env.RATE_LIMIT_LOGIN_PER_ACCOUNT = '1000000';
process.env.RATE_LIMIT_REGISTER_PER_IP = '1000000';
process.env.JWT_TTL_SECONDS = '3600';
// The seeded webhook endpoint points at a local receiver.
process.env.WEBHOOKS_ALLOW_PRIVATE_TARGETS = 'true';
// Every rail on its real connector against the local provider fakes, so that the primary bank's balance and
// transactions (which the sandbox rail cannot answer) are served too.
process.env.TEST_RAILS = 'real';

const SCHEMATHESIS_DIR = path.join(ROOT, '.tools', 'schemathesis');
const REPORT_DIR = path.join(ROOT, 'tests', 'artifacts', 'fuzz');
const ROLES = ['anonymous', 'user', 'compliance', 'admin'] as const;
type RoleName = (typeof ROLES)[number];

interface RoleResult {
  role: RoleName;
  exitCode: number;
  cases: number;
  failures: number;
  errors: number;
  seconds: number;
}

const envInt = (name: string, fallback: number): number => {
  const value = Number.parseInt(process.env[name] ?? '', 10);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};

/** The data the id-taking and stateful operations need: a verified user's order, ad and appeal, a blocklist entry. */
async function seedFixtures(staff: TestUser, receiverUrl: string): Promise<void> {
  const trader = await newUser({ kycStatus: 'verified', phone: uniqueKenyanPhone() });
  const order = await completedPayment(trader);
  const ad = await postAd(trader, sellAd());
  if (ad.status !== 201) throw new Error(`seeding an ad failed: ${ad.status} ${JSON.stringify(ad.body)}`);
  const appeal = await postAppeal(trader, {
    order_id: order.order_id,
    reason: 'unauthorized',
    description: 'I did not make this payment.',
    evidence: [{ url: 'https://files.example.com/statement.pdf' }],
  });
  if (appeal.status !== 201) throw new Error(`seeding an appeal failed: ${appeal.status} ${JSON.stringify(appeal.body)}`);
  await blocklist(staff, { type: 'name', value: 'Fuzz Blocked Person', reason: 'fuzzing fixture' });
  const hook = await api().post('/api/v1/webhooks/endpoints').set(trader.auth).send({ url: receiverUrl });
  if (hook.status !== 201) throw new Error(`seeding a webhook endpoint failed: ${hook.status} ${JSON.stringify(hook.body)}`);
}

/** A role's caller with a fresh token (anonymous: none). */
async function callerFor(role: RoleName): Promise<TestUser | undefined> {
  switch (role) {
    case 'anonymous':
      return undefined;
    case 'user':
      return newUser({ kycStatus: 'verified', phone: uniqueKenyanPhone() });
    case 'compliance':
      return newUser({ roles: ['compliance'] });
    case 'admin':
      return newUser({ roles: ['admin'] });
  }
}

interface Counts {
  cases: number;
  failures: number;
  errors: number;
}

function runSchemathesis(role: RoleName, baseUrl: string, caller: TestUser | undefined): Promise<RoleResult> {
  const dir = path.join(REPORT_DIR, role);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const args = [
    '-m',
    'schemathesis.cli',
    '--config-file',
    path.join(ROOT, 'tests', 'fuzz', 'schemathesis.toml'),
    'run',
    `${baseUrl}/openapi.json`,
    '--url',
    `${baseUrl}/api/v1`,
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--max-examples',
    String(envInt('FUZZ_MAX_EXAMPLES', 25)),
    '--seed',
    String(envInt('FUZZ_SEED', 1)),
    '--workers',
    String(envInt('FUZZ_WORKERS', 1)),
    '--generation-database',
    'none',
    '--request-timeout',
    '20',
    '--report',
    'junit',
    '--report-dir',
    dir,
    '--no-color',
    ...(process.env.FUZZ_MAX_FAILURES ? ['--max-failures', process.env.FUZZ_MAX_FAILURES] : []),
    ...(caller ? ['-H', `Authorization: Bearer ${caller.token}`] : []),
  ];
  const started = Date.now();
  console.log(`\n=== schemathesis: ${role} ===`);
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(process.env.PYTHON ?? 'python3', args, {
      // Its working files (.schemathesis/) go next to the reports, not into the checkout.
      cwd: dir,
      env: { ...process.env, PYTHONPATH: SCHEMATHESIS_DIR, PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      process.stdout.write(chunk);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      fs.writeFileSync(path.join(dir, 'output.txt'), output);
      const summary = parseSummary(output);
      resolve({ role, exitCode: code ?? 1, ...summary, seconds: Math.round((Date.now() - started) / 1000) });
    });
  });
}

/** The "Test cases:" and "Failures/Errors" lines of the CLI's summary. */
function parseSummary(output: string): Counts {
  const generated = /Test cases:\s*\n?\s*(\d+) generated/.exec(output) ?? /(\d+) generated/.exec(output);
  // The closing line: "=== 3 failures, 1 error, 1 warning in 8.91s ===" or "=== 120 passed in 30s ===".
  const closing =
    output
      .trimEnd()
      .split('\n')
      .reverse()
      .find((line) => / in [\d.]+s\b/.test(line)) ?? '';
  const failures = /(\d+) failures?/.exec(closing);
  const errors = /(\d+) errors?/.exec(closing);
  return { cases: Number(generated?.[1] ?? 0), failures: Number(failures?.[1] ?? 0), errors: Number(errors?.[1] ?? 0) };
}

async function main(): Promise<number> {
  if (!fs.existsSync(path.join(SCHEMATHESIS_DIR, 'schemathesis'))) {
    console.error('Schemathesis is not installed in .tools/schemathesis: run `npm run setup` first.');
    return 1;
  }
  const only = (process.env.FUZZ_ROLES ?? '').split(',').filter(Boolean);
  const roles = ROLES.filter((r) => only.length === 0 || only.includes(r));
  const stack = await startStack();
  const receiver = await startWebhookReceiver(0);
  const results: RoleResult[] = [];
  try {
    await seedFixtures(await newUser({ roles: ['compliance'] }), receiver.url);
    for (const role of roles) results.push(await runSchemathesis(role, stack.baseUrl, await callerFor(role)));
  } finally {
    // A failed teardown (e.g. the test database cannot be dropped) is reported, but says nothing about the API.
    await stopStack().catch((err: unknown) => console.warn('could not stop the stack cleanly:', err));
    await receiver.close();
  }
  console.log('\n=== schemathesis summary ===');
  for (const r of results) {
    console.log(
      `${r.role.padEnd(11)} ${String(r.cases).padStart(6)} test cases  ${r.failures} failures  ${r.errors} errors  exit ${r.exitCode}  ${r.seconds} s`,
    );
  }
  const total = results.reduce((sum, r) => sum + r.cases, 0);
  const failures = results.reduce((sum, r) => sum + r.failures + r.errors, 0);
  const failed = results.filter((r) => r.exitCode !== 0);
  console.log(
    `${'total'.padEnd(11)} ${String(total).padStart(6)} test cases  ${failures} failures and errors  ${failed.length === 0 ? 'all roles passed' : `failing: ${failed.map((r) => r.role).join(', ')}`}`,
  );
  // One line CI adds to its totals: each generated case passed or failed; a role whose run failed without
  // a counted failure (it could not start, say) counts once.
  const unexplained = failed.filter((r) => r.failures + r.errors === 0).length;
  console.log(`fuzz: ${Math.max(0, total - failures)} passed, ${failures + unexplained} failed`);
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
