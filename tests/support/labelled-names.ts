import { normaliseName } from '../../domain/compliance/normalise';
import { Screener, type BlocklistChange } from '../../domain/compliance/screening';
import {
  ARABIC_FAMILY,
  ARABIC_GIVEN,
  CHINESE_GIVEN,
  CHINESE_SURNAMES,
  LATIN_GIVEN,
  LATIN_SURNAMES,
  RUSSIAN_GIVEN,
  RUSSIAN_PATRONYMICS,
  RUSSIAN_SURNAMES,
  type Spelled,
} from './name-pools';
import { prng } from './random';

/**
 * A labelled screening set: a list of people (Kenyan and English, Russian, Arabic and Chinese names, some
 * listed in Latin letters and some in their own script) and probes of known outcome. Positives are
 * variants of listed names by kind; negatives are names of the same pools that are not on the list.
 * Generated from a seed, so a run is reproducible and the set is not tuned by hand.
 */

export type VariantKind =
  | 'typo'
  | 'reorder'
  | 'honorific'
  | 'romanisation'
  | 'cyrillic_of_latin'
  | 'latin_of_cyrillic'
  | 'arabic_of_latin'
  | 'latin_of_arabic'
  | 'chinese_of_latin'
  | 'latin_of_chinese'
  | 'initials'
  | 'dropped_name';

export const CROSS_SCRIPT_KINDS: readonly VariantKind[] = [
  'cyrillic_of_latin',
  'latin_of_cyrillic',
  'arabic_of_latin',
  'latin_of_arabic',
  'chinese_of_latin',
  'latin_of_chinese',
];

/** Kinds that should go to review rather than be blocked. */
export const REVIEW_KINDS: readonly VariantKind[] = ['initials', 'dropped_name'];

export type NegativeKind = 'latin' | 'cyrillic' | 'arabic' | 'chinese';

export interface Listed {
  id: string;
  name: string;
}

export type Probe =
  { name: string; positive: true; kind: VariantKind; target: string } | { name: string; positive: false; kind: NegativeKind };

export interface LabelledSet {
  listed: Listed[];
  probes: Probe[];
}

/** A person: the parts of their name, each spelled in its own script and in Latin. */
interface Person {
  culture: 'latin' | 'russian' | 'arabic' | 'chinese';
  parts: Spelled[];
  /** The pool entries of each part (`g3`, `s17` …): two people sharing two of them are not told apart. */
  keys: string[];
}

const latin = (name: string): Spelled => [name, [name]];

