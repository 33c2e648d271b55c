/** Waiting for something to become true, with a deadline that names what was awaited. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Ask `probe` every `everyMs` until it answers something other than undefined, and return that. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * The API quota's windows are whole minutes of the clock (docs/conventions.md#rate-limits): a test that counts
 * requests against it starts at least 20 s before a minute ends, so that what it counts never straddles two.
 */
export async function awayFromQuotaWindowEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await sleep(left + 100);
}
