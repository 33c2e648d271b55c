/**
 * A merchant's server, written against a client generated from Paygate's published description, and
 * nothing else: `paygate-api.ts` comes from `openapi-typescript <server>/openapi.json`, and every call
 * goes through `openapi-fetch` with those types. It does the README's first payment with an API key:
 * deposit KES 2,000 by STK Push, pay out KES 1,500 by M-Pesa, poll the order until it is completed, read
 * the statement and list the events.
 *
 * Every answer is also checked at run time against the response schema the description declares for its
 * operation and status (an undeclared status is a failure too), so the types the client was compiled with
 * are the shapes the server really sends.
 *
 * Run: PAYGATE_URL=http://127.0.0.1:3000 PAYGATE_OPENAPI_FILE=openapi.json node flow.js
 * (PAYGATE_KEY_MODE=live when the server's mobile-money rail is the real Daraja one). It prints one JSON
 * summary line and exits non-zero on any failure.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './paygate-api';

type Schema = Record<string, unknown>;
interface Description {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
  components: { schemas: Record<string, Schema> };
}

const base = process.env.PAYGATE_URL ?? 'http://127.0.0.1:3000';
const descriptionFile = process.env.PAYGATE_OPENAPI_FILE ?? 'openapi.json';
const mode = process.env.PAYGATE_KEY_MODE === 'live' ? 'live' : 'test';
const description = JSON.parse(readFileSync(descriptionFile, 'utf8')) as Description;

// --- checking each answer against the description (OpenAPI 3.0 schemas, read as JSON Schema)

/** OpenAPI 3.0's `nullable: true` is JSON Schema's "or null"; `$ref`s point into the registered description. */
function asJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(asJsonSchema);
  if (typeof node !== 'object' || node === null) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' || key === 'example') continue;
    out[key] = key === '$ref' && typeof value === 'string' ? `paygate${value}` : asJsonSchema(value);
  }
  return (node as Schema).nullable === true ? { anyOf: [{ type: 'null' }, out] } : out;
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'paygate', components: { schemas: asJsonSchema(description.components.schemas) } });
const validators = new Map<string, ValidateFunction>();

const checked: string[] = [];
const failures: string[] = [];

const conformance: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    const what = `${request.method} ${schemaPath} → ${response.status}`;
    checked.push(what);
    const declared = description.paths[schemaPath]?.[request.method.toLowerCase()]?.responses[String(response.status)];
    if (!declared) {
      failures.push(`${what}: the description declares no such answer`);
      return undefined;
    }
    const media = Object.values(declared.content ?? {})[0];
    if (!media) return undefined;
    let validate = validators.get(what);
    if (!validate) {
      validate = ajv.compile(asJsonSchema(media.schema) as Schema);
      validators.set(what, validate);
    }
    const body: unknown = await response.clone().json();
    if (!validate(body)) failures.push(`${what}: ${ajv.errorsText(validate.errors)}`);
    return undefined;
  },
};

// --- the flow

const api = `${base}/api/v1`;
const anonymous = createClient<paths>({ baseUrl: api });
anonymous.use(conformance);

function must<T>(what: string, result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function poll<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still not done after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await sleep(200);
  }
}

async function main(): Promise<void> {
  // A person signs up once and makes a key for the shop's server.
  const email = `merchant-${randomUUID()}@example.com`;
  const password = 'a-long-enough-password';
  must('register', await anonymous.POST('/auth/register', { body: { email, password, full_name: 'Wanjiku Shop' } }));
  const session = must('log in', await anonymous.POST('/auth/login', { body: { email, password } }));
  const created = must(
    'create an API key',
    await anonymous.POST('/api-keys', {
      headers: { Authorization: `Bearer ${session.access_token}` },
      body: { name: 'shop backend', mode, scopes: ['wallets:read', 'wallets:write', 'payments:read', 'payments:write', 'events:read'] },
    }),
  );

  // From here on, the server uses its key only.
  const paygate = createClient<paths>({ baseUrl: api, headers: { Authorization: `Bearer ${created.secret}` } });
  paygate.use(conformance);
  const phone = '+254712345678';

  const deposit = must(
    'deposit by STK Push',
    await paygate.POST('/wallets/deposits', {
      params: { header: { 'Idempotency-Key': randomUUID() } },
      body: { amount: '2000.00', currency: 'KES', method: 'mobile_money', phone },
    }),
  );
  const credited = await poll(
    'the deposit',
    async () =>
      must(
        'read the deposit',
        await paygate.GET('/wallets/deposits/{deposit_id}', { params: { path: { deposit_id: deposit.deposit_id } } }),
      ),
    (d) => d.status !== 'pending',
  );

  const payout = must(
    'pay out',
    await paygate.POST('/payments/initiate', {
      params: { header: { 'Idempotency-Key': randomUUID() } },
      body: { amount: '1500.00', currency: 'KES', method: 'mobile_money', destination: { provider: 'mpesa', phone } },
    }),
  );
  const order = await poll(
    'the order',
    async () =>
      must('read the order', await paygate.GET('/payments/orders/{order_id}', { params: { path: { order_id: payout.order_id } } })),
    (o) => ['completed', 'failed', 'rejected', 'reversed'].includes(o.status),
  );

  const statement = must(
    'read the statement',
    await paygate.GET('/wallets/{currency}/transactions', { params: { path: { currency: 'KES' } } }),
  );
  const events: components['schemas']['EventBody'][] = [];
  let cursor: string | undefined;
  do {
    const page = must('list the events', await paygate.GET('/events', { params: { query: { limit: 100, cursor } } }));
    events.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);

  const summary = {
    deposit: { deposit_id: deposit.deposit_id, status: credited.status },
    order: { order_id: order.order_id, status: order.status },
    statement: statement.data.map((line) => ({ kind: line.kind, amount: line.amount, balance_after: line.balance_after })),
    events: events.map((e) => ({ id: e.id, type: e.type, data: e.data })),
    checked,
    failures,
  };
  console.log(JSON.stringify(summary));
  if (failures.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.log(JSON.stringify({ error: (err as Error).message, checked, failures }));
  process.exitCode = 1;
});
