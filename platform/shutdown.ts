import type { Logger } from 'pino';

type Step = { name: string; run: () => Promise<unknown> };

/**
 * Graceful shutdown: on SIGTERM or SIGINT run the registered steps in order (stop taking work, drain,
 * close connections), then exit. A second signal, or a step hanging past the deadline, forces the exit.
 */
export function onShutdown(log: Logger, steps: Step[], deadlineMs = 20_000): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      log.error('shutdown deadline passed: exiting');
      process.exit(1);
    }, deadlineMs);
    timer.unref();
    let code = 0;
    for (const step of steps) {
      try {
        await step.run();
        log.debug({ step: step.name }, 'shutdown step done');
      } catch (err) {
        code = 1;
        log.error({ step: step.name, err }, 'shutdown step failed');
      }
    }
    log.info('stopped');
    process.exit(code);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
