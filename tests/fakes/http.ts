import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A tiny HTTP server on 127.0.0.1 and an ephemeral port, for the fakes of outside systems. */
export interface FakeServer {
  url: string;
  close(): Promise<void>;
}

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** The query string as sent, without the `?`. */
  rawQuery: string;
  headers: IncomingMessage['headers'];
  rawBody: string;
  json<T>(): T;
}

/** A fake's answer; `drop` closes the connection without answering, as a lost answer or a timeout looks to the caller. */
export type FakeHandler = (
  req: FakeRequest,
) => Promise<{ status: number; body?: unknown; headers?: Record<string, string>; drop?: boolean }>;

/**
 * Failures a provider fake can be switched into by a test: the next transfer requests are executed and then
 * answered with each fault queued (`drop`: the connection is closed, the answer lost; `5xx`: a server
 * error), and with `refuseDuplicates` a repeated reference is refused as a duplicate (else it is answered as
 * the first was).
 */
export interface FakeFaults {
  afterExecuting: ('drop' | '5xx')[];
  refuseDuplicates: boolean;
}

export const noFaults = (): FakeFaults => ({ afterExecuting: [], refuseDuplicates: false });

/**
 * A test's hold on a provider's answer: when set, a new transfer is executed and its answer (and any result
 * the provider posts about it) held until the returned promise settles, so that a test decides what happens
 * to the caller in between (a worker killed while the provider has the transfer). Called with the
 * reference the transfer was sent under.
 */
export type HoldAnswer = ((reference: string) => Promise<void>) | undefined;

export async function startFakeServer(handler: FakeHandler): Promise<FakeServer> {
  const server: Server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        rawQuery: url.search.replace(/^\?/, ''),
        headers: req.headers,
        rawBody,
        json: <T>() => (rawBody ? JSON.parse(rawBody) : {}) as T,
      };
      handler(request).then(
        (answer) => {
          if (answer.drop) {
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
        },
        (err: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: (err as Error).message }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
