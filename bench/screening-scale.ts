import { performance } from 'node:perf_hooks';
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
} from '../tests/support/name-pools';
import { screenerOverNames } from '../tests/support/labelled-names';
import { percentile } from './support';
import { compareNames } from '../domain/compliance/name-index';
import { normaliseName } from '../domain/compliance/normalise';
import { foldName, type FoldedName } from '../domain/compliance/transliterate';
import { prng } from '../tests/support/random';

/**
 * (m) Screening one name against 50,000 listed names vs against 1,000: the screener as every process runs
 * it (names folded once when loaded, the index's bound, the token comparison of the candidates), fed
 * with lists of Kenyan and English, Russian, Arabic and Chinese names, a third of the non-Latin ones in
 * their own script. The same probes (made like the listed names; some are listed, most are not) are
 * screened against both, in interleaved rounds, a fresh batch each round; the figure is the p50 of one
 * screening.
 *
 * Beside it, the floor: what any index must at least spend on a probe, given the names it matches. That
 * is a screening against a list of one name (folding the probe, the screener's own work) plus scoring
 * the probe against exactly the listed names it matches, and nothing else. On a list where given names
 * and patronymics repeat, a probe matches more names on a larger list (the review band takes in names
 * that share two of three tokens), so the floor's ratio is above 1 too.
 */

export interface ScreeningScaleBench {
  large: number;
  small: number;
  probes: number;
  largeP50Us: number;
  smallP50Us: number;
  largeP99Us: number;
  smallP99Us: number;
  ratio: number;
  /** Names matched (blocked or for review) per screening, on average. */
  largeMatches: number;
  smallMatches: number;
  /** The floor's p50 (see above), and its ratio. */
  largeFloorP50Us: number;
  smallFloorP50Us: number;
  floorRatio: number;
}

/** Syllables in a script and in Latin letters, to make surnames as diverse as a real list's. */
const RUSSIAN_SYLLABLES: [string, string][] = [
  ['ко', 'ko'],
  ['ва', 'va'],
  ['ли', 'li'],
  ['ра', 'ra'],
  ['бо', 'bo'],
  ['ге', 'ge'],
  ['ду', 'du'],
  ['за', 'za'],
  ['ми', 'mi'],
  ['не', 'ne'],
  ['по', 'po'],
  ['со', 'so'],
  ['ту', 'tu'],
  ['фе', 'fe'],
  ['ка', 'ka'],
  ['лу', 'lu'],
  ['ре', 're'],
  ['ши', 'shi'],
  ['жу', 'zhu'],
  ['ча', 'cha'],
  ['бер', 'ber'],
  ['гор', 'gor'],
  ['вол', 'vol'],
  ['мар', 'mar'],
];
const RUSSIAN_ENDINGS: [string, string][] = [
  ['ов', 'ov'],
  ['ев', 'ev'],
  ['ин', 'in'],
  ['ский', 'sky'],
  ['енко', 'enko'],
];
const ARABIC_SYLLABLES: [string, string][] = [
  ['كر', 'kar'],
  ['سل', 'sal'],
  ['من', 'man'],
  ['حد', 'had'],
  ['نو', 'nou'],
  ['رب', 'rab'],
  ['طا', 'ta'],
  ['مي', 'mi'],
  ['شا', 'sha'],
  ['زي', 'zi'],
  ['فو', 'fu'],
  ['جب', 'jab'],
  ['در', 'dar'],
  ['قا', 'qa'],
  ['هل', 'hal'],
  ['عز', 'az'],
];
const CHINESE_CHARACTERS: [string, string][] = [
  ['华', 'hua'],
  ['明', 'ming'],
  ['国', 'guo'],
  ['建', 'jian'],
  ['伟', 'wei'],
  ['强', 'qiang'],
  ['平', 'ping'],
  ['东', 'dong'],
  ['海', 'hai'],
  ['林', 'lin'],
  ['文', 'wen'],
  ['志', 'zhi'],
  ['德', 'de'],
  ['光', 'guang'],
  ['新', 'xin'],
  ['春', 'chun'],
  ['金', 'jin'],
  ['宏', 'hong'],
  ['立', 'li'],
  ['永', 'yong'],
  ['家', 'jia'],
  ['俊', 'jun'],
  ['思', 'si'],
  ['天', 'tian'],
];
const KENYAN_SYLLABLES = ['ka', 'ma', 'wa', 'ngi', 'jo', 'ri', 'mu', 'ki', 'nya', 'ke', 'chi', 'to', 'ndu', 'gu', 'la', 'si', 'ba', 'ru'];

