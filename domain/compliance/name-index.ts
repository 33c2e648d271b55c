import { jaro, jaroWinkler, jaroWinklerUpperBound } from './jaro-winkler';
import type { FoldedName } from './transliterate';

/**
 * An in-memory index of normalised names for fuzzy screening. A search scores a name against every
 * indexed name whose Jaro-Winkler score *could* reach the threshold, and skips the rest without losing
 * a match: two strings cannot match more characters than they share, so the character counts of both
 * bound the score from above (see `jaroWinklerUpperBound`). On a blocklist of unrelated names that
 * bound rules out almost every candidate for the cost of a few additions each.
 *
 * Names are indexed folded to Latin (`foldName`): `key` (tokens sorted) is what the score compares,
 * `plain` (tokens in order) is scored too, so a typo in a first letter is still caught, and when either
 * side is written in Arabic script the consonant skeletons are compared as well.
 *
 * The index also finds partial matches, for review rather than a verdict: a name given with initials
 * ("J. K. Mwangi") or without one of the listed names ("John Mwangi" for "John Kamau Mwangi").
 */

export type IndexedName = FoldedName;

export interface NameMatch<T> {
  id: string;
  payload: T;
  score: number;
  dropped: boolean;
  weakest: number;
}

/** How a name matches a listed name only in part. */
export type PartialKind = 'initials' | 'dropped_name';

export interface PartialMatch<T> {
  id: string;
  payload: T;
  kind: PartialKind;
}

const BUCKETS = 64;

function bucketOf(code: number): number {
  if (code >= 97 && code <= 122) return code - 97;
  if (code >= 48 && code <= 57) return 26 + code - 48;
  if (code === 32) return 36;
  // Other letters (accents are folded away before this, other scripts are not) share buckets: merging
  // counts can only raise the bound, never lower it below the true score.
  return 37 + (code % (BUCKETS - 37));
}

function profileOf(text: string): Uint16Array {
  const counts = new Uint16Array(BUCKETS);
  for (let i = 0; i < text.length; i++) counts[bucketOf(text.charCodeAt(i))] += 1;
  return counts;
}

interface Slot<T> extends IndexedName {
  id: string;
  payload: T;
  /** The tokens a partial match is looked up by (see `lookupTokens`). */
  lookup: string[];
  /** Latin and skeleton tokens, for the vocabularies. */
  tokens: string[];
  skeletons: string[];
  /** Prefix sums of the token lengths in ascending order (see `pairWeightFloor`). */
  lengths: Int32Array;
  skeletonLengths: Int32Array;
  /** Character counts of the sorted key and of the skeleton, for the bound of a scan. */
  profile: Uint16Array;
  skeletonProfile: Uint16Array;
}

/** Prefix sums of the lengths of `tokens` sorted ascending: [0, shortest, shortest two, …]. */
function lengthPrefix(tokens: string[]): Int32Array {
  const sorted = tokens.map((t) => t.length).sort((a, b) => a - b);
  const prefix = new Int32Array(sorted.length + 1);
  for (let i = 0; i < sorted.length; i++) prefix[i + 1] = prefix[i] + sorted[i];
  return prefix;
}

/**
 * The least total weight the token pairs of two names can have: any pairing pairs min(n, m) tokens of
 * each side, at least the shortest ones.
 */
function pairWeightFloor(a: Int32Array, b: Int32Array): number {
  const pairs = Math.min(a.length, b.length) - 1;
  return a[pairs] + b[pairs];
}

/** A seed token pair is at least this close (Jaro-Winkler) when the search threshold allows it. */
const SEED_SIMILARITY = 0.8;

/**
 * The distinct tokens of the indexed names, each with the names that have it. A search first finds the
 * tokens close to the query's (a scan of the vocabulary, far smaller than the list, with the same
 * character bound), then weighs the names that have them.
 */
