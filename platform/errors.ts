/**
 * The one error taxonomy. Every domain failure is an AppError with a stable `code`; the HTTP layer
 * renders it as RFC 9457 problem+json, workflows translate the same codes into order failure codes.
 */

export type ErrorCode =
  | 'validation_failed'
  | 'malformed_json'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'conflict'
  | 'idempotency_key_missing'
  | 'idempotency_key_reused'
  | 'idempotency_in_progress'
  | 'kyc_required'
  | 'limit_exceeded'
  | 'insufficient_funds'
  | 'blocked_by_compliance'
  | 'key_mode_not_served'
  | 'scope_not_grantable'
  | 'secret_not_replayed'
  | 'rate_limited'
  | 'dependency_unavailable'
  | 'internal';

export interface FieldError {
  field: string;
  message: string;
}

const STATUS: Record<ErrorCode, number> = {
  validation_failed: 400,
  malformed_json: 400,
  idempotency_key_missing: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  kyc_required: 422,
  limit_exceeded: 422,
  insufficient_funds: 422,
  blocked_by_compliance: 422,
  key_mode_not_served: 422,
  scope_not_grantable: 422,
  secret_not_replayed: 409,
  rate_limited: 429,
  internal: 500,
  dependency_unavailable: 503,
};

const TITLE: Record<ErrorCode, string> = {
  validation_failed: 'Validation failed',
  malformed_json: 'Malformed JSON body',
  idempotency_key_missing: 'Idempotency-Key header required',
  unauthenticated: 'Authentication required',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  conflict: 'Conflict',
  idempotency_in_progress: 'A request with this Idempotency-Key is still in progress',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  idempotency_key_reused: 'Idempotency-Key reused with a different request',
  kyc_required: 'KYC verification required',
  limit_exceeded: 'Limit exceeded',
  insufficient_funds: 'Insufficient funds',
  blocked_by_compliance: 'Blocked by compliance',
  key_mode_not_served: 'This deployment does not issue keys of that mode',
  scope_not_grantable: 'A scope no API key may hold',
  secret_not_replayed: 'The first answer to this Idempotency-Key carried a secret, shown only once',
  rate_limited: 'Too many requests',
  internal: 'Internal server error',
  dependency_unavailable: 'A dependency is unavailable',
};

export class AppError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly options: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail ?? TITLE[code]);
    this.name = 'AppError';
    this.status = STATUS[code];
    this.title = TITLE[code];
  }
}

export const validationError = (field: string, message: string): AppError =>
  new AppError('validation_failed', `${field}: ${message}`, { errors: [{ field, message }] });

export const notFound = (what: string): AppError => new AppError('not_found', `${what} not found`);
