import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import { RAIL_OUTCOME_UNKNOWN, RAIL_REJECTED } from './failure-types';

/**
 * Named timeout and retry presets for every activity the workflows run.
 *
 * `LOCAL_DB_STEP`: quick, idempotent writes to Paygate's own Postgres, run as local activities — they take
 * milliseconds and are keyed on a business id, so re-running one after a worker crash is harmless.
 * `RAIL_CALL`: calls to the outside world through the task queue; `RailRejected` and `RailOutcomeUnknown` failures are final. The
 * activity heartbeats every second while the provider answers (workflows/activities/heartbeat.ts), so a
 * worker that dies mid-call is noticed after `heartbeatTimeout` and the call retried on another worker within
 * seconds; the start-to-close timeout only bounds a provider that is slow to answer. (The SDK sends at most
 * one heartbeat per 80% of the timeout: 10 s leaves a loaded worker 2 s of slack before a live call would be
 * retried beside itself.)
 */
export const LOCAL_DB_STEP = {
  startToCloseTimeout: '10s',
  localRetryThreshold: '10s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 20 },
} satisfies LocalActivityOptions;

export const RAIL_CALL = {
  startToCloseTimeout: '30s',
  heartbeatTimeout: '10s',
  retry: {
    initialInterval: '250ms',
    backoffCoefficient: 2,
    maximumInterval: '10s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [RAIL_REJECTED, RAIL_OUTCOME_UNKNOWN],
  },
} satisfies ActivityOptions;

/** A preset whose failures of the named error types are final. */
export function withNonRetryable<T extends ActivityOptions | LocalActivityOptions>(preset: T, types: string[]): T {
  const retry = preset.retry ?? {};
  return { ...preset, retry: { ...retry, nonRetryableErrorTypes: [...(retry.nonRetryableErrorTypes ?? []), ...types] } };
}
