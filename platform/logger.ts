import pino, { type Logger } from 'pino';
import { config } from './config';

let root: Logger | undefined;

/** The process logger: structured JSON lines, one per event, with a `component` field. */
export function logger(): Logger {
  root ??= pino({
    level: config().logLevel,
    base: { service: 'paygate' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'password', '*.password', 'access_token'], censor: '[redacted]' },
  });
  return root;
}

export function componentLogger(component: string): Logger {
  return logger().child({ component });
}
