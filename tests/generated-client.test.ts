import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { api } from './support/api';
import { ROOT } from './support/local-tools';
import { realRails } from './support/rails';
import { stack } from './support/stack';

/**
 * A generated SDK drives the product (docs/api-description.md#generating-a-client): a client generated from the served /openapi.json with
 * openapi-typescript, used through openapi-fetch by examples/merchant-client/flow.ts — compiled with
 * `strict` against the types just generated, and run as a process — does the README's first payment with
 * an API key. No hand-written HTTP: every call is the generated client's, and every answer is checked
 * against the schema the description declares for it.
 */

const run = promisify(execFile);
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

interface Summary {
  deposit?: { deposit_id: string; status: string };
  order?: { order_id: string; status: string };
  statement?: { kind: string; amount: string; balance_after: string }[];
  events?: { id: string; type: string; data: Record<string, unknown> }[];
  checked: string[];
  failures: string[];
  error?: string;
}

describe('a client generated from the published description', function () {
  this.timeout(180_000);
  let dir: string;
  let descriptionFile: string;

  before(async () => {
    const res = await api().get('/openapi.json');
    expect(res.status).to.equal(200);
    // Inside the checkout, so that the generated code resolves openapi-fetch and ajv as a merchant's would.
    dir = path.join(ROOT, '.data', `generated-client-${randomUUID()}`);
    await mkdir(dir, { recursive: true });
    descriptionFile = path.join(dir, 'openapi.json');
    await writeFile(descriptionFile, JSON.stringify(res.body));
    await run(bin('openapi-typescript'), [descriptionFile, '--output', path.join(dir, 'paygate-api.ts')], { cwd: dir });
    await copyFile(path.join(ROOT, 'examples', 'merchant-client', 'flow.ts'), path.join(dir, 'flow.ts'));
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'commonjs',
          moduleResolution: 'node',
          lib: ['ES2023', 'DOM'],
          strict: true,
          esModuleInterop: true,
          skipLibCheck: true,
          outDir: 'out',
          types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules', '@types')],
        },
        files: ['flow.ts', 'paygate-api.ts'],
      }),
    );
    try {
      await run(bin('tsc'), ['-p', path.join(dir, 'tsconfig.json')], { cwd: dir });
    } catch (err) {
      const failed = err as { stdout?: string };
      throw new Error(`the flow does not compile against the generated client:\n${failed.stdout ?? String(err)}`, { cause: err });
    }
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function flow(description = descriptionFile): Promise<{ code: number; summary: Summary }> {
    const env = {
      ...process.env,
      PAYGATE_URL: stack.baseUrl,
      PAYGATE_OPENAPI_FILE: description,
      PAYGATE_KEY_MODE: realRails ? 'live' : 'test',
    };
    let stdout: string;
    let code = 0;
    try {
      ({ stdout } = await run(process.execPath, [path.join(dir, 'out', 'flow.js')], { env, maxBuffer: 16 * 1024 * 1024 }));
    } catch (err) {
      const failed = err as { stdout?: string; code?: number };
      stdout = failed.stdout ?? '';
      code = failed.code ?? 1;
    }
    const last = stdout.trim().split('\n').at(-1) ?? '{}';
    return { code, summary: JSON.parse(last) as Summary };
  }

  it('then, with an API key, it deposits, pays out, sees the order completed, and reads the statement and the events', async () => {
    const { code, summary } = await flow();
    expect(summary.error, summary.error).to.equal(undefined);
    expect(summary.failures).to.deep.equal([]);
    expect(code).to.equal(0);
    expect(summary.deposit?.status).to.equal('completed');
    expect(summary.order?.status).to.equal('completed');
    expect(summary.statement).to.deep.equal([
      { kind: 'hold', amount: '-1500.00', balance_after: '500.00' },
      { kind: 'deposit', amount: '2000.00', balance_after: '2000.00' },
    ]);
    const events = summary.events ?? [];
    const depositId = summary.deposit?.deposit_id;
    const orderId = summary.order?.order_id;
    expect(
      events.some((e) => e.type === 'deposit.status_changed' && e.data.deposit_id === depositId && e.data.status === 'completed'),
    ).to.equal(true);
    expect(events.some((e) => e.type === 'wallet.credited' && e.data.deposit_id === depositId && e.data.amount === '2000.00')).to.equal(
      true,
    );
    expect(events.some((e) => e.type === 'order.status_changed' && e.data.order_id === orderId && e.data.status === 'completed')).to.equal(
      true,
    );
    // Every call the flow made was checked against the description.
    expect(summary.checked.filter((c) => c.startsWith('POST /wallets/deposits → 202'))).to.have.length(1);
    expect(summary.checked.filter((c) => c.startsWith('GET /events → 200')).length).to.be.at.least(1);
  });

  it('then an answer the description does not declare fails the flow (control: the check can fail)', async () => {
    const altered = JSON.parse(JSON.stringify((await api().get('/openapi.json')).body)) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    delete altered.paths['/wallets/deposits'].post.responses['202'];
    const file = path.join(dir, 'altered.json');
    await writeFile(file, JSON.stringify(altered));
    const { code, summary } = await flow(file);
    expect(code).to.not.equal(0);
    expect(summary.failures).to.include('POST /wallets/deposits → 202: the description declares no such answer');
  });
});