/**
 * `count` distinct names: given names, patronymics and "bin" repeat as they do on real lists (the pools of
 * the labelled set), while surnames (and Chinese given names) are made of syllables, as diverse as a real
 * list's. A third of the non-Latin names are written in their own script.
 */
function names(count: number, next: () => number): string[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const spell = (parts: Spelled[], script: boolean, joiner = ' ') => parts.map((p) => (script ? p[0] : pick(p[1]))).join(joiner);
  const syllables = (table: [string, string][], n: number, ending?: [string, string]): Spelled => {
    const chosen = Array.from({ length: n }, () => pick(table));
    if (ending) chosen.push(ending);
    const latin = chosen.map((c) => c[1]).join('');
    return [chosen.map((c) => c[0]).join(''), [latin[0].toUpperCase() + latin.slice(1)]];
  };
  const kenyan = () => {
    const word = Array.from({ length: 2 + Math.floor(next() * 2) }, () => pick(KENYAN_SYLLABLES)).join('');
    return word[0].toUpperCase() + word.slice(1);
  };
  const out = new Set<string>();
  while (out.size < count) {
    const culture = next();
    const script = next() < 0.33;
    if (culture < 0.4) out.add(`${pick(LATIN_GIVEN)} ${next() < 0.5 ? pick(LATIN_SURNAMES) : kenyan()} ${kenyan()}`);
    else if (culture < 0.6) {
      const surname = syllables(RUSSIAN_SYLLABLES, 2, pick(RUSSIAN_ENDINGS));
      out.add(spell([pick(RUSSIAN_GIVEN), pick(RUSSIAN_PATRONYMICS), next() < 0.2 ? pick(RUSSIAN_SURNAMES) : surname], script));
    } else if (culture < 0.8) {
      const father = pick(ARABIC_GIVEN);
      const family = next() < 0.2 ? pick(ARABIC_FAMILY) : syllables(ARABIC_SYLLABLES, 2 + Math.floor(next() * 2));
      out.add(spell([pick(ARABIC_GIVEN), [`بن ${father[0]}`, father[1].map((v) => `bin ${v}`)], family], script));
    } else {
      const given = next() < 0.3 ? pick(CHINESE_GIVEN) : syllables(CHINESE_CHARACTERS, 2);
      out.add(spell([pick(CHINESE_SURNAMES), given], script, script ? '' : ' '));
    }
  }
  return [...out];
}

const screenerOf = (listed: string[]) => screenerOverNames(listed.map((name, i) => ({ id: String(i), name })));