class Vocabulary<S> {
  private readonly tokens = new Map<string, { profile: Uint16Array; slots: Set<S> }>();

  get size(): number {
    return this.tokens.size;
  }

  add(token: string, slot: S): void {
    let entry = this.tokens.get(token);
    if (!entry) this.tokens.set(token, (entry = { profile: profileOf(token), slots: new Set() }));
    entry.slots.add(slot);
  }

  delete(token: string, slot: S): void {
    const entry = this.tokens.get(token);
    entry?.slots.delete(slot);
    if (entry?.slots.size === 0) this.tokens.delete(token);
  }

  clear(): void {
    this.tokens.clear();
  }

  /**
   * For each name that has a token at least `similarity` close to one of `query`'s: an upper bound of the
   * weight (the two tokens' lengths) of its pairs that close.
   */
  seeds(query: string[], similarity: number, into: Map<S, number>): void {
    for (const q of query) {
      const bound = boundOf(q);
      for (const [token, { profile, slots }] of this.tokens) {
        if (bound(token.length, profile) < similarity) continue;
        if (token !== q && jaroWinkler(q, token) < similarity) continue;
        const weight = q.length + token.length;
        for (const slot of slots) into.set(slot, (into.get(slot) ?? 0) + weight);
      }
    }
  }
}

/** The whole-name score of two names, and whether it came from the Latin forms or the skeletons. */
function wholeScore(a: IndexedName, b: IndexedName): { score: number; bySkeleton: boolean } {
  let score = jaroWinkler(a.key, b.key);
  if (score === 1) return { score, bySkeleton: false };
  if (a.plain !== a.key || b.plain !== b.key) score = Math.max(score, jaroWinkler(a.plain, b.plain));
  if ((a.abjad || b.abjad) && a.skeleton !== '' && b.skeleton !== '') {
    const skeleton = jaroWinkler(a.skeleton, b.skeleton);
    if (skeleton > score) return { score: skeleton, bySkeleton: true };
  }
  return { score, bySkeleton: false };
}

/** Tokens up to this long that differ make a weak pair (see `compareNames`). */
const SHORT_TOKEN = 2;

export interface NameComparison {
  score: number;
  /** The listed name has a name (of two letters or more) the screened one lacks: at most a review. */
  dropped: boolean;
  /** The lowest score of a pair of tokens. */
  weakest: number;
}

/**
 * Compare two names: the whole-name score (Jaro-Winkler of the token-sorted forms, of the original order
 * if higher, and of the consonant skeletons when either is in Arabic script), held down by a token-level
 * score. Tokens are paired best first; the token score is the length-weighted mean of the pairs' scores,
 * so "Ma Guiying" against "Wang Guiying", which share a long given name and nothing else, falls well
 * below "Li Lijuan" against "Lin Lijuan". A listed token left unpaired (and not merged into a paired
 * token, as "rahman" in "abdulrahman") marks the match as `dropped`.
 */
