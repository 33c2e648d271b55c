import { commonPrefixLength, jaro, jaroWinkler, jaroWinklerUpperBound } from './jaro-winkler';
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

/**
 * The character counts of many strings, one column per bucket (the count of bucket b in string i is
 * `columns[b][i]`), so a scan adds up the few buckets a query uses over consecutive memory.
 */
class Profiles {
  private columns: Uint16Array[] = Array.from({ length: BUCKETS }, () => new Uint16Array(1024));
  /** The length of string i. */
  lengths = new Int32Array(1024);
  /** The longest string's length (or more, after a removal). */
  longest = 0;

  set(at: number, text: string): void {
    if (at >= this.lengths.length) {
      const capacity = Math.max(this.lengths.length * 2, at + 1);
      this.columns = this.columns.map((column) => {
        const grown = new Uint16Array(capacity);
        grown.set(column);
        return grown;
      });
      const lengths = new Int32Array(capacity);
      lengths.set(this.lengths);
      this.lengths = lengths;
    }
    const counts = profileOf(text);
    for (let b = 0; b < BUCKETS; b++) this.columns[b][at] = counts[b];
    this.lengths[at] = text.length;
    this.longest = Math.max(this.longest, text.length);
  }

  move(from: number, to: number): void {
    for (const column of this.columns) column[to] = column[from];
    this.lengths[to] = this.lengths[from];
  }

  /** How many characters string `at` shares with the profile `counts`, over the buckets `used` of it. */
  common(at: number, counts: Uint16Array, used: Int32Array): number {
    let common = 0;
    for (let u = 0; u < used.length; u++) {
      const b = used[u];
      const have = this.columns[b][at];
      common += have < counts[b] ? have : counts[b];
    }
    return common;
  }

  /** The same for the first `count` strings at once, into `into`. */
  commonOfAll(count: number, counts: Uint16Array, used: Int32Array, into: Uint16Array): void {
    into.fill(0, 0, count);
    for (let u = 0; u < used.length; u++) {
      const column = this.columns[used[u]];
      const limit = counts[used[u]];
      for (let i = 0; i < count; i++) {
        const have = column[i];
        into[i] += have < limit ? have : limit;
      }
    }
  }
}

/** A folded name split once into the tokens it is compared by. */
export interface TokenisedName extends IndexedName {
  /** Latin tokens, in their order. */
  tokens: string[];
  /** Consonant skeletons of the tokens, sorted. */
  skeletons: string[];
}

const splitTokens = (text: string): string[] => text.split(' ').filter((t) => t !== '');

/**
 * Split a folded name into its tokens, once: searching and comparing take the tokens as they are, and a
 * name already split is taken as it is.
 */
export const tokenise = (name: IndexedName | TokenisedName): TokenisedName =>
  'tokens' in name
    ? name
    : {
        key: name.key,
        plain: name.plain,
        skeleton: name.skeleton,
        abjad: name.abjad,
        tokens: splitTokens(name.plain),
        skeletons: splitTokens(name.skeleton),
      };

interface Slot<T> extends TokenisedName {
  id: string;
  payload: T;
  /** Where the slot is in the index's list, for the scratch arrays of a search. */
  at: number;
  /** The tokens a partial match is looked up by (see `lookupTokens`). */
  lookup: string[];
}

/** Prefix sums of the lengths of `tokens` sorted ascending: [0, shortest, shortest two, …]. */
function lengthPrefix(tokens: string[]): Int32Array {
  const sorted = tokens.map((t) => t.length).sort((a, b) => a - b);
  const prefix = new Int32Array(sorted.length + 1);
  for (let i = 0; i < sorted.length; i++) prefix[i + 1] = prefix[i] + sorted[i];
  return prefix;
}

/** A seed token pair is at least this close (Jaro-Winkler) when the search threshold allows it. */
const SEED_SIMILARITY = 0.8;
const seedSimilarity = (threshold: number): number => Math.min(SEED_SIMILARITY, threshold - 0.05);

/** How many query tokens' close words a vocabulary remembers (it forgets them all when full). */
const REMEMBERED_TOKENS = 5000;

interface CloseWord {
  word: string;
  score: number;
  /** Where the names that have the word are: the vocabulary's own list, so it stays current as names come and go. */
  slots: readonly number[];
}

