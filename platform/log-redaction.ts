/**
 * What the HTTP log may say about a request. Access logs are read by more people, and kept longer, than
 * anything that holds a credential should be: an admin's JWT in the queue dashboard's `?access_token=` or
 * its cookie, or the per-order `?token=` Daraja echoes on the M-Pesa callback URLs, is enough to act as
 * that admin or to settle that payout. So the log keeps the request id, method, path, status and duration,
 * and never the value of a credential.
 */

export const REDACTED = '[redacted]';

/**
 * Paths whose query strings are never logged at all: the provider callbacks (the per-order callback token)
 * and the queue dashboard (the admin's `access_token`).
 */
const QUERYLESS_PATHS = [/^\/api\/v1\/callbacks(\/|$)/i, /^\/admin\/queues(\/|$)/i];

/** A query parameter or header whose name says it carries a credential. */
const CREDENTIAL_NAME = /token|secret|passw|pwd|signature|sig$|key$|apikey|auth|session|cookie|credential|^code$|^otp$|^pin$/i;

/** Names that match the pattern above but carry nothing secret, and help when reading a log. */
const NOT_CREDENTIALS = new Set(['idempotency-key', 'idempotency_key']);

export const isCredentialName = (name: string): boolean => CREDENTIAL_NAME.test(name) && !NOT_CREDENTIALS.has(name.toLowerCase());

/** Decode a query-string name as a server would; a malformed escape is kept as it is. */
function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * The URL as the log may show it: the path as requested, its query dropped on the callback and dashboard
 * routes, and elsewhere every parameter whose name looks like a credential replaced by `[redacted]`.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const path = url.slice(0, q);
  if (QUERYLESS_PATHS.some((p) => p.test(path))) return `${path}?${REDACTED}`;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return isCredentialName(decodeName(name)) && eq >= 0 ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

/**
 * pino `redact` paths for loggers that might be handed a raw request or response some other way: the
 * serializers above are the main defence, these are the second.
 */
export const REDACT_PATHS = [
  'password',
  '*.password',
  'access_token',
  '*.access_token',
  'token',
  '*.token',
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-sandbox-signature"]',
  'req.headers["paygate-signature"]',
  'req.query',
  'res.headers["set-cookie"]',
];
