import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures: HMAC-SHA256 with the endpoint's secret over `<timestamp>.<body>`, sent as
 * `Paygate-Signature: t=<unix seconds>,v1=<hex>`. The timestamp inside the signed text lets receivers
 * refuse replays older than their tolerance.
 */

export const SIGNATURE_HEADER = 'Paygate-Signature';
export const EVENT_ID_HEADER = 'Paygate-Event-Id';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64url')}`;

const hmac = (secret: string, timestamp: number, body: string): string =>
  createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

export function signWebhook(secret: string, body: string, timestamp: number = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, body)}`;
}

/** What a receiver runs: the signature matches and is recent enough. */
export function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string | undefined,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  now: number = Math.floor(Date.now() / 1000),
): boolean {
  if (!header) return false;
  const parts = new Map(header.split(',').map((kv) => kv.trim().split('=', 2) as [string, string]));
  const timestamp = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!Number.isInteger(timestamp) || !given || Math.abs(now - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmac(secret, timestamp, body));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
