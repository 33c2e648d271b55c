import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../support/api';

/**
 * What the security suite shares: the API's own OpenAPI description (as served at /openapi.json), its
 * operations listed one by one, and the calls and paths its matrices use.
 */

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type Method = (typeof METHODS)[number];

export interface SpecParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Record<string, unknown>;
}

export interface SpecOperation {
  method: Method;
  /** As in the spec, relative to /api/v1, e.g. `/payments/orders/{order_id}`. */
  path: string;
  /** `GET /payments/orders/{order_id}`: how the matrices below name an operation. */
  key: string;
  parameters: SpecParameter[];
  /** Roles of `@Security('jwt', [...])`; undefined for a public operation, [] for any signed-in caller. */
  roles?: string[];
  requestBody?: Record<string, unknown>;
  responses: string[];
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Partial<Record<Method, Record<string, unknown>>>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

let cached: OpenApiDocument | undefined;

/** The description the running API serves. */
export async function servedSpec(): Promise<OpenApiDocument> {
  if (!cached) {
    const res = await api().get('/openapi.json');
    expect(res.status).to.equal(200);
    cached = res.body as OpenApiDocument;
  }
  return cached;
}

export function operationsOf(spec: OpenApiDocument): SpecOperation[] {
  const ops: SpecOperation[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const op = item[method] as
        | {
            parameters?: SpecParameter[];
            security?: Record<string, string[]>[];
            requestBody?: Record<string, unknown>;
            responses?: Record<string, unknown>;
          }
        | undefined;
      if (!op) continue;
      const jwt = op.security?.find((s) => 'jwt' in s)?.jwt;
      ops.push({
        method,
        path,
        key: `${method.toUpperCase()} ${path}`,
        parameters: op.parameters ?? [],
        roles: jwt,
        requestBody: op.requestBody,
        responses: Object.keys(op.responses ?? {}),
      });
    }
  }
  return ops;
}

export const specOperations = async (): Promise<SpecOperation[]> => operationsOf(await servedSpec());

/** `/users/{user_id}/kyc` with the given values in place of its path parameters. */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for path parameter ${name} of ${path}`);
    return encodeURIComponent(value);
  });
}

export const pathParameters = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);

/** Send `method` to `/api/v1<path>`, with an optional bearer token and JSON body. */
export function call(method: Method, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  let req = api()[method](`/api/v1${path}`);
  if (options.token) req = req.set('Authorization', `Bearer ${options.token}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) req = req.set(name, value);
  return options.body === undefined ? req : req.send(options.body as object);
}

/** The route fallback's 404: the router knows no such path (as opposed to a 404 about a missing resource). */
export const isRouteFallback404 = (res: Response): boolean =>
  res.status === 404 && /^no route for /.test(String((res.body as { detail?: string }).detail ?? ''));

/** A well-formed UUID (v7 layout) that names nothing. */
export const UNKNOWN_ID = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
