/**
 * A small deterministic generator (a linear congruential one), so that property checks, generated name lists
 * and the benchmarks draw the same values on every run.
 */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}
