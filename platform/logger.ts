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

/**
 * A component's logger. Modules take theirs when they load, before the entry point has validated the
 * configuration, so the child is made on first use: a bad setting then stops the process with the config
 * module's message naming the variable, not with a stack trace from an import.
 */
export function componentLogger(component: string): Logger {
  let child: Logger | undefined;
  const target = (): Logger => (child ??= logger().child({ component }));
  return new Proxy({} as Logger, {
    get(_empty, prop) {
      const real = target();
      const value: unknown = Reflect.get(real, prop, real);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(real) : value;
    },
    set(_empty, prop, value: unknown) {
      return Reflect.set(target(), prop, value);
    },
  });
}
