import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { User } from '../models';
import { api, newUser } from './support/api';
import { freePort, until } from './support/processes';

/**
 * The admin bootstrap as operators run it: the compiled api booted with ADMIN_EMAIL/ADMIN_PASSWORD and the
 * compiled `admin:create` command, each as its own process against the suite's database, Redis and Temporal.
 */

const DIST = path.resolve(__dirname, '..');
const API_ENTRY = path.join(DIST, 'api', 'server.js');
const CLI_ENTRY = path.join(DIST, 'api', 'cli', 'create-admin.js');
const ADMIN_PASSWORD = 'bootstrap-password-123';

const freshEmail = (tag: string) => `${tag}-${Date.now()}-${randomUUID().slice(0, 8)}@example.com`;

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `stdin`, when given, is piped to the process and closed; otherwise it has none. */
function run(entry: string, args: string[], env: Record<string, string>, stdin?: string): Run {
  const child = spawn(process.execPath, [entry, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end(stdin);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function stop(proc: Run): Promise<void> {
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
  await proc.exited;
}

/** Boot the compiled api with ADMIN_EMAIL/ADMIN_PASSWORD on a free port, and wait until it answers /healthz. */
async function bootApi(email: string, password: string): Promise<{ api: Run; baseUrl: string }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const proc = run(API_ENTRY, [], { PORT: String(port), ADMIN_EMAIL: email, ADMIN_PASSWORD: password });
  try {
    await until(
      'the api booted with ADMIN_EMAIL to answer /healthz',
      async () => {
        if (proc.child.exitCode !== null) throw new Error(`the api exited with ${proc.child.exitCode}: ${proc.output()}`);
        try {
          return (await fetch(`${baseUrl}/healthz`)).status === 200 ? true : undefined;
        } catch {
          return undefined;
        }
      },
      30_000,
      100,
    );
  } catch (err) {
    await stop(proc);
    throw err;
  }
  return { api: proc, baseUrl };
}

/** Boot the compiled api expecting it to refuse: its exit code and output. */
async function bootApiExpectingExit(email: string, password: string): Promise<{ code: number | null; output: string }> {
  const port = await freePort();
  const proc = run(API_ENTRY, [], { PORT: String(port), ADMIN_EMAIL: email, ADMIN_PASSWORD: password });
  const outcome = await until(
    'the api booted with a taken ADMIN_EMAIL to exit or serve',
    async () => {
      if (proc.child.exitCode !== null) return 'exited';
      try {
        return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200 ? 'serving' : undefined;
      } catch {
        return undefined;
      }
    },
    30_000,
    100,
  ).finally(() => stop(proc));
  expect(outcome, `the api booted and served with ADMIN_EMAIL=${email}: ${proc.output()}`).to.equal('exited');
  return { code: await proc.exited, output: proc.output() };
}

async function loginOver(baseUrl: string, email: string, password: string): Promise<{ status: number; token?: string }> {
  const res = await fetch(`${baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, token: body.access_token };
}

/** The queue dashboard: admins only (403 for anyone else). */
const dashboardStatus = async (baseUrl: string, token: string) =>
  (await fetch(`${baseUrl}/admin/queues`, { headers: { Authorization: `Bearer ${token}` } })).status;

/** The compiled `admin:create` with `args`; a password is piped on its stdin, as a script would. */
async function runCli(args: string[], stdin?: string): Promise<{ code: number | null; output: string }> {
  const cli = run(CLI_ENTRY, args, {}, stdin);
  const code = await cli.exited;
  return { code, output: cli.output() };
}

describe('Admin bootstrap as processes', function () {
  this.timeout(90_000);

  describe('when the compiled api boots with ADMIN_EMAIL and ADMIN_PASSWORD for a new address', () => {
    it('then it comes up, that admin logs in and reaches an admin-only page, and a restart leaves the admin alone', async () => {
      const email = freshEmail('boot-admin');
      const first = await bootApi(email, ADMIN_PASSWORD);
      try {
        const { status, token } = await loginOver(first.baseUrl, email, ADMIN_PASSWORD);
        expect(status, first.api.output()).to.equal(200);
        expect(await dashboardStatus(first.baseUrl, token!)).to.equal(200);
      } finally {
        await stop(first.api);
      }
      const [created] = await User.findAll({ where: { email } });
      expect(created.roles).to.have.members(['user', 'compliance', 'admin']);

      // Restarted with a different ADMIN_PASSWORD: it boots, and the admin keeps the password it has.
      const second = await bootApi(email.toUpperCase(), 'a-different-password-456');
      try {
        expect((await loginOver(second.baseUrl, email, ADMIN_PASSWORD)).status).to.equal(200);
        expect((await loginOver(second.baseUrl, email, 'a-different-password-456')).status).to.equal(401);
      } finally {
        await stop(second.api);
      }
      expect(await User.count({ where: { email } })).to.equal(1);
    });
  });

  describe('when someone registered the ADMIN_EMAIL address before the operator booted with it', () => {
    it('then the api exits non-zero naming ADMIN_EMAIL and --promote, and the account is still not an admin', async () => {
      const squatter = await newUser();
      const { code, output } = await bootApiExpectingExit(squatter.email.toUpperCase(), ADMIN_PASSWORD);
      expect(code, output).to.not.equal(0);
      expect(code, output).to.not.equal(null);
      expect(output).to.include(`ADMIN_EMAIL=${squatter.email.toUpperCase()}`);
      expect(output).to.include('exists and is not an admin');
      expect(output).to.include(`npm run admin:create -- --promote ${squatter.email.toUpperCase()}`);
      expect((await User.findByPk(squatter.id))?.roles).to.deep.equal(['user']);
      expect(await User.count({ where: { email: squatter.email } })).to.equal(1);
      const relogin = await api().post('/api/v1/auth/login').send({ email: squatter.email, password: squatter.password });
      expect(
        (
          await api()
            .get('/admin/queues')
            .set('Authorization', `Bearer ${(relogin.body as { access_token: string }).access_token}`)
        ).status,
      ).to.equal(403);
    });
  });

  describe('when admin:create is run for an address an account already has', () => {
    it('then without --promote it refuses and changes nothing; with --promote it makes that account an admin', async () => {
      const owner = await newUser();
      const refused = await runCli([owner.email], `${ADMIN_PASSWORD}\n`);
      expect(refused.code, refused.output).to.equal(1);
      expect(refused.output).to.include('not an admin');
      expect(refused.output).to.include(`--promote ${owner.email}`);
      expect((await User.findByPk(owner.id))?.roles).to.deep.equal(['user']);

      const promoted = await runCli(['--promote', owner.email.toUpperCase()]);
      expect(promoted.code, promoted.output).to.equal(0);
      expect(promoted.output).to.include(`promoted ${owner.email} (${owner.id}) to admin`);
      expect((await User.findByPk(owner.id))?.roles).to.have.members(['user', 'compliance', 'admin']);
      const relogin = await api().post('/api/v1/auth/login').send({ email: owner.email, password: owner.password });
      expect(relogin.status).to.equal(200);
      expect(
        (
          await api()
            .get('/admin/queues')
            .set('Authorization', `Bearer ${(relogin.body as { access_token: string }).access_token}`)
        ).status,
      ).to.equal(200);

      const again = await runCli(['--promote', owner.email]);
      expect(again.code, again.output).to.equal(0);
      expect(again.output).to.include('already an admin');
    });
  });

  describe('when admin:create is run for a new address with the password piped on stdin', () => {
    it('then it creates the admin, who can log in with that password; with nothing on stdin it creates nothing', async () => {
      const email = freshEmail('cli-admin');
      const created = await runCli([email], `${ADMIN_PASSWORD}\n`);
      expect(created.code, created.output).to.equal(0);
      expect(created.output).to.include(`created admin ${email}`);
      const [user] = await User.findAll({ where: { email } });
      expect(user.roles).to.have.members(['user', 'compliance', 'admin']);
      expect((await api().post('/api/v1/auth/login').send({ email, password: ADMIN_PASSWORD })).status).to.equal(200);
      const nobody = freshEmail('cli-admin');
      const usage = await runCli([nobody], '');
      expect(usage.code, usage.output).to.equal(64);
      expect(usage.output).to.include('no password given');
      expect(await User.count({ where: { email: nobody } })).to.equal(0);
    });
  });
});