/**
 * The distinct tokens of the indexed names, each with the names that have it. A search finds the tokens
 * close to the query's by a scan of the vocabulary (far smaller than the list when names share tokens),
 * with the character bound over columns of character counts, then weighs the names that have them.
 *
 * The words close to a query token are remembered until the set of words changes: names repeat their
 * given names, patronymics and particles, so most tokens of a screened name were screened before.
 */
class Vocabulary {
  private readonly remembered = new Map<string, { similarity: number; close: CloseWord[] }>();
  private readonly words: string[] = [];
  /**
   * Where the names that have word i are in the index (once each: a name's words are added one after
   * another), as small integers, so a search adds up weights without visiting the names.
   */
  private readonly postings: number[][] = [];
  private readonly positions = new Map<string, number>();
  private readonly profiles = new Profiles();

  get size(): number {
    return this.words.length;
  }

  add(token: string, slot: number): void {
    let at = this.positions.get(token);
    if (at === undefined) {
      at = this.words.length;
      this.positions.set(token, at);
      this.words.push(token);
      this.postings.push([]);
      this.profiles.set(at, token);
      this.remembered.clear();
    }
    const posting = this.postings[at];
    if (posting[posting.length - 1] !== slot) posting.push(slot);
  }

  delete(token: string, slot: number): void {
    const at = this.positions.get(token);
    if (at === undefined) return;
    const posting = this.postings[at];
    const index = posting.indexOf(slot);
    if (index >= 0) {
      posting[index] = posting[posting.length - 1];
      posting.pop();
    }
    if (posting.length > 0) return;
    const last = this.words.length - 1;
    if (at !== last) {
      this.words[at] = this.words[last];
      this.postings[at] = this.postings[last];
      this.profiles.move(last, at);
      this.positions.set(this.words[at], at);
    }
    this.words.pop();
    this.postings.pop();
    this.positions.delete(token);
    this.remembered.clear();
  }

  /** A name moved in the index, from `from` to `to`: where its word's list says it is. */
  renumber(token: string, from: number, to: number): void {
    const at = this.positions.get(token);
    if (at === undefined) return;
    const posting = this.postings[at];
    const index = posting.indexOf(from);
    if (index >= 0) posting[index] = to;
  }

  clear(): void {
    this.words.length = 0;
    this.postings.length = 0;
    this.positions.clear();
    this.remembered.clear();
  }

  /**
   * What finding the names with a word close to `query` costs, in names or words visited: the names
   * its remembered close words have, or a scan of every word.
   */
  costOf(query: string, similarity: number): number {
    const known = this.remembered.get(query);
    if (known?.similarity !== similarity) return this.words.length;
    let names = 0;
    for (const { slots } of known.close) names += slots.length;
    return names;
  }

  /** Every word at least `similarity` close to `query` (Jaro-Winkler), with its score and the names that have it. */
  close(query: string, similarity: number): readonly CloseWord[] {
    const known = this.remembered.get(query);
    if (known?.similarity === similarity) return known.close;
    const close = this.scan(query, similarity);
    if (this.remembered.size >= REMEMBERED_TOKENS) this.remembered.clear();
    this.remembered.set(query, { similarity, close });
    return close;
  }

