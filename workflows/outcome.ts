import { ActivityFailure, ApplicationFailure, condition } from '@temporalio/workflow';
import type { RailOutcomeSignal } from './shared';

/** What a status poll answers: the rail's definite outcome, or still pending. */
export type PolledStatus = RailOutcomeSignal | { state: 'pending'; reference: string };

export interface Failure {
  failureCode: string;
  reason: string;
}

/** The application failure an activity call failed with (the activity's own failure, unwrapped). */
function applicationCause(err: unknown): ApplicationFailure | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/** The application failure of this type (see ./failure-types) an activity call failed with, if it did. */
export function failureOfType(err: unknown, type: string): ApplicationFailure | undefined {
  const cause = applicationCause(err);
  return cause?.type === type ? cause : undefined;
}

/** A failed rail call as the order's (or deposit's) failure: the code the activity attached, else `rail_error`. */
export function failureOf(err: unknown): Failure {
  const cause = applicationCause(err);
  if (cause) {
    const [details] = (cause.details ?? []) as { failureCode?: string }[];
    return { failureCode: details?.failureCode ?? 'rail_error', reason: cause.message };
  }
  return { failureCode: 'rail_error', reason: err instanceof Error ? err.message : 'the rail failed' };
}

export interface OutcomeWait {
  /** The rail's callback, once signalled. */
  signalled: () => RailOutcomeSignal | undefined;
  /** Ask the rail for its status. */
  poll: () => Promise<PolledStatus>;
  /** Workflow time (epoch ms) of the settle deadline. */
  deadline: number;
  /** The first wait before polling; it doubles after each pending answer, up to `maxIntervalMs`. */
  waitMs: number;
  maxIntervalMs: number;
  /** The deadline has passed already (a run that continued as new): polls are no longer bounded by it. */
  pastDeadline?: boolean;
  /**
   * The deadline passed with the rail still pending: an outcome ends the wait with it; none keeps asking,
   * at the growing interval, for as long as it takes. Called once.
   */
  onDeadline: (reference: string) => Promise<RailOutcomeSignal | undefined>;
  /** After each pending poll, with the next wait: where a long wait may continue as new. */
  afterPending?: (next: { waitMs: number; pastDeadline: boolean }) => Promise<void>;
}

/**
 * The rail's callback (signal) or, when it is late, its status polled with a growing interval (capped). A
 * callback that arrives while a poll is in flight wins over the poll's answer.
 */
export async function awaitRailOutcome(w: OutcomeWait): Promise<RailOutcomeSignal> {
  let wait = w.waitMs;
  let pastDeadline = w.pastDeadline ?? false;
  for (;;) {
    // A callback already in ends the wait without a timer.
    const inAlready = w.signalled();
    if (inAlready) return inAlready;
    const timeout = pastDeadline ? wait : Math.max(1, Math.min(wait, w.deadline - Date.now()));
    await condition(() => w.signalled() !== undefined, timeout);
    const early = w.signalled();
    if (early) return early;
    const polled = await w.poll();
    if (polled.state !== 'pending') return w.signalled() ?? polled;
    if (!pastDeadline && Date.now() >= w.deadline) {
      const ended = await w.onDeadline(polled.reference);
      if (ended) return ended;
      pastDeadline = true;
    }
    wait = Math.min(wait * 2, w.maxIntervalMs);
    await w.afterPending?.({ waitMs: wait, pastDeadline });
  }
}
