/**
 * Jaro and Jaro-Winkler string similarity (Winkler 1990), from 0 (nothing in common) to 1 (identical).
 *
 * Jaro counts the characters two strings share within a window of half the longer length (m) and the
 * shared characters that appear in a different order (t, half-transpositions):
 *   jaro = (m / |a| + m / |b| + (m - t) / m) / 3
 * Winkler adds a bonus for a common prefix of up to 4 characters, applied only above a boost threshold
 * of 0.7, because typing errors tend to occur later in a name than its first letters:
 *   jw = jaro + prefix * 0.1 * (1 - jaro)
 */

export const WINKLER_PREFIX_SCALE = 0.1;
export const WINKLER_MAX_PREFIX = 4;
export const WINKLER_BOOST_THRESHOLD = 0.7;

export function jaro(a: string, b: string): number {
  if (a === b) return 1;
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return 0;
  const window = Math.max(0, Math.floor(Math.max(la, lb) / 2) - 1);
  const aMatched = new Uint8Array(la);
  const bMatched = new Uint8Array(lb);
  let matches = 0;
  for (let i = 0; i < la; i++) {
    const from = Math.max(0, i - window);
    const to = Math.min(lb - 1, i + window);
    const ch = a.charCodeAt(i);
    for (let k = from; k <= to; k++) {
      if (bMatched[k] === 0 && b.charCodeAt(k) === ch) {
        aMatched[i] = 1;
        bMatched[k] = 1;
        matches += 1;
        break;
      }
    }
  }
  if (matches === 0) return 0;
  let outOfOrder = 0;
  let k = 0;
  for (let i = 0; i < la; i++) {
    if (aMatched[i] === 0) continue;
    while (bMatched[k] === 0) k += 1;
    if (a.charCodeAt(i) !== b.charCodeAt(k)) outOfOrder += 1;
    k += 1;
  }
  const transpositions = outOfOrder / 2;
  return (matches / la + matches / lb + (matches - transpositions) / matches) / 3;
}

/** Length of the common prefix, up to `max` characters. */
export function commonPrefixLength(a: string, b: string, max = WINKLER_MAX_PREFIX): number {
  const limit = Math.min(max, a.length, b.length);
  let n = 0;
  while (n < limit && a.charCodeAt(n) === b.charCodeAt(n)) n += 1;
  return n;
}

export function jaroWinkler(a: string, b: string): number {
  const j = jaro(a, b);
  if (j <= WINKLER_BOOST_THRESHOLD) return j;
  return j + commonPrefixLength(a, b) * WINKLER_PREFIX_SCALE * (1 - j);
}

/**
 * The highest Jaro-Winkler score two strings can reach when they have `common` characters in common
 * (as multisets) and a common prefix of `prefix` characters: m <= common and t >= 0 bound Jaro from
 * above, and the prefix bonus is `prefix` * 0.1 of what remains (at most 4 * 0.1 when the prefix is not
 * known). Used to skip candidates without computing the score.
 */
export function jaroWinklerUpperBound(lengthA: number, lengthB: number, common: number, prefix = WINKLER_MAX_PREFIX): number {
  if (lengthA === 0 && lengthB === 0) return 1;
  if (lengthA === 0 || lengthB === 0 || common === 0) return 0;
  const m = Math.min(common, lengthA, lengthB);
  const j = (m / lengthA + m / lengthB + 1) / 3;
  return j + Math.min(prefix, WINKLER_MAX_PREFIX) * WINKLER_PREFIX_SCALE * (1 - j);
}
