import { until as untilEvery } from '../../support/wait';

export { sleep } from '../../support/wait';

/** `until` at the fault suite's pace: it polls whole processes, every 100 ms unless told. */
export const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 100): Promise<T> =>
  untilEvery(what, probe, timeoutMs, everyMs);

/** A small seeded generator (mulberry32): the same seed draws the same fault schedule. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
