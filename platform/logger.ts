import pino, { type Logger } from 'pino';
import { config } from './config';
import { REDACT_PATHS, REDACTED } from './log-redaction';

let root: Logger | undefined;

/** The process logger: structured JSON lines, one per event, with a `component` field. */
export function logger(): Logger {
  root ??= pino({
    level: config().logLevel,
    base: { service: 'paygate' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
  });
  return root;
}

export function componentLogger(component: string): Logger {
  return logger().child({ component });
}