export function buildLabelledSet(
  seed = 17,
  sizes = { latin: 900, russian: 250, arabic: 250, chinese: 200, negativesPerCulture: 300 },
): LabelledSet {
  const next = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const pickIndex = (items: readonly unknown[]): number => Math.floor(next() * items.length);
  const spellLatin = (part: Spelled): string => pick(part[1]);

  function person(culture: Person['culture']): Person {
    switch (culture) {
      case 'latin': {
        // Kenyan style: a given name, a second (often a family) name and a surname.
        const g = pickIndex(LATIN_GIVEN);
        const m = pickIndex(LATIN_SURNAMES);
        const s = pickIndex(LATIN_SURNAMES);
        return {
          culture,
          parts: [latin(LATIN_GIVEN[g]), latin(LATIN_SURNAMES[m]), latin(LATIN_SURNAMES[s])],
          keys: [`lg${g}`, `ls${m}`, `ls${s}`],
        };
      }
      case 'russian': {
        const g = pickIndex(RUSSIAN_GIVEN);
        const p = pickIndex(RUSSIAN_PATRONYMICS);
        const s = pickIndex(RUSSIAN_SURNAMES);
        return { culture, parts: [RUSSIAN_GIVEN[g], RUSSIAN_PATRONYMICS[p], RUSSIAN_SURNAMES[s]], keys: [`rg${g}`, `rs${s}`] };
      }
      case 'arabic': {
        const g = pickIndex(ARABIC_GIVEN);
        const f = pickIndex(ARABIC_GIVEN);
        const s = pickIndex(ARABIC_FAMILY);
        const father: Spelled = [`بن ${ARABIC_GIVEN[f][0]}`, ARABIC_GIVEN[f][1].map((v) => `bin ${v}`)];
        return { culture, parts: [ARABIC_GIVEN[g], father, ARABIC_FAMILY[s]], keys: [`ag${g}`, `ag${f}`, `as${s}`] };
      }
      case 'chinese': {
        const s = pickIndex(CHINESE_SURNAMES);
        const g = pickIndex(CHINESE_GIVEN);
        return { culture, parts: [CHINESE_SURNAMES[s], CHINESE_GIVEN[g]], keys: [`cs${s}`, `cg${g}`] };
      }
    }
  }

  const inScript = (p: Person): string => p.parts.map((part) => part[0]).join(p.culture === 'chinese' ? '' : ' ');
  const inLatin = (p: Person): string => p.parts.map(spellLatin).join(' ');

  // The list: people of each culture, a third of the non-Latin ones listed in their own script.
  const listed: Listed[] = [];
  const people: { person: Person; id: string; ownScript: boolean; latinName: string }[] = [];
  // Every pair of name parts a listed person has: a negative may share one part with a listed person
  // (a common given name or surname), never two.
  const pairs = new Set<string>();
  const pairsOf = (p: Person): string[] => p.keys.flatMap((a, i) => p.keys.slice(i + 1).map((b) => [a, b].sort().join('+')));
  const taken = (p: Person): boolean => pairsOf(p).some((pair) => pairs.has(pair));
  const counts = { latin: sizes.latin, russian: sizes.russian, arabic: sizes.arabic, chinese: sizes.chinese };
  for (const culture of ['latin', 'russian', 'arabic', 'chinese'] as const) {
    let made = 0;
    while (made < counts[culture]) {
      const p = person(culture);
      if (taken(p)) continue;
      for (const pair of pairsOf(p)) pairs.add(pair);
      const id = `${culture}-${made}`;
      const ownScript = culture !== 'latin' && made % 3 === 0;
      const latinName = inLatin(p);
      listed.push({ id, name: ownScript ? inScript(p) : latinName });
      people.push({ person: p, id, ownScript, latinName });
      made += 1;
    }
  }

  const probes: Probe[] = [];
  const positive = (name: string, kind: VariantKind, target: string) => probes.push({ name, positive: true, kind, target });

  for (const { person: p, id, ownScript, latinName } of people) {
    const tokens = latinName.split(' ');
    if (p.culture === 'latin') {
      const r = next();
      if (r < 0.25) positive(typo(latinName, next), 'typo', id);
      else if (r < 0.45) positive([...tokens].reverse().join(' '), 'reorder', id);
      else if (r < 0.6) positive(`${pick(['Mr', 'Dr', 'Hon.', 'Mrs'])} ${latinName}`, 'honorific', id);
      else if (r < 0.8) positive(`${tokens[0][0]}. ${tokens[1][0]}. ${tokens[2]}`, 'initials', id);
      else positive(`${tokens[0]} ${tokens[2]}`, 'dropped_name', id);
      continue;
    }
    const kinds = {
      russian: ['cyrillic_of_latin', 'latin_of_cyrillic'],
      arabic: ['arabic_of_latin', 'latin_of_arabic'],
      chinese: ['chinese_of_latin', 'latin_of_chinese'],
    } as const;
    const [toScript, toLatin] = kinds[p.culture];
    if (ownScript) positive(inLatin(p), toLatin, id);
    else positive(inScript(p), toScript, id);
    // A second spelling in Latin letters of a name listed in Latin letters.
    if (!ownScript && p.parts.some((part) => part[1].length > 1)) {
      const other = inLatin(p);
      if (other !== latinName) positive(other, 'romanisation', id);
    }
  }

  // Negatives: people of the same pools who are not on the list, in their own script or in Latin letters.
  for (const culture of ['latin', 'russian', 'arabic', 'chinese'] as const) {
    let made = 0;
    while (made < sizes.negativesPerCulture) {
      const p = person(culture);
      if (taken(p)) continue;
      for (const pair of pairsOf(p)) pairs.add(pair);
      // Arabic and Russian negatives are written as the people write them: with or without the father's name.
      if (culture === 'arabic' && next() < 0.5) p.parts.splice(1, 1);
      const script = culture === 'latin' || next() < 0.5 ? 'latin' : culture === 'russian' ? 'cyrillic' : culture;
      probes.push({ name: script === 'latin' ? inLatin(p) : inScript(p), positive: false, kind: script === 'latin' ? 'latin' : script });
      made += 1;
    }
  }
  return { listed, probes };
}

