/**
 * The published OpenAPI document: tsoa's generated spec, completed with what holds for every operation
 * and that tsoa cannot say per decorator:
 * - every error response (4xx, 5xx) is RFC 9457 `application/problem+json` (see problem.ts);
 * - an operation behind `@Security('jwt')` answers 401 without a valid token, and 403 when it admits only
 *   some roles (see auth/authentication.ts);
 * - request bodies may carry fields the API does not know: they are ignored (tsoa's
 *   `silently-remove-extras`, e.g. a `role` sent to /auth/register), so no schema forbids them.
 */

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
  components?: { schemas?: Record<string, Record<string, unknown>> };
};

const PROBLEM_SCHEMA = { $ref: '#/components/schemas/Problem' };

const isError = (status: string): boolean => /^[45]/.test(status);

function problemResponse(description: string): ResponseObject {
  return { description, content: { [PROBLEM_JSON]: { schema: PROBLEM_SCHEMA } } };
}

function completeOperation(operation: Operation): void {
  const responses = (operation.responses ??= {});
  for (const [status, response] of Object.entries(responses)) {
    if (!isError(status) || !response.content) continue;
    const schema = response.content[PROBLEM_JSON]?.schema ?? response.content['application/json']?.schema ?? PROBLEM_SCHEMA;
    response.content = { [PROBLEM_JSON]: { schema } };
  }
  const jwt = operation.security?.find((requirement) => 'jwt' in requirement)?.jwt;
  if (jwt === undefined) return;
  responses['401'] ??= problemResponse('Unauthenticated: no valid bearer token');
  if (jwt.length > 0) responses['403'] ??= problemResponse(`Requires one of the roles: ${jwt.join(', ')}`);
}

/** A completed copy of the generated spec (the input is not modified). */
export function publishedSpec(generated: Record<string, unknown>): Record<string, unknown> {
  const spec = structuredClone(generated) as Spec;
  for (const schema of Object.values(spec.components?.schemas ?? {})) {
    if (schema.additionalProperties === false) delete schema.additionalProperties;
  }
  for (const item of Object.values(spec.paths ?? {})) {
    for (const operation of Object.values(item)) completeOperation(operation);
  }
  return spec;
}
