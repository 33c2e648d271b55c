import { componentLogger } from '../platform/logger';
import { RailError, type RailStatus } from './types';

const log = componentLogger('rails');

/**
 * Log a rail's own words about a transfer with the order they concern: the only place they go
 * (docs/conventions.md#errors). Nothing is logged when the rail said nothing of its own.
 */
export function logProviderText(
  rail: string,
  orderId: string | undefined,
  failure: { failureCode: string; providerCode?: string; providerText?: string },
): void {
  if (!failure.providerText) return;
  log.warn(
    { rail, orderId, failureCode: failure.failureCode, providerCode: failure.providerCode, providerText: failure.providerText },
    'the rail refused or failed a request',
  );
}

/** A rail's answer as the workflow takes it: with its own words logged (see `logProviderText`), and dropped. */
export function withoutProviderText<S extends RailStatus>(rail: string, orderId: string | undefined, status: S): S {
  if (status.state !== 'failed' || status.providerText === undefined) return status;
  logProviderText(rail, orderId, status);
  const { providerText: _logged, ...neutral } = status;
  return neutral as S;
}

/**
 * JSON over HTTP to a provider, with a timeout; network failures are retryable rail errors. A request that
 * may have reached the provider (a timeout, a dropped connection) has an `unknown` outcome; one whose
 * connection was refused never left.
 */
export async function providerRequest(
  fetchImpl: typeof fetch,
  provider: string,
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: unknown; timeoutMs?: number },
): Promise<{ status: number; body: Record<string, unknown> }> {
  let res: Response;
  try {
    res = await fetchImpl(url, {
      method: init.method,
      headers: { accept: 'application/json', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(init.timeoutMs ?? 15_000),
    });
  } catch (err) {
    const never = (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
    throw new RailError(
      'provider_unavailable',
      never ? `${provider} could not be reached` : `${provider} did not answer`,
      true,
      undefined,
      never ? 'refused' : 'unknown',
      (err as Error).message,
    );
  }
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = text ? JSON.parse(text) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    body = { raw: text.slice(0, 200) };
  }
  return { status: res.status, body };
}

export const str = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/** An access token and when to stop using it (epoch ms). */
export interface ProviderToken {
  value: string;
  expiresAt: number;
}

/**
 * A provider's API behind an OAuth client-credentials token: the token is fetched once, reused until
 * shortly before it expires, and dropped when the provider answers 401 for it, so the next call fetches
 * another. `fetchToken` is the provider's own way of asking for one.
 */
export class ProviderClient {
  private token: ProviderToken | undefined;

  constructor(
    readonly provider: string,
    readonly baseUrl: string,
    private readonly fetchImpl: typeof fetch,
    private readonly fetchToken: (client: ProviderClient) => Promise<ProviderToken>,
  ) {}

  /** A request without the token (the token request itself). */
  request(path: string, init: Parameters<typeof providerRequest>[3]): ReturnType<typeof providerRequest> {
    return providerRequest(this.fetchImpl, this.provider, `${this.baseUrl}${path}`, init);
  }

  async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > Date.now()) return this.token.value;
    try {
      this.token = await this.fetchToken(this);
    } catch (err) {
      // Without a token the request itself never left: whatever happened to the token's, it was not taken.
      if (err instanceof RailError && err.outcome !== 'refused') {
        throw new RailError(err.failureCode, err.message, err.retryable, err.providerCode, 'refused', err.providerText);
      }
      throw err;
    }
    return this.token.value;
  }

  /**
   * A request with the bearer token. A 401 drops the token, unless `keepToken` says the refusal was not
   * the token's (Jenga answers 401 for a bad signature too).
   */
  async authorised(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body?: unknown,
    keepToken?: (res: { status: number; body: Record<string, unknown> }) => boolean,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await this.request(path, { method, headers: { authorization: `Bearer ${await this.accessToken()}`, ...headers }, body });
    if (res.status === 401 && !keepToken?.(res)) this.token = undefined;
    return res;
  }
}