export function compareNames(query: IndexedName, entry: IndexedName, atLeast = 0): NameComparison {
  const whole = wholeScore(query, entry);
  if (whole.score === 1) return { score: 1, dropped: false, weakest: 1 };
  // The score is at most the whole-name score: below `atLeast` already, the tokens need not be paired.
  if (whole.score < atLeast) return { score: whole.score, dropped: false, weakest: 0 };
  const q = tokensOf(query, whole.bySkeleton);
  const e = tokensOf(entry, whole.bySkeleton);
  const pairs: { i: number; k: number; score: number }[] = [];
  for (let i = 0; i < q.length; i++) for (let k = 0; k < e.length; k++) pairs.push({ i, k, score: jaroWinkler(q[i], e[k]) });
  pairs.sort((x, y) => y.score - x.score);
  const qPaired = new Int32Array(q.length).fill(-1);
  const ePaired = new Int32Array(e.length).fill(-1);
  let weighted = 0;
  let weights = 0;
  let weakest = 1;
  for (const { i, k, score } of pairs) {
    if (qPaired[i] >= 0 || ePaired[k] >= 0) continue;
    qPaired[i] = k;
    ePaired[k] = i;
    // A short token (a surname such as Li, Zhang, Han) that differs at all is a different name as often
    // as it is a typo: the pair counts as weak, so the match is reviewed rather than blocked.
    // The weakest pair is judged by Jaro, without Winkler's bonus for a common prefix: "Xiaodong" and
    // "Xiaoping" share four letters and are different names.
    const short = Math.min(q[i].length, e[k].length) <= SHORT_TOKEN && score < 1;
    weakest = Math.min(weakest, short ? 0 : score === 1 ? 1 : jaro(q[i], e[k]));
    const weight = q[i].length + e[k].length;
    weighted += score * weight;
    weights += weight;
  }
  // A listed token is dropped unless it is merged into a paired token ("abdulrahman" holds "abdel" and
  // "rahman"). Initials do not count, except among skeletons, where one letter is a whole name (Ali, "l").
  const merged = (token: string) =>
    q.some((other, i) => qPaired[i] >= 0 && other.length >= e[qPaired[i]].length + token.length && other.includes(token));
  const dropped = e.some((token, k) => ePaired[k] < 0 && (whole.bySkeleton || token.length >= 2) && !merged(token));
  const tokenScore = weights === 0 ? 0 : weighted / weights;
  return { score: Math.min(whole.score, tokenScore), dropped, weakest };
}

/** The score of two names (see `compareNames`). */
export const nameScore = (a: IndexedName, b: IndexedName): number => compareNames(a, b).score;

/** Compared token by token: the Latin tokens, or the skeletons when either side is in Arabic script. */
const tokensOf = (name: IndexedName, bySkeleton: boolean): string[] =>
  (bySkeleton ? name.skeleton : name.plain).split(' ').filter((t) => t !== '');

/** Full tokens of at least 3 letters (skeletons of at least 2, marked `~`): what a partial match must share. */
function lookupTokens(name: IndexedName): string[] {
  const plain = tokensOf(name, false).filter((t) => t.length >= 3);
  const skeletons = tokensOf(name, true)
    .filter((t) => t.length >= 2)
    .map((t) => `~${t}`);
  return [...new Set([...plain, ...skeletons])];
}

/**
 * Whether `query` names the listed `entry` in part: every token of the query is a token of the entry,
 * or the initial of one, each entry token used once; at least two query tokens, at least one of them
 * a whole name; and either an initial stands for a name, or the entry has names the query does not.
 */
export function partialMatch(query: IndexedName, entry: IndexedName): PartialKind | null {
  const bySkeleton = query.abjad || entry.abjad;
  const q = tokensOf(query, bySkeleton);
  const e = tokensOf(entry, bySkeleton);
  if (q.length < 2 || q.length > e.length) return null;
  const used = new Uint8Array(e.length);
  const initials: string[] = [];
  let whole = 0;
  for (const token of q) {
    if (token.length === 1) {
      initials.push(token);
      continue;
    }
    const at = e.findIndex((t, i) => used[i] === 0 && t === token);
    if (at < 0) return null;
    used[at] = 1;
    whole += 1;
  }
  if (whole === 0) return null;
  for (const initial of initials) {
    const at = e.findIndex((t, i) => used[i] === 0 && t.length > 1 && t[0] === initial);
    if (at < 0) return null;
    used[at] = 1;
  }
  if (initials.length > 0) return 'initials';
  return used.includes(0) ? 'dropped_name' : null;
}

export class NameIndex<T> {
  private readonly slots: Slot<T>[] = [];
  private readonly positions = new Map<string, number>();
  /** Lookup token → the ids of the slots that have it. */
  private readonly byToken = new Map<string, Set<string>>();
  private readonly latinVocabulary = new Vocabulary<Slot<T>>();
  private readonly skeletonVocabulary = new Vocabulary<Slot<T>>();

