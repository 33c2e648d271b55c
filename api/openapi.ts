/**
 * The published OpenAPI document: tsoa's generated spec, completed with what holds for every operation
 * and that tsoa cannot say per decorator:
 * - every error response (4xx, 5xx) is RFC 9457 `application/problem+json` (see problem.ts);
 * - an operation behind `@Security('jwt')` answers 401 without a valid token, and 403 when it admits only
 *   some roles (see auth/authentication.ts);
 * - a nullable field whose schema is a reference (tsoa writes `{allOf: [{$ref}], nullable: true}`) also
 *   states the referenced schema's `type`, as OpenAPI 3.0 asks of every `nullable`, and a reference to an
 *   enum becomes that enum inline with `null` added;
 * - request bodies may carry fields the API does not know: they are ignored (tsoa's
 *   `silently-remove-extras`, e.g. a `role` sent to /auth/register), so no schema forbids them;
 * - every operation behind `jwt` also takes an API key (`api_key`, docs/access.md#scopes), needing the one scope
 *   `scopeFor` reads off its method and path, and answers 403 to a key without it; but for the operations no key
 *   may call (staff areas, making or revoking keys: docs/access.md#what-a-key-can-never-do), which take a login only
 *   and answer 403 to any key;
 * - every operation can answer 500 (an unexpected error, as a problem that reveals nothing), and every
 *   operation but the provider callbacks counts against the caller's quota: its answers carry the IETF
 *   `RateLimit` and `RateLimit-Policy` fields, and past the quota it answers 429 with `Retry-After`
 *   (api/middleware/rate-limit.ts);
 * - a request body an operation also takes in another media type than JSON (a bulk payout as `text/csv`,
 *   read by api/middleware/batch-csv.ts before the route) is documented beside the JSON one.
 */

import { scopeFor, scopeForbiddenToKeys } from '../domain/api-keys';
import { BATCH_CSV_COLUMNS, BATCH_CSV_REQUIRED } from '../domain/payout-batch-csv';

const PROBLEM_JSON = 'application/problem+json';

interface MediaType {
  schema?: unknown;
  example?: unknown;
}

interface ResponseObject {
  description: string;
  content?: Record<string, MediaType>;
  headers?: Record<string, unknown>;
}

interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, ResponseObject>;
  security?: Record<string, string[]>[];
}

type Spec = Record<string, unknown> & {
  paths?: Record<string, Record<string, Operation>>;
  components?: {
    schemas?: Record<string, Record<string, unknown>>;
    securitySchemes?: Record<string, unknown>;
    headers?: Record<string, unknown>;
  };
};

const JWT_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'JWT',
  description:
    'A 15-minute access token from POST /auth/login, sent as `Authorization: Bearer <jwt>`. Issued and checked as ' +
    'RFC8725 (JSON Web Token Best Current Practices) asks: one algorithm (HS256) pinned on verification, `exp` always ' +
    'required, and the issuer and audience checked.',
};

const API_KEY_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'sk_test_… or sk_live_…',
  description:
    'An API key (POST /api-keys, signed in), sent as `Authorization: Bearer sk_…`. It acts as its owner, as a merchant ' +
    '(never with staff roles), within its scopes, until revoked or its `expires_at`; a `test` key reaches only sandbox ' +
    'rails, a `live` key only real ones. Staff operations and making or revoking keys take a login, never a key.',
};

const PROBLEM_SCHEMA = { $ref: '#/components/schemas/Problem' };

const isError = (status: string): boolean => /^[45]/.test(status);

function problemResponse(description: string): ResponseObject {
  return { description, content: { [PROBLEM_JSON]: { schema: PROBLEM_SCHEMA } } };
}

const RATE_LIMIT_HEADERS = {
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
};

const HEADERS = {
  RateLimit: {
    description:
      'What is left of each quota of `RateLimit-Policy` (IETF draft-ietf-httpapi-ratelimit-headers): `r` requests for `t` more seconds.',
    schema: { type: 'string', maxLength: 200, example: '"default";r=1199;t=60, "account";r=2999;t=60' },
  },
  'RateLimit-Policy': {
    description:
      'The quotas: `q` requests per window of `w` seconds. `"default"` is per API key, else per user, else per address ' +
      '(RATE_LIMIT_API_PER_MINUTE); `"account"`, for a signed-in caller, is per account whatever its keys and logins ' +
      '(RATE_LIMIT_API_PER_ACCOUNT_PER_MINUTE).',
    schema: { type: 'string', maxLength: 200, example: '"default";q=1200;w=60, "account";q=3000;w=60' },
  },
  'Retry-After': {
    description: 'Seconds until the quota has room again.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86400, example: 12 },
  },
};

/** Provider callbacks are not counted against a quota (see api/middleware/rate-limit.ts). */
const isRateLimited = (path: string): boolean => !path.startsWith('/callbacks/');

