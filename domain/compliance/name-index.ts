import { jaroWinkler, jaroWinklerUpperBound } from './jaro-winkler';

/**
 * An in-memory index of normalised names for fuzzy screening. A search scores a name against every
 * indexed name whose Jaro-Winkler score *could* reach the threshold, and skips the rest without losing
 * a match: two strings cannot match more characters than they share, so the character counts of both
 * bound the score from above (see `jaroWinklerUpperBound`). On a blocklist of unrelated names that
 * bound rules out almost every candidate for the cost of a few additions each.
 */

export interface IndexedName {
  /** Normalised tokens in sorted order: what the score compares. */
  key: string;
  /** Normalised tokens in their original order: scored too, so a typo in a first letter is still caught. */
  plain: string;
}

export interface NameMatch<T> {
  id: string;
  payload: T;
  score: number;
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
  profile: Uint16Array;
}

/** The score of two names: Jaro-Winkler of their token-sorted forms, or of their original order if higher. */
export function nameScore(a: IndexedName, b: IndexedName): number {
  const sorted = jaroWinkler(a.key, b.key);
  if (sorted === 1 || (a.plain === a.key && b.plain === b.key)) return sorted;
  return Math.max(sorted, jaroWinkler(a.plain, b.plain));
}

export class NameIndex<T> {
  private readonly slots: Slot<T>[] = [];
  private readonly positions = new Map<string, number>();

  get size(): number {
    return this.slots.length;
  }

  upsert(id: string, name: IndexedName, payload: T): void {
    const slot: Slot<T> = { id, key: name.key, plain: name.plain, payload, profile: profileOf(name.key) };
    const at = this.positions.get(id);
    if (at === undefined) {
      this.positions.set(id, this.slots.length);
      this.slots.push(slot);
    } else {
      this.slots[at] = slot;
    }
  }

  remove(id: string): void {
    const at = this.positions.get(id);
    if (at === undefined) return;
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
  }

  /** Every indexed name scoring at least `threshold` against `name` (and accepted), best first. */
  search(name: IndexedName, threshold: number, accept: (payload: T) => boolean = () => true): NameMatch<T>[] {
    const query = profileOf(name.key);
    const used: number[] = [];
    for (let b = 0; b < BUCKETS; b++) if (query[b] > 0) used.push(b);
    const length = name.key.length;
    const matches: NameMatch<T>[] = [];
    for (const slot of this.slots) {
      let common = 0;
      const counts = slot.profile;
      for (const b of used) common += Math.min(query[b], counts[b]);
      if (jaroWinklerUpperBound(length, slot.key.length, common) < threshold) continue;
      if (!accept(slot.payload)) continue;
      const score = nameScore(name, slot);
      if (score >= threshold) matches.push({ id: slot.id, payload: slot.payload, score });
    }
    return matches.sort((x, y) => y.score - x.score);
  }
}