  get size(): number {
    return this.slots.length;
  }

  upsert(id: string, name: IndexedName, payload: T): void {
    const slot: Slot<T> = {
      id,
      key: name.key,
      plain: name.plain,
      skeleton: name.skeleton,
      abjad: name.abjad,
      payload,
      lookup: lookupTokens(name),
      tokens: tokensOf(name, false),
      skeletons: tokensOf(name, true),
      lengths: lengthPrefix(tokensOf(name, false)),
      skeletonLengths: lengthPrefix(tokensOf(name, true)),
      profile: profileOf(name.key),
      skeletonProfile: profileOf(name.skeleton),
    };
    const at = this.positions.get(id);
    if (at === undefined) {
      this.positions.set(id, this.slots.length);
      this.slots.push(slot);
    } else {
      this.unlink(this.slots[at]);
      this.slots[at] = slot;
    }
    for (const token of slot.lookup) {
      let ids = this.byToken.get(token);
      if (!ids) this.byToken.set(token, (ids = new Set()));
      ids.add(id);
    }
    for (const token of slot.tokens) this.latinVocabulary.add(token, slot);
    for (const token of slot.skeletons) this.skeletonVocabulary.add(token, slot);
  }

  private unlink(slot: Slot<T>): void {
    for (const token of slot.lookup) {
      const ids = this.byToken.get(token);
      ids?.delete(slot.id);
      if (ids?.size === 0) this.byToken.delete(token);
    }
    for (const token of slot.tokens) this.latinVocabulary.delete(token, slot);
    for (const token of slot.skeletons) this.skeletonVocabulary.delete(token, slot);
  }

  remove(id: string): void {
    const at = this.positions.get(id);
    if (at === undefined) return;
    this.unlink(this.slots[at]);
    const last = this.slots.pop()!;
    this.positions.delete(id);
    if (at < this.slots.length) {
      this.slots[at] = last;
      this.positions.set(last.id, at);
    }
  }

  clear(): void {
    this.slots.length = 0;
    this.positions.clear();
    this.byToken.clear();
    this.latinVocabulary.clear();
    this.skeletonVocabulary.clear();
  }

  /**
   * Every indexed name scoring at least `threshold` against `name` (and accepted), best first. The
   * candidates come from one of two filters, both lossless, whichever is cheaper for this list: a scan
   * of every name with the character bound of its whole-name score (`scanned`), or the token vocabulary.
   *
   * The vocabulary, without scanning the list: a name's score is at most its token score, the length-weighted mean of
   * its token pairs' scores. If the pairs at least θ close (θ = SEED_SIMILARITY) weigh W_close of the
   * total W, the mean is below W_close/W + θ (1 - W_close/W); reaching `threshold` needs
   * W_close > W (threshold - θ) / (1 - θ). The vocabularies give, for every name with a token θ-close to
   * one of the query's, an upper bound of W_close; W is at least `pairWeightFloor`. Names that cannot pass
   * are never scored, and no name that could pass is left out (the unit tests compare with a full scan).
   * The same holds in the skeletons' space, for pairs where either name is in Arabic script.
   */
  search(name: IndexedName, threshold: number, accept: (payload: T) => boolean = () => true): NameMatch<T>[] {
    const query = tokensOf(name, false);
    const skeletons = tokensOf(name, true);
    // The vocabulary pays off when it is small beside the list (names made of common tokens); a list of
    // diverse names is cheaper to scan whole, with the character bound. Both leave out no match.
    const vocabularyCost = this.latinVocabulary.size * query.length + this.skeletonVocabulary.size * skeletons.length;
    const candidates = vocabularyCost < this.slots.length ? this.seeded(name, query, skeletons, threshold) : this.scanned(name, threshold);
    const matches: NameMatch<T>[] = [];
    for (const slot of candidates) {
      if (!accept(slot.payload)) continue;
      const { score, dropped, weakest } = compareNames(name, slot, threshold);
      if (score >= threshold) matches.push({ id: slot.id, payload: slot.payload, score, dropped, weakest });
    }
    return matches.sort((x, y) => y.score - x.score);
  }

