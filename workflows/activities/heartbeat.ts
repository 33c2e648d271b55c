import { Context } from '@temporalio/activity';

/** How often a rail call reports that its worker is alive; RAIL_CALL's heartbeat timeout is a few of these. */
export const RAIL_HEARTBEAT_EVERY_MS = 1_000;

/**
 * Keep an activity's heartbeat going while `work` runs, so that Temporal notices a dead worker within the
 * activity's heartbeat timeout instead of its whole start-to-close timeout. The timeout counts from the
 * activity's start, so the first beat is owed after one interval, not at once: a call shorter than that (most
 * submissions) sends no heartbeat request at all. Outside an activity (a direct call from a test or a script)
 * the work simply runs.
 */
export async function heartbeating<T>(detail: string, work: () => Promise<T>, everyMs = RAIL_HEARTBEAT_EVERY_MS): Promise<T> {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return work();
  }
  const timer = setInterval(() => ctx.heartbeat(detail), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