  private scan(query: string, similarity: number): CloseWord[] {
    const counts = profileOf(query);
    const used = usedBuckets(counts);
    const words = this.words;
    const lengths = this.profiles.lengths;
    // By the other word's length: the fewest characters in common that can reach `similarity` (with
    // the longest prefix bonus), so most words are ruled out by one comparison of integers.
    const fewest = new Int32Array(this.profiles.longest + 1);
    for (let length = 0; length < fewest.length; length++) {
      let needed = 1;
      while (needed <= query.length && jaroWinklerUpperBound(query.length, length, needed) < similarity) needed += 1;
      fewest[length] = needed;
    }
    const commons = scratch(words.length);
    this.profiles.commonOfAll(words.length, counts, used, commons);
    const close: CloseWord[] = [];
    for (let v = 0; v < words.length; v++) {
      const common = commons[v];
      if (common < fewest[lengths[v]]) continue;
      const word = words[v];
      if (jaroWinklerUpperBound(query.length, word.length, common, commonPrefixLength(query, word)) < similarity) continue;
      const score = word === query ? 1 : jaroWinkler(query, word);
      if (score >= similarity) close.push({ word, score, slots: this.postings[v] });
    }
    return close;
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
export const compareNames = (query: IndexedName, entry: IndexedName, atLeast = 0): NameComparison =>
  compareTokenised(tokenise(query), tokenise(entry), atLeast);

function compareTokenised(query: TokenisedName, entry: TokenisedName, atLeast: number): NameComparison {
  const whole = wholeScore(query, entry);
  if (whole.score === 1) return { score: 1, dropped: false, weakest: 1 };
  // The score is at most the whole-name score: below `atLeast` already, the tokens need not be paired.
  if (whole.score < atLeast) return { score: whole.score, dropped: false, weakest: 0 };
  const q = whole.bySkeleton ? query.skeletons : query.tokens;
  const e = whole.bySkeleton ? entry.skeletons : entry.tokens;
  const scores = new Float64Array(q.length * e.length);
  const order: number[] = [];
  for (let i = 0; i < q.length; i++) {
    for (let k = 0; k < e.length; k++) {
      scores[i * e.length + k] = jaroWinkler(q[i], e[k]);
      order.push(i * e.length + k);
    }
  }
  order.sort((x, y) => scores[y] - scores[x] || x - y);
  const qPaired = new Int32Array(q.length).fill(-1);
  const ePaired = new Int32Array(e.length).fill(-1);
  let weighted = 0;
  let weights = 0;
  let weakest = 1;
  for (const pair of order) {
    const i = Math.floor(pair / e.length);
    const k = pair % e.length;
    if (qPaired[i] >= 0 || ePaired[k] >= 0) continue;
    qPaired[i] = k;
    ePaired[k] = i;
    const score = scores[pair];
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

/** Full tokens of at least 3 letters (skeletons of at least 2, marked `~`): what a partial match must share. */
function lookupTokens(name: TokenisedName): string[] {
  const plain = name.tokens.filter((t) => t.length >= 3);
  const skeletons = name.skeletons.filter((t) => t.length >= 2).map((t) => `~${t}`);
  return [...new Set([...plain, ...skeletons])];
}

/**
 * Whether `query` names the listed `entry` in part: every token of the query is a token of the entry,
 * or the initial of one, each entry token used once; at least two query tokens, at least one of them
 * a whole name; and either an initial stands for a name, or the entry has names the query does not.
 */
export const partialMatch = (query: IndexedName, entry: IndexedName): PartialKind | null =>
  partialTokenised(tokenise(query), tokenise(entry));

function partialTokenised(query: TokenisedName, entry: TokenisedName): PartialKind | null {
  const bySkeleton = query.abjad || entry.abjad;
  const q = bySkeleton ? query.skeletons : query.tokens;
  const e = bySkeleton ? entry.skeletons : entry.tokens;
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

/** The token lengths a name's pairs are weighed by, for up to this many tokens less one (more are clamped). */
const SHAPE = 8;

/**
 * What the token bound needs of each name, by its place in the index, in flat arrays: whether it is in
 * Arabic script, and the prefix sums of its token lengths in ascending order (see `lengthPrefix`) for
 * its Latin tokens and its skeletons, at [at * SHAPE]: the number of tokens (at most SHAPE - 1), then the
 * sums. A name with more tokens is weighed by its SHAPE - 1 shortest: a lower floor, so a looser bound.
 */
class Shapes {
  abjad = new Uint8Array(1024);
  latin = new Int32Array(1024 * SHAPE);
  skeleton = new Int32Array(1024 * SHAPE);

  grow(capacity: number): void {
    const abjad = new Uint8Array(capacity);
    abjad.set(this.abjad);
    this.abjad = abjad;
    for (const side of ['latin', 'skeleton'] as const) {
      const grown = new Int32Array(capacity * SHAPE);
      grown.set(this[side]);
      this[side] = grown;
    }
  }

  set(at: number, name: TokenisedName): void {
    this.abjad[at] = name.abjad ? 1 : 0;
    for (const [side, tokens] of [
      ['latin', name.tokens],
      ['skeleton', name.skeletons],
    ] as const) {
      const prefix = lengthPrefix(tokens);
      const count = Math.min(prefix.length - 1, SHAPE - 1);
      this[side][at * SHAPE] = count;
      for (let k = 1; k <= count; k++) this[side][at * SHAPE + k] = prefix[k];
    }
  }

  move(from: number, to: number): void {
    this.abjad[to] = this.abjad[from];
    this.latin.copyWithin(to * SHAPE, from * SHAPE, (from + 1) * SHAPE);
    this.skeleton.copyWithin(to * SHAPE, from * SHAPE, (from + 1) * SHAPE);
  }
}

/**
 * The least total weight the token pairs of a query and the name at `at` can have: any pairing pairs
 * min(n, m) tokens of each side, at least the shortest ones (see `Shapes`).
 */
function floorAt(shape: Int32Array, at: number, query: Int32Array): number {
  const pairs = Math.min(query.length - 1, shape[at * SHAPE]);
  return pairs === 0 ? 0 : query[pairs] + shape[at * SHAPE + pairs];
}

/** How a search finds its candidates: whichever is cheaper for the list (`auto`), or one of them (for the tests). */
export type CandidateFilter = 'auto' | 'scan' | 'vocabulary';

export class NameIndex<T> {
  private readonly slots: Slot<T>[] = [];
  private readonly positions = new Map<string, number>();
  /** Lookup token → the ids of the slots that have it. */
  private readonly byToken = new Map<string, Set<string>>();
  private readonly latinVocabulary = new Vocabulary();
  private readonly skeletonVocabulary = new Vocabulary();
  /** The skeletons of the names in Arabic script only: all a query in another script is compared with by skeleton. */
  private readonly abjadSkeletonVocabulary = new Vocabulary();
  private readonly shapes = new Shapes();
  /** Character counts of each slot's sorted key and of its skeleton (by `at`), for the whole-name bound. */
  private readonly keyProfiles = new Profiles();
  private readonly skeletonProfiles = new Profiles();
  /** Per slot (by `at`), during a search: the seeds' weight, and whether the slot is already a candidate. */
  private weights = new Float64Array(1024);
  private marks = new Uint32Array(1024);
  private searches = 0;

  constructor(private readonly filter: CandidateFilter = 'auto') {}

  get size(): number {
    return this.slots.length;
  }

  upsert(id: string, name: IndexedName, payload: T): void {
    const tokenised = tokenise(name);
    const slot: Slot<T> = {
      key: tokenised.key,
      plain: tokenised.plain,
      skeleton: tokenised.skeleton,
      abjad: tokenised.abjad,
      tokens: tokenised.tokens,
      skeletons: tokenised.skeletons,
      id,
      payload,
      at: 0,
      lookup: lookupTokens(tokenised),
    };
    const at = this.positions.get(id);
    if (at === undefined) {
      slot.at = this.slots.length;
      this.positions.set(id, slot.at);
      this.slots.push(slot);
      if (this.slots.length > this.weights.length) {
        this.weights = new Float64Array(this.weights.length * 2);
        this.marks = new Uint32Array(this.weights.length);
        this.searches = 0;
        this.shapes.grow(this.weights.length);
      }
    } else {
      this.unlink(this.slots[at]);
      slot.at = at;
      this.slots[at] = slot;
    }
    this.keyProfiles.set(slot.at, slot.key);
    this.skeletonProfiles.set(slot.at, slot.skeleton);
    this.shapes.set(slot.at, slot);
    for (const token of slot.lookup) {
      let ids = this.byToken.get(token);
      if (!ids) this.byToken.set(token, (ids = new Set()));
      ids.add(id);
    }
    for (const token of slot.tokens) this.latinVocabulary.add(token, slot.at);
    for (const token of slot.skeletons) this.skeletonVocabulary.add(token, slot.at);
    if (slot.abjad) for (const token of slot.skeletons) this.abjadSkeletonVocabulary.add(token, slot.at);
  }

  private unlink(slot: Slot<T>): void {
    for (const token of slot.lookup) {
      const ids = this.byToken.get(token);
      ids?.delete(slot.id);
      if (ids?.size === 0) this.byToken.delete(token);
    }
    for (const token of slot.tokens) this.latinVocabulary.delete(token, slot.at);
    for (const token of slot.skeletons) this.skeletonVocabulary.delete(token, slot.at);
    if (slot.abjad) for (const token of slot.skeletons) this.abjadSkeletonVocabulary.delete(token, slot.at);
  }

  remove(id: string): void {
    const at = this.positions.get(id);
    if (at === undefined) return;
    this.unlink(this.slots[at]);
    const last = this.slots.pop()!;
    this.positions.delete(id);
    if (at < this.slots.length) {
      this.keyProfiles.move(last.at, at);
      this.skeletonProfiles.move(last.at, at);
      this.shapes.move(last.at, at);
      for (const token of last.tokens) this.latinVocabulary.renumber(token, last.at, at);
      for (const token of last.skeletons) this.skeletonVocabulary.renumber(token, last.at, at);
      if (last.abjad) for (const token of last.skeletons) this.abjadSkeletonVocabulary.renumber(token, last.at, at);
      last.at = at;
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
    this.abjadSkeletonVocabulary.clear();
  }

  /**
   * Every indexed name scoring at least `threshold` against `name` (and accepted), best first. Two
   * filters, both lossless, leave out the names that cannot reach it before any is scored:
   *
   * - The whole-name bound: two strings cannot match more characters than they share, and their common
   *   prefix is known, so the character counts and the prefix bound the whole-name score from above.
   * - The token bound: a name's score is at most its token score, Σ w·s / W over its token pairs (w the
   *   two tokens' lengths, s their score, W the total weight). Pairs below θ (θ = SEED_SIMILARITY) score
   *   less than θ, so reaching `threshold` needs Σ over the θ-close pairs of w·(s − θ) ≥ (threshold − θ)·W,
   *   and W is at least `floorAt`. The vocabularies give every name with a token θ-close to one of
   *   the query's, with the pair's score; a name with none cannot pass. The same holds in the skeletons'
   *   space, for pairs where either name is in Arabic script.
   *
   * The candidates come from a scan of every name with the first bound, or from the vocabularies with
   * the second and then the first, whichever is cheaper for the list (the unit tests compare both with a
   * full scan).
   */
  search(name: IndexedName, threshold: number, accept: (payload: T) => boolean = () => true): NameMatch<T>[] {
    const query = tokenise(name);
    const whole = wholeBound(query, threshold, this.keyProfiles, this.skeletonProfiles);
    // The vocabulary pays off when it is small beside the list (names made of common tokens), or when the
    // query's tokens were asked about before; a list of diverse names is cheaper to scan whole. Both leave
    // out no match. A word or name the vocabulary visits costs about a quarter of what a name of the scan
    // does (measured on lists of 1,000 to 50,000 names: the scan lets through more names to score).
    const similarity = seedSimilarity(threshold);
    let vocabularyCost = 0;
    for (const token of query.tokens) vocabularyCost += this.latinVocabulary.costOf(token, similarity);
    for (const token of query.skeletons) vocabularyCost += this.skeletonsFor(query).costOf(token, similarity);
    const seeded = this.filter === 'vocabulary' || (this.filter === 'auto' && vocabularyCost < 4 * this.slots.length);
    const candidates = seeded ? this.seeded(query, threshold, whole) : this.slots.filter((slot) => whole(slot) >= threshold);
    const matches: NameMatch<T>[] = [];
    for (const slot of candidates) {
      if (!accept(slot.payload)) continue;
      const { score, dropped, weakest } = compareTokenised(query, slot, threshold);
      if (score >= threshold) matches.push({ id: slot.id, payload: slot.payload, score, dropped, weakest });
    }
    return matches.sort((x, y) => y.score - x.score);
  }

  /** Skeletons are compared when either name is in Arabic script: for a query in another script, only those of such names. */
  private skeletonsFor(query: TokenisedName): Vocabulary {
    return query.abjad ? this.skeletonVocabulary : this.abjadSkeletonVocabulary;
  }

  /** Every name the token bound, then the whole-name bound, let through (see `search`). */
  private seeded(query: TokenisedName, threshold: number, whole: (slot: Slot<T>) => number): Slot<T>[] {
    const similarity = seedSimilarity(threshold);
    const candidates: Slot<T>[] = [];
    this.searches += 1;
    if (this.searches === 0xffffffff) {
      this.marks.fill(0);
      this.searches = 1;
    }
    const spaces = [
      { vocabulary: this.latinVocabulary, tokens: query.tokens, shape: this.shapes.latin, any: true },
      { vocabulary: this.skeletonsFor(query), tokens: query.skeletons, shape: this.shapes.skeleton, any: query.abjad },
    ];
    const { weights, marks, searches } = this;
    const abjad = this.shapes.abjad;
    for (const { vocabulary, tokens, shape, any } of spaces) {
      const touched: number[] = [];
      for (const token of tokens) {
        for (const { word, score, slots } of vocabulary.close(token, similarity)) {
          const gain = (token.length + word.length) * (score - similarity);
          for (let n = 0; n < slots.length; n++) {
            const at = slots[n];
            if (weights[at] === 0) touched.push(at);
            weights[at] += gain;
          }
        }
      }
      const queryLengths = lengthPrefix(tokens);
      const needed = threshold - similarity;
      for (let n = 0; n < touched.length; n++) {
        const at = touched[n];
        const gain = weights[at];
        weights[at] = 0;
        if (marks[at] === searches || !(any || abjad[at] === 1)) continue;
        // A tiny allowance for rounding: a bound that is exact must not drop a name that reaches it.
        if (gain < needed * floorAt(shape, at, queryLengths) - 1e-9) continue;
        const slot = this.slots[at];
        if (whole(slot) < threshold) continue;
        marks[at] = searches;
        candidates.push(slot);
      }
    }
    return candidates;
  }

  /** Every indexed name `name` matches in part (see `partialMatch`), and accepted. */
  partial(name: IndexedName, accept: (payload: T) => boolean = () => true): PartialMatch<T>[] {
    const query = tokenise(name);
    // Every whole token of the query is a token of the entry: the entry is in every one of their lookup
    // sets (Latin tokens, or skeletons), so the smallest set is enough to look through.
    const candidates = new Set<string>();
    const lookups = lookupTokens(query);
    for (const marked of [false, true]) {
      const sets = lookups.filter((t) => t.startsWith('~') === marked).map((t) => this.byToken.get(t) ?? new Set<string>());
      if (sets.length === 0) continue;
      const smallest = sets.reduce((a, b) => (b.size < a.size ? b : a));
      for (const id of smallest) candidates.add(id);
    }
    const matches: PartialMatch<T>[] = [];
    for (const id of candidates) {
      const slot = this.slots[this.positions.get(id)!];
      const kind = partialTokenised(query, slot);
      if (kind && accept(slot.payload)) matches.push({ id, payload: slot.payload, kind });
    }
    return matches;
  }
}

let commonsScratch = new Uint16Array(1024);

/** A scratch array of at least `size` counts (searches run one at a time: JavaScript is single-threaded). */
function scratch(size: number): Uint16Array {
  if (commonsScratch.length < size) commonsScratch = new Uint16Array(Math.max(size, commonsScratch.length * 2));
  return commonsScratch;
}

/** The buckets a profile has characters in. */
function usedBuckets(counts: Uint16Array): Int32Array {
  const used: number[] = [];
  for (let b = 0; b < BUCKETS; b++) if (counts[b] > 0) used.push(b);
  return Int32Array.from(used);
}

/**
 * An upper bound of the whole-name score (see `wholeScore`) of `query` against a slot, exact enough to
 * tell whether it can reach `threshold`: from the characters they share and the common prefix of their
 * sorted and of their ordered forms (the two are permutations of each other: one profile), and for a
 * pair in Arabic script the same of the skeletons.
 */
function wholeBound(query: TokenisedName, threshold: number, keys: Profiles, skeletons: Profiles): (slot: Slot<unknown>) => number {
  const counts = profileOf(query.key);
  const used = usedBuckets(counts);
  const skeletonCounts = profileOf(query.skeleton);
  const skeletonUsed = usedBuckets(skeletonCounts);
  return (slot) => {
    const common = keys.common(slot.at, counts, used);
    let latin = jaroWinklerUpperBound(query.key.length, slot.key.length, common);
    // The bound with the longest prefix first: only a name it lets through needs its prefixes compared.
    if (latin >= threshold) {
      const prefix = Math.max(commonPrefixLength(query.key, slot.key), commonPrefixLength(query.plain, slot.plain));
      latin = jaroWinklerUpperBound(query.key.length, slot.key.length, common, prefix);
    }
    if (latin >= threshold || !(query.abjad || slot.abjad) || query.skeleton === '' || slot.skeleton === '') return latin;
    const skeletonCommon = skeletons.common(slot.at, skeletonCounts, skeletonUsed);
    const loose = jaroWinklerUpperBound(query.skeleton.length, slot.skeleton.length, skeletonCommon);
    if (loose < threshold) return loose;
    return jaroWinklerUpperBound(
      query.skeleton.length,
      slot.skeleton.length,
      skeletonCommon,
      commonPrefixLength(query.skeleton, slot.skeleton),
    );
  };
}
