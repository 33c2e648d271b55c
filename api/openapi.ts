/**
 * The published OpenAPI document: tsoa's generated spec, completed with what holds for every operation
 * and that tsoa cannot say per decorator:
 * - every error response (4xx, 5xx) is RFC 9457 `application/problem+json` (see problem.ts);
 * - an operation behind `@Security('jwt')` answers 401 without a valid token, and 403 when it admits only
 *   some roles (see auth/authentication.ts);
 * - request bodies may carry fields the API does not know: they are ignored (tsoa's
 *   `silently-remove-extras`, e.g. a `role` sent to /auth/register), so no schema forbids them;
 * - every operation behind `jwt` also takes an API key (`api_key`, SPEC §12), needing the one scope
 *   `scopeFor` reads off its method and path, and answers 403 to a key without it.
 */

import { scopeFor } from '../domain/api-keys';

const PROBLEM_JSON = 'application/problem+json';

interface MediaType {
  schema?: unknown;
}

interface ResponseObject {
  description: string;
  content?: Record<string, MediaType>;
}

interface Operation {
  responses?: Record<string, ResponseObject>;
  security?: Record<string, string[]>[];
}

type Spec = Record<string, unknown> & {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Record<string, unknown>>; securitySchemes?: Record<string, unknown> };
};

const API_KEY_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'sk_test_… or sk_live_…',
  description:
    'An API key (POST /api-keys), sent as `Authorization: Bearer sk_…`. It acts as its owner within its scopes; ' +
    'a `test` key reaches only sandbox rails, a `live` key only real ones.',
};

const PROBLEM_SCHEMA = { $ref: '#/components/schemas/Problem' };

const isError = (status: string): boolean => /^[45]/.test(status);

function problemResponse(description: string): ResponseObject {
  return { description, content: { [PROBLEM_JSON]: { schema: PROBLEM_SCHEMA } } };
}

function completeOperation(operation: Operation, method: string, path: string): void {
  const responses = (operation.responses ??= {});
  for (const [status, response] of Object.entries(responses)) {
    if (!isError(status) || !response.content) continue;
    const schema = response.content[PROBLEM_JSON]?.schema ?? response.content['application/json']?.schema ?? PROBLEM_SCHEMA;
    response.content = { [PROBLEM_JSON]: { schema } };
  }
  const jwt = operation.security?.find((requirement) => 'jwt' in requirement)?.jwt;
  if (jwt === undefined) return;
  responses['401'] ??= problemResponse('Unauthenticated: no valid bearer token or API key');
  const scope = scopeFor(method, path);
  if (scope) operation.security = [...(operation.security ?? []), { api_key: [scope] }];
  const forbidden = [
    ...(jwt.length > 0 ? [`requires one of the roles: ${jwt.join(', ')}`] : []),
    ...(scope ? [`an API key needs ${scope}`] : []),
  ];
  if (forbidden.length > 0) responses['403'] ??= problemResponse(`Forbidden: ${forbidden.join('; ')}`);
}

/** A completed copy of the generated spec (the input is not modified). */
export function publishedSpec(generated: Record<string, unknown>): Record<string, unknown> {
  const spec = structuredClone(generated) as Spec;
  for (const schema of Object.values(spec.components?.schemas ?? {})) {
    if (schema.additionalProperties === false) delete schema.additionalProperties;
  }
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) completeOperation(operation, method, path);
  }
  spec.components = { ...spec.components, securitySchemes: { ...spec.components?.securitySchemes, api_key: API_KEY_SCHEME } };
  return spec;
}
