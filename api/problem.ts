import { ValidateError } from '@tsoa/runtime';
import type { ErrorRequestHandler, Response } from 'express';
import { AppError, type ErrorCode, type FieldError } from '../platform/errors';
import { componentLogger } from '../platform/logger';

/** RFC 9457 problem details, as every error response of the API carries them. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
  request_id: string;
}

const log = componentLogger('http');

/** The problem an error is rendered as, for the request `requestId`. */
export const problemOf = (err: AppError, requestId: string): Problem => ({
  type: `https://paygate.dev/problems/${err.code.replace(/_/g, '-')}`,
  title: err.title,
  status: err.status,
  detail: err.detail ?? err.title,
  code: err.code,
  ...(err.options.errors ? { errors: err.options.errors } : {}),
  request_id: requestId,
});

export function sendProblem(res: Response, err: AppError): void {
  const problem = problemOf(err, String(res.getHeader('X-Request-Id') ?? ''));
  for (const [name, value] of Object.entries(err.options.headers ?? {})) res.setHeader(name, value);
  res.status(err.status).type('application/problem+json').send(JSON.stringify(problem));
}

/**
 * The field a tsoa error names: without its `body.`/`query.` prefix, and a bulk payout's `items.$2.description`
 * as the row it is (`rows[3].description`), as the batch's own checks name rows (docs/payments.md#bulk-payouts).
 */
const fieldName = (key: string): string => {
  const field = key.replace(/^(body|query|path|header)\.?/, '') || key;
  return field.replace(/^items\.\$(\d+)(?=\.|$)/, (_, index: string) => `rows[${Number(index) + 1}]`);
};

/** A body parser's limit in bytes, as KiB or MiB. */
const sizeOf = (limit: unknown): string =>
  typeof limit !== 'number' ? 'the size limit' : limit >= 1024 * 1024 ? `${limit / (1024 * 1024)} MiB` : `${limit / 1024} KiB`;

/** Turn anything thrown into an AppError: tsoa validation, body-parser failures, or an unknown bug. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ValidateError) {
    const errors = Object.entries(err.fields).map(([key, value]) => ({
      field: fieldName(key),
      message: value.message,
    }));
    const headerMissing = errors.find((e) => e.field.toLowerCase() === 'idempotency-key');
    if (headerMissing) return new AppError('idempotency_key_missing', 'send an Idempotency-Key header (e.g. a UUID) with this request');
    return new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  }
  // The router refuses a path whose percent-encoding does not decode: the client's fault, not ours.
  if (err instanceof URIError) return new AppError('validation_failed', 'the request path is not valid percent-encoding');
  const bodyError = err as { type?: string; status?: number; limit?: unknown };
  switch (bodyError?.type) {
    case 'entity.parse.failed':
      return new AppError('malformed_json', 'the request body is not valid JSON');
    case 'entity.too.large':
      // 64 KiB, or a bulk payout's 5 MiB (api/app.ts).
      return new AppError('payload_too_large', `the request body exceeds ${sizeOf(bodyError.limit)}`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'unsupported body encoding');
  }
  return new AppError('internal', 'an unexpected error occurred; quote the request_id when reporting it');
}

export const problemHandler: ErrorRequestHandler = (err, req, res, next) => {
  if (res.headersSent) {
    next(err);
    return;
  }
  const appError = toAppError(err);
  if (appError.status >= 500) req.log?.error({ err }, 'request failed');
  else if (appError.code === 'internal') log.error({ err }, 'request failed');
  sendProblem(res, appError);
};