function completeOperation(operation: Operation, method: string, path: string): void {
  const responses = (operation.responses ??= {});
  responses['500'] ??= problemResponse('Unexpected error: the problem names nothing internal; the request id is in the log');
  if (isRateLimited(path)) responses['429'] ??= problemResponse('rate_limited: past the quota; retry after `Retry-After` seconds');
  // Every 429 (the quota, or an operation's own limit such as login attempts) says when to come back.
  if (responses['429'])
    responses['429'].headers = { ...responses['429'].headers, 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
  for (const [status, response] of Object.entries(responses)) {
    if (!isError(status) || !response.content) continue;
    const schema = response.content[PROBLEM_JSON]?.schema ?? response.content['application/json']?.schema ?? PROBLEM_SCHEMA;
    response.content = { [PROBLEM_JSON]: { schema } };
  }
  const jwt = operation.security?.find((requirement) => 'jwt' in requirement)?.jwt;
  if (jwt !== undefined) {
    responses['401'] ??= problemResponse('Unauthenticated: no valid bearer token or API key');
    const scope = scopeFor(method, path);
    const keys = scope !== null && !scopeForbiddenToKeys(scope);
    if (keys) operation.security = [...(operation.security ?? []), { api_key: [scope] }];
    const forbidden = [
      ...(jwt.length > 0 ? [`requires one of the roles: ${jwt.join(', ')}`] : []),
      keys ? `an API key needs ${scope}` : 'not open to API keys: a login only',
    ];
    if (forbidden.length > 0) responses['403'] ??= problemResponse(`Forbidden: ${forbidden.join('; ')}`);
  }
  if (!isRateLimited(path)) return;
  for (const [status, response] of Object.entries(responses)) {
    if (/^[24]/.test(status)) response.headers = { ...response.headers, ...RATE_LIMIT_HEADERS };
  }
}

type SchemaNode = Record<string, unknown>;

const isNode = (value: unknown): value is SchemaNode => typeof value === 'object' && value !== null;

/** Give every `nullable` schema without a `type` the type of the schema it references, wherever it is nested. */
function typeNullableReferences(node: unknown, schemas: Record<string, SchemaNode>): void {
  if (Array.isArray(node)) {
    for (const item of node) typeNullableReferences(item, schemas);
    return;
  }
  if (!isNode(node)) return;
  if (node.nullable === true && node.type === undefined && Array.isArray(node.allOf)) {
    const ref = node.allOf.find((part): part is SchemaNode => isNode(part) && typeof part.$ref === 'string')?.$ref;
    const target = typeof ref === 'string' ? schemas[ref.replace('#/components/schemas/', '')] : undefined;
    if (target && typeof target.type === 'string') node.type = target.type;
    // An enum admits null only by listing it (OpenAPI 3.0.3): the field takes the enum inline, null added.
    if (target && Array.isArray(target.enum)) {
      node.enum = [...(target.enum as unknown[]), null];
      delete node.allOf;
    }
  }
  for (const value of Object.values(node)) typeNullableReferences(value, schemas);
}

/** A bulk payout uploaded as CSV (docs/payments.md#a-batch-as-csv): the same items, one per row. */
const BATCH_CSV = {
  schema: {
    type: 'string',
    // The body limit of a bulk payout (api/middleware/batch-csv.ts), 5 MB.
    maxLength: 5 * 1024 * 1024,
    description:
      `A header row naming the columns, then one item per row (at most 10,000), numbered from 1 after the header. ` +
      `Columns: ${BATCH_CSV_COLUMNS.map((c) => `\`${c}\``).join(', ')}; ${BATCH_CSV_REQUIRED.map((c) => `\`${c}\``).join(', ')} ` +
      "are required, the destination's as its method needs them, in any order. An empty cell is an absent field; a field " +
      'with a comma, quote or line break is quoted (RFC 4180). `skip_invalid` is then a query parameter.',
  },
  example:
    'reference,amount,currency,method,destination.provider,destination.phone,description\r\n' +
    'SALARY-2026-11-0001,25000.00,KES,mobile_money,mpesa,+254712345678,November salary\r\n' +
    'SALARY-2026-11-0002,18000.00,KES,mobile_money,mpesa,+254722000111,"November salary, with arrears"\r\n',
};

/** Request bodies an operation also takes in another media type, by operationId. */
const OTHER_REQUEST_MEDIA: Record<string, Record<string, MediaType>> = {
  createPayoutBatch: { 'text/csv': BATCH_CSV },
};

/** A completed copy of the generated spec (the input is not modified). */
export function publishedSpec(generated: Record<string, unknown>): Record<string, unknown> {
  const spec = structuredClone(generated) as Spec;
  for (const schema of Object.values(spec.components?.schemas ?? {})) {
    if (schema.additionalProperties === false) delete schema.additionalProperties;
  }
  typeNullableReferences(spec.components?.schemas, spec.components?.schemas ?? {});
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      completeOperation(operation, method, path);
      const other = OTHER_REQUEST_MEDIA[operation.operationId ?? ''];
      if (other && operation.requestBody?.content) operation.requestBody.content = { ...operation.requestBody.content, ...other };
    }
  }
  spec.components = {
    ...spec.components,
    headers: HEADERS,
    securitySchemes: { ...spec.components?.securitySchemes, jwt: JWT_SCHEME, api_key: API_KEY_SCHEME },
  };
  // Every server here is the public API a merchant calls (OWASP API9: say who a server is for).
  spec.servers = (Array.isArray(spec.servers) ? (spec.servers as Record<string, unknown>[]) : [{ url: '/api/v1' }]).map((server) => ({
    ...server,
    'x-internal': false,
  }));
  const info = spec.info as Record<string, unknown> | undefined;
  const license = info?.license as Record<string, unknown> | undefined;
  if (license?.name === 'Apache-2.0') license.url = 'https://www.apache.org/licenses/LICENSE-2.0';
  return spec;
}