export async function benchScreeningScale(
  options: { large?: number; small?: number; probes?: number; rounds?: number; log?: (line: string) => void } = {},
): Promise<ScreeningScaleBench> {
  const log = options.log ?? (() => undefined);
  const large = options.large ?? 50_000;
  const small = options.small ?? 1_000;
  const probeCount = options.probes ?? 1_000;
  const rounds = options.rounds ?? 3;
  const listed = names(large, prng(7));
  // A fresh batch of names every round, none screened before: what the index remembers of the tokens it
  // was asked about helps only as far as different names share tokens.
  const probes = names(probeCount * (rounds + 1), prng(99));
  const batch = (r: number) => probes.slice(r * probeCount, (r + 1) * probeCount);
  const sides = { large: screenerOf(listed), small: screenerOf(listed.slice(0, small)) };
  const loadStarted = performance.now();
  await Promise.all([sides.large.refresh(), sides.small.refresh()]);
  log(`loaded ${large} and ${small} names in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s (folded once each, not measured)`);
  const samples = { large: [] as number[], small: [] as number[] };
  const matched = { large: [] as string[][], small: [] as string[][] };
  const round = async (side: 'large' | 'small', batchOf: string[]) => {
    const times: number[] = [];
    const found: string[][] = [];
    for (const name of batchOf) {
      const startedAt = performance.now();
      const matches = await sides[side].screen([{ field: 'full_name', type: 'name', value: name }]);
      times.push((performance.now() - startedAt) * 1000);
      found.push(matches.map((m) => m.entryValue));
    }
    samples[side].push(...times);
    matched[side] = found;
    return percentile(times, 50);
  };
  await round('small', batch(0));
  await round('large', batch(0));
  for (let i = 0; i < rounds; i++) {
    const s = await round('small', batch(i + 1));
    const l = await round('large', batch(i + 1));
    log(`  round ${i + 1}/${rounds}: p50 ${large} names ${l.toFixed(0)} µs, ${small} names ${s.toFixed(0)} µs`);
  }
  const largeP50Us = percentile(samples.large.slice(probeCount), 50);
  const smallP50Us = percentile(samples.small.slice(probeCount), 50);
  const floor = await floorOf(batch(rounds), matched, rounds);
  const mean = (lists: string[][]) => lists.reduce((sum, list) => sum + list.length, 0) / lists.length;
  log(`  names matched per screening: ${mean(matched.large).toFixed(2)} of ${large}, ${mean(matched.small).toFixed(2)} of ${small}`);
  log(`  floor p50: ${floor.large.toFixed(0)} µs against ${large} names, ${floor.small.toFixed(0)} µs against ${small}`);
  return {
    large,
    small,
    probes: probeCount,
    largeP50Us,
    smallP50Us,
    largeP99Us: percentile(samples.large.slice(probeCount), 99),
    smallP99Us: percentile(samples.small.slice(probeCount), 99),
    ratio: largeP50Us / smallP50Us,
    largeMatches: mean(matched.large),
    smallMatches: mean(matched.small),
    largeFloorP50Us: floor.large,
    smallFloorP50Us: floor.small,
    floorRatio: floor.large / floor.small,
  };
}

const folded = (name: string): FoldedName | null => {
  const normalised = normaliseName(name);
  return normalised ? foldName(normalised.value) : null;
};

/**
 * The floor's p50 on each side: a screening against one listed name (the probe folded, the screener's
 * fixed work), then the probe scored against each name it matched on that side, folded beforehand as
 * the index holds them.
 */
async function floorOf(
  probes: string[],
  matched: { large: string[][]; small: string[][] },
  rounds: number,
): Promise<{ large: number; small: number }> {
  const one = screenerOf(['Zacharias Quillfeather']);
  await one.refresh();
  const sides = {
    large: matched.large.map((names) => names.map(folded).filter((f): f is FoldedName => f !== null)),
    small: matched.small.map((names) => names.map(folded).filter((f): f is FoldedName => f !== null)),
  };
  const queries = probes.map(folded);
  const times = { large: [] as number[], small: [] as number[] };
  for (let r = 0; r <= rounds; r++) {
    for (const side of ['small', 'large'] as const) {
      for (let i = 0; i < probes.length; i++) {
        const startedAt = performance.now();
        await one.screen([{ field: 'full_name', type: 'name', value: probes[i] }]);
        const query = queries[i];
        if (query) for (const entry of sides[side][i]) compareNames(query, entry);
        if (r > 0) times[side].push((performance.now() - startedAt) * 1000);
      }
    }
  }
  return { large: percentile(times.large, 50), small: percentile(times.small, 50) };
}
