import type { RequestHandler } from 'express';
import { AppError } from '../../platform/errors';

/**
 * Refuses input no endpoint can mean, before any handler sees it:
 * - a JSON body nested deeper than MAX_DEPTH: nothing the API accepts goes beyond a few levels, and code
 *   that walks a body recursively (the idempotency fingerprint) would otherwise overflow the stack;
 * - a NUL character in a body string or key, or in a query parameter: PostgreSQL cannot store it in text,
 *   so it would surface as a database error instead of the client's 400.
 * The walk is iterative, so the guard itself cannot overflow.
 */

export const MAX_JSON_DEPTH = 32;

const hasNul = (s: string): boolean => s.includes('\u0000');

/** The first problem in a parsed JSON value, or undefined. */
function bodyProblem(body: unknown): string | undefined {
  const pending: { value: unknown; depth: number }[] = [{ value: body, depth: 0 }];
  while (pending.length > 0) {
    const { value, depth } = pending.pop()!;
    if (typeof value === 'string') {
      if (hasNul(value)) return 'a string contains a NUL character';
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (Array.isArray(value)) {
      for (const item of value) pending.push({ value: item, depth: depth + 1 });
    } else {
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        if (hasNul(key)) return 'a key contains a NUL character';
        pending.push({ value: item, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

export const inputGuard: RequestHandler = (req, _res, next) => {
  for (const [name, value] of Object.entries(req.query)) {
    const values = Array.isArray(value) ? value : [value];
    if (hasNul(name) || values.some((v) => typeof v === 'string' && hasNul(v))) {
      next(
        new AppError('validation_failed', `${name}: must not contain a NUL character`, {
          errors: [{ field: name, message: 'must not contain a NUL character' }],
        }),
      );
      return;
    }
  }
  const problem = req.body === undefined ? undefined : bodyProblem(req.body);
  if (problem) {
    next(new AppError('validation_failed', problem, { errors: [{ field: 'body', message: problem }] }));
    return;
  }
  next();
};