/** One edit in a random place after the first letter: a letter dropped, doubled, or swapped with the next. */
function typo(name: string, next: () => number): string {
  const at = 1 + Math.floor(next() * (name.length - 2));
  if (name[at] === ' ' || name[at + 1] === ' ') return name.slice(0, at) + name.slice(at + 1);
  const r = next();
  if (r < 0.34) return name.slice(0, at) + name.slice(at + 1);
  if (r < 0.67) return name.slice(0, at) + name[at] + name.slice(at);
  return name.slice(0, at) + name[at + 1] + name[at] + name.slice(at + 2);
}

export interface Outcome {
  verdict: 'block' | 'review' | 'clear';
  /** The listed ids the probe matched (blocked or for review). */
  ids: string[];
}

export interface Figures {
  /** Per variant kind: probes, blocked (the target among the blocks), caught (blocked or for review). */
  byKind: Record<string, { probes: number; blocked: number; caught: number }>;
  crossScriptRecall: number;
  negatives: number;
  falsePositives: number;
  falsePositiveRate: number;
  negativesForReview: number;
  negativesByKind: Record<string, { probes: number; blocked: number; review: number }>;
}

/** Screen every probe and count: recall by kind, and how many negatives were blocked or sent to review. */
export async function evaluate(set: LabelledSet, screen: (name: string) => Promise<Outcome>): Promise<Figures> {
  const byKind: Figures['byKind'] = {};
  const negativesByKind: Figures['negativesByKind'] = {};
  let negatives = 0;
  let falsePositives = 0;
  let negativesForReview = 0;
  for (const probe of set.probes) {
    const outcome = await screen(probe.name);
    if (probe.positive) {
      const row = (byKind[probe.kind] ??= { probes: 0, blocked: 0, caught: 0 });
      row.probes += 1;
      const hit = outcome.ids.includes(probe.target);
      if (hit && outcome.verdict === 'block') row.blocked += 1;
      if (hit) row.caught += 1;
    } else {
      const row = (negativesByKind[probe.kind] ??= { probes: 0, blocked: 0, review: 0 });
      negatives += 1;
      row.probes += 1;
      if (outcome.verdict === 'block') {
        falsePositives += 1;
        row.blocked += 1;
      } else if (outcome.verdict === 'review') {
        negativesForReview += 1;
        row.review += 1;
      }
    }
  }
  let crossProbes = 0;
  let crossBlocked = 0;
  for (const kind of CROSS_SCRIPT_KINDS) {
    crossProbes += byKind[kind]?.probes ?? 0;
    crossBlocked += byKind[kind]?.blocked ?? 0;
  }
  return {
    byKind,
    crossScriptRecall: crossBlocked / crossProbes,
    negatives,
    falsePositives,
    falsePositiveRate: falsePositives / negatives,
    negativesForReview,
    negativesByKind,
  };
}

/** A screener over these names alone (no database): the change feed answers from memory. */
export function screenerOverNames(listed: Listed[], thresholds = { nameThreshold: 0.92, reviewThreshold: 0.88 }): Screener {
  const rows: BlocklistChange[] = [];
  for (const { id, name } of listed) {
    const normalised = normaliseName(name);
    if (!normalised) continue;
    rows.push({
      state_generation: '1',
      state_purges: '0',
      id,
      type: 'name',
      value: normalised.value,
      match_key: normalised.matchKey,
      source: 'manual',
      external_ref: null,
      expires_at: null,
    });
  }
  const head = { ...rows[0], id: null };
  return new Screener((generation) => Promise.resolve(generation < 0n ? rows : [head]), thresholds);
}
