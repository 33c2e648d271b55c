import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { redactUrl } from '../../platform/log-redaction';
import { componentLogger } from '../../platform/logger';
import { routeOf } from '../metrics';

declare module 'http' {
  interface IncomingMessage {
    /** The request's logger: every line it writes carries the request id, method and (redacted) URL. */
    log: Logger;
  }
}

const log = componentLogger('http');

/** What every line about a request says about it: the id, the method, the URL as the log may show it. */
const requestFields = (req: Request) => ({ id: (req as { id?: string }).id, method: req.method, url: redactUrl(req.originalUrl) });

/**
 * One access-log line per request, when it ends: `{ req: { id, method, url, route }, res: { statusCode },
 * responseTime }` at `info` (2xx/3xx), `warn` (4xx) or `error` (5xx), or `request aborted` when the client
 * went away first. Built by hand rather than by pino-http, whose per-request child logger serialised (and
 * redacted) every request's headers even when the line was not written: 3 % of the api's CPU on a status
 * read (bench/PROFILE.md). The headers and the peer's address are not in the line; the request id links it
 * to everything else. `req.log` is made on first use, with the same request fields.
 */
export function accessLog(options: { ignore: (req: Request) => boolean }): RequestHandler {
  return (req, res, next) => {
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', {
      configurable: true,
      enumerable: false,
      get: () => (child ??= log.child({ req: requestFields(req) })),
    });
    if (options.ignore(req)) return next();
    const started = performance.now();
    const done = (aborted: boolean) => {
      const status = res.statusCode;
      const level = aborted ? 'warn' : status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      if (!log.isLevelEnabled(level)) return;
      log[level](
        {
          req: { ...requestFields(req), route: routeOf(req, res) },
          res: { statusCode: status },
          responseTime: Math.round(performance.now() - started),
        },
        aborted ? 'request aborted' : 'request completed',
      );
    };
    res.once('finish', () => done(false));
    res.once('close', () => {
      if (!res.writableFinished) done(true);
    });
    next();
  };
}