  /** Every name whose whole-name score could reach `threshold`: its characters in common bound it. */
  private scanned(name: IndexedName, threshold: number): Slot<T>[] {
    const keyBound = boundOf(name.key);
    const skeletonBound = name.skeleton === '' ? null : boundOf(name.skeleton);
    const candidates: Slot<T>[] = [];
    for (const slot of this.slots) {
      if (keyBound(slot.key.length, slot.profile) < threshold) {
        // Below the bound on the Latin forms: only the skeletons of an Arabic-script pair can still match.
        const bySkeleton = (name.abjad || slot.abjad) && skeletonBound !== null && slot.skeleton !== '';
        if (!bySkeleton || skeletonBound(slot.skeleton.length, slot.skeletonProfile) < threshold) continue;
      }
      candidates.push(slot);
    }
    return candidates;
  }

  /** Every name the token weights let through (see `search`). */
  private seeded(name: IndexedName, query: string[], skeletons: string[], threshold: number): Set<Slot<T>> {
    const similarity = Math.min(SEED_SIMILARITY, threshold - 0.05);
    const share = (threshold - similarity) / (1 - similarity);
    const latinSeeds = new Map<Slot<T>, number>();
    const skeletonSeeds = new Map<Slot<T>, number>();
    this.latinVocabulary.seeds(query, similarity, latinSeeds);
    if (skeletons.length > 0) this.skeletonVocabulary.seeds(skeletons, similarity, skeletonSeeds);
    const queryLengths = lengthPrefix(query);
    const skeletonLengths = lengthPrefix(skeletons);

    const candidates = new Set<Slot<T>>();
    for (const [slot, weight] of latinSeeds) {
      if (weight > share * pairWeightFloor(queryLengths, slot.lengths)) candidates.add(slot);
    }
    for (const [slot, weight] of skeletonSeeds) {
      if (!name.abjad && !slot.abjad) continue;
      if (weight > share * pairWeightFloor(skeletonLengths, slot.skeletonLengths)) candidates.add(slot);
    }
    return candidates;
  }

  /** Every indexed name `name` matches in part (see `partialMatch`), and accepted. */
  partial(name: IndexedName, accept: (payload: T) => boolean = () => true): PartialMatch<T>[] {
    // Every whole token of the query is a token of the entry: the entry is in every one of their lookup
    // sets (Latin tokens, or skeletons), so the smallest set is enough to look through.
    const candidates = new Set<string>();
    const lookups = lookupTokens(name);
    for (const marked of [false, true]) {
      const sets = lookups.filter((t) => t.startsWith('~') === marked).map((t) => this.byToken.get(t) ?? new Set<string>());
      if (sets.length === 0) continue;
      const smallest = sets.reduce((a, b) => (b.size < a.size ? b : a));
      for (const id of smallest) candidates.add(id);
    }
    const matches: PartialMatch<T>[] = [];
    for (const id of candidates) {
      const slot = this.slots[this.positions.get(id)!];
      const kind = partialMatch(name, slot);
      if (kind && accept(slot.payload)) matches.push({ id, payload: slot.payload, kind });
    }
    return matches;
  }
}

/** The upper bound of a score against `text`, from the other side's length and character counts. */
function boundOf(text: string): (length: number, counts: Uint16Array) => number {
  const query = profileOf(text);
  const used: number[] = [];
  for (let b = 0; b < BUCKETS; b++) if (query[b] > 0) used.push(b);
  return (length, counts) => {
    let common = 0;
    for (const b of used) common += Math.min(query[b], counts[b]);
    return jaroWinklerUpperBound(text.length, length, common);
  };
}
