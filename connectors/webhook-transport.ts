import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import type { VettedTarget } from './webhook-targets';

/**
 * POST to a vetted target over node's http/https, connecting only to the addresses that were checked:
 * the socket's `lookup` answers them instead of asking DNS again. The URL's host still names the request
 * (Host header) and, for https, the TLS server name and the certificate check.
 */

/** The socket-level lookup of a vetted target: its checked addresses, never a new resolution. */
export function pinnedLookup(addresses: readonly string[], onLookup?: (hostname: string) => void): LookupFunction {
  const answers = addresses.map((address) => ({ address, family: net.isIP(address) }));
  return (hostname, options, callback) => {
    onLookup?.(hostname);
    const wanted = options.family === 4 || options.family === 6 ? answers.filter((a) => a.family === options.family) : answers;
    const first = wanted[0];
    if (!first) {
      const err: NodeJS.ErrnoException = new Error(`no vetted IPv${String(options.family)} address for ${hostname}`);
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
      return;
    }
    // net.connect asks for every address (`all`) when it races IPv4 and IPv6 (autoSelectFamily).
    if (options.all) (callback as unknown as (err: null, addresses: { address: string; family: number }[]) => void)(null, wanted);
    else callback(null, first.address, first.family);
  };
}

export function postToVettedTarget(
  target: VettedTarget,
  request: { headers: Record<string, string>; body: string; timeoutMs: number },
): Promise<{ statusCode: number }> {
  const { url } = target;
  const client = url.protocol === 'https:' ? https : http;
  const signal = AbortSignal.timeout(request.timeoutMs);
  return new Promise<{ statusCode: number }>((resolve, reject) => {
    const req = client.request(
      {
        method: 'POST',
        protocol: url.protocol,
        hostname: target.host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        lookup: pinnedLookup(target.addresses),
        agent: false, // one connection per delivery: never a pooled socket opened for another name
        signal,
      },
      (res: IncomingMessage) => {
        const statusCode = res.statusCode ?? 0;
        res.resume(); // the answer's body is not read: only its status counts
        res.destroy();
        resolve({ statusCode });
      },
    );
    req.on('error', (err) => reject(signal.aborted ? new Error(`no answer within ${request.timeoutMs} ms`) : err));
    req.end(request.body);
  });
}
