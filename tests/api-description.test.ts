import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { api } from './support/api';
import { ROOT } from './support/local-tools';

/**
 * The published description (docs/api-description.md#checks) is what clients generate SDKs from: the served /openapi.json passes
 * `redocly lint` (recommended rules) with no error, and Spectral's OWASP API Security ruleset with no result
 * at all beyond the exceptions written down, with their reasons, in .spectral.yaml.
 */

const run = promisify(execFile);
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);
const QUIET = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

/** Run a linter and keep what it said, whatever its exit code. */
async function lint(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd: ROOT, env: QUIET, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** Spectral's JSON results (it may print a line after the array when there are none). */
function results(stdout: string): { code: string; message: string; path: string[] }[] {
  const text = stdout.slice(stdout.indexOf('['));
  return JSON.parse(text.slice(0, text.lastIndexOf(']') + 1)) as { code: string; message: string; path: string[] }[];
}

interface Operation {
  operationId?: string;
  summary?: string;
}

describe('the published API description', function () {
  this.timeout(120_000);
  let dir: string;
  let file: string;
  let spec: { paths: Record<string, Record<string, Operation>> };

  before(async () => {
    const res = await api().get('/openapi.json');
    expect(res.status).to.equal(200);
    spec = res.body as typeof spec;
    dir = await mkdtemp(path.join(tmpdir(), 'paygate-openapi-'));
    file = path.join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(spec, null, 2));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('then every operation has a unique operationId and a summary', () => {
    const operations = Object.values(spec.paths).flatMap((item) => Object.values(item));
    const ids = operations.map((op) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).to.equal(true);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(operations.filter((op) => !op.summary)).to.deep.equal([]);
  });

  it('then `redocly lint` (recommended rules) reports no error', async () => {
    const result = await lint(bin('redocly'), ['lint', file, '--format=json']);
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string }[];
    };
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`);
    expect(errors).to.deep.equal([]);
    expect(report.totals.errors).to.equal(0);
    expect(result.code, result.stderr).to.equal(0);
  });

  it('then `redocly lint` itself fails a description with a duplicated operationId or a missing summary (control)', async () => {
    const broken = structuredClone(spec);
    broken.paths['/payments/history'].get.operationId = broken.paths['/payments/initiate'].post.operationId;
    delete broken.paths['/wallets'].get.summary;
    const brokenFile = path.join(dir, 'redocly-broken', 'openapi.json');
    await mkdir(path.dirname(brokenFile), { recursive: true });
    await writeFile(brokenFile, JSON.stringify(broken));
    const result = await lint(bin('redocly'), ['lint', brokenFile, '--format=json']);
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as { problems: { ruleId: string; severity: string }[] };
    const rules = report.problems.filter((p) => p.severity === 'error').map((p) => p.ruleId);
    expect(rules).to.include.members(['operation-operationId-unique', 'operation-summary']);
    expect(result.code).to.not.equal(0);
  });

  it("then Spectral's OWASP ruleset finds nothing that .spectral.yaml does not except with its reason", async () => {
    const result = await lint(bin('spectral'), [
      'lint',
      file,
      '--ruleset',
      path.join(ROOT, '.spectral.yaml'),
      '--format',
      'json',
      '--fail-severity',
      'hint',
    ]);
    const found = results(result.stdout);
    expect(found.map((r) => `${r.code} ${r.path.join('/')}: ${r.message}`)).to.deep.equal([]);
    expect(result.code, result.stderr).to.equal(0);
  });

  it('then the Spectral check itself fails a description that lacks a bound, a 500 or the rate-limit headers (control)', async () => {
    const broken = structuredClone(spec) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: unknown }> }>>;
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    delete broken.components.schemas.InitiatePaymentBody.properties.amount.maxLength;
    delete broken.paths['/payments/history'].get.responses['500'];
    delete broken.paths['/auth/login'].post.responses['200'].headers;
    const brokenFile = path.join(dir, 'broken', 'openapi.json');
    await mkdir(path.dirname(brokenFile), { recursive: true });
    await writeFile(brokenFile, JSON.stringify(broken));
    const result = await lint(bin('spectral'), ['lint', brokenFile, '--ruleset', path.join(ROOT, '.spectral.yaml'), '--format', 'json']);
    const codes = results(result.stdout).map((r) => r.code);
    expect(codes).to.include.members([
      'paygate-request-string-limit',
      'owasp:api8:2023-define-error-responses-500',
      'owasp:api4:2023-rate-limit',
    ]);
    expect(result.code).to.not.equal(0);
  });
});
