import { NameIndex } from './name-index';
import { normaliseBlocklistValue, normaliseName, type BlocklistType } from './normalise';

/**
 * Screening (SPEC §8): exact matches on normalised identifiers, Jaro-Winkler on normalised, token-sorted
 * names. Every process keeps the blocklist in memory and brings it up to date before each screening
 * with one small query: each write to `blocklist_entries` is stamped with a generation number taken
 * under a lock held until commit, so "generation > the last one seen" never misses a committed change
 * (deletions bump a purge counter, which reloads everything).
 */

export interface ScreeningItem {
  /** What is screened, as recorded with a hit: `email`, `full_name`, `destination.phone` … */
  field: string;
  type: BlocklistType;
  value: string | null | undefined;
}

export interface ScreeningMatch {
  entryId: string;
  entryType: BlocklistType;
  entryValue: string;
  source: string;
  field: string;
  /** The screened value, normalised. */
  screenedValue: string;
  /** 1 for an exact match; the Jaro-Winkler score for a name. */
  score: number;
}

export type ScreeningContext = 'registration' | 'kyc' | 'payment' | 'ad' | 'deposit';

interface CachedEntry {
  id: string;
  type: BlocklistType;
  value: string;
  matchKey: string;
  source: string;
  expiresAt: number | null;
}

/** One row of the blocklist's change feed: the current counters, and an entry changed since (id null: none). */
export interface BlocklistChange {
  state_generation: string;
  state_purges: string;
  id: string | null;
  type: BlocklistType;
  value: string;
  match_key: string;
  source: string;
  expires_at: Date | null;
}

const exactKey = (type: BlocklistType, matchKey: string): string => `${type}\u0000${matchKey}`;
const isActive = (entry: CachedEntry, now: number): boolean => entry.expiresAt === null || entry.expiresAt > now;

export class Screener {
  private generation = -1n;
  private purges = -1n;
  private readonly exact = new Map<string, CachedEntry>();
  private readonly byId = new Map<string, CachedEntry>();
  private readonly names = new NameIndex<CachedEntry>();
  private inFlight: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(
    /** Reads the blocklist changes after a generation (every entry for -1): the repository's change feed. */
    private readonly changesSince: (generation: bigint) => Promise<BlocklistChange[]>,
    private readonly options: { nameThreshold: number },
  ) {}

  get nameThreshold(): number {
    return this.options.nameThreshold;
  }

  /** Bring the in-memory blocklist up to date. Calls made while a refresh runs share the next one. */
  refresh(): Promise<void> {
    if (!this.inFlight) {
      this.inFlight = this.load().finally(() => {
        this.inFlight = undefined;
      });
      return this.inFlight;
    }
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.refresh();
      });
    return this.queued;
  }

  private async load(): Promise<void> {
    let rows = await this.changesSince(this.generation);
    const purges = BigInt(rows[0]?.state_purges ?? '0');
    if (purges !== this.purges) {
      rows = this.generation < 0n ? rows : await this.changesSince(-1n);
      this.exact.clear();
      this.byId.clear();
      this.names.clear();
    }
    for (const row of rows) {
      if (row.id === null) continue;
      this.forget(row.id);
      const entry: CachedEntry = {
        id: row.id,
        type: row.type,
        value: row.value,
        matchKey: row.match_key,
        source: row.source,
        expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null,
      };
      this.byId.set(entry.id, entry);
      if (entry.type === 'name') this.names.upsert(entry.id, { key: entry.matchKey, plain: entry.value }, entry);
      else this.exact.set(exactKey(entry.type, entry.matchKey), entry);
    }
    const head = rows[0];
    if (head) {
      this.generation = BigInt(head.state_generation);
      this.purges = BigInt(head.state_purges);
    }
  }

  private forget(id: string): void {
    const previous = this.byId.get(id);
    if (!previous) return;
    this.byId.delete(id);
    if (previous.type === 'name') this.names.remove(id);
    else this.exact.delete(exactKey(previous.type, previous.matchKey));
  }

  /** Every active entry the items match, best first; an empty list when they are clear. */
  async screen(items: ScreeningItem[]): Promise<ScreeningMatch[]> {
    await this.refresh();
    const now = Date.now();
    const matches: ScreeningMatch[] = [];
    for (const item of items) {
      if (item.value === null || item.value === undefined || item.value === '') continue;
      if (item.type === 'name') {
        const name = normaliseName(item.value);
        if (!name) continue;
        const found = this.names.search({ key: name.matchKey, plain: name.value }, this.options.nameThreshold, (e) => isActive(e, now));
        for (const { payload, score } of found) matches.push(toMatch(payload, item.field, name.value, score));
        continue;
      }
      const normalised = normaliseBlocklistValue(item.type, item.value);
      if (!normalised) continue;
      const entry = this.exact.get(exactKey(item.type, normalised.matchKey));
      if (entry && isActive(entry, now)) matches.push(toMatch(entry, item.field, normalised.value, 1));
    }
    return matches.sort((a, b) => b.score - a.score);
  }
}

function toMatch(entry: CachedEntry, field: string, screenedValue: string, score: number): ScreeningMatch {
  return { entryId: entry.id, entryType: entry.type, entryValue: entry.value, source: entry.source, field, screenedValue, score };
}
