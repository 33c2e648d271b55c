import anyAscii from 'any-ascii';
import { pinyin } from 'pinyin-pro';
import { letterTokens } from './normalise';

/**
 * Folding a name to one Latin form, so that a name written in Cyrillic, Arabic or Chinese meets its Latin
 * spelling (and the other way round). The same function runs on both sides: on a listed name once, when
 * it enters a screener's index, and on every screened name.
 *
 * - Chinese (Han) is read as pinyin (pinyin-pro, with surnames read as surnames). A personal name of two
 *   to four characters becomes its surname and its given name, the given name's syllables joined, as it
 *   is written in Latin letters: 习近平 → "xi jinping", 欧阳修 → "ouyang xiu".
 * - Every other script is transliterated by any-ascii: Виктор → "viktor", محمد → "mhmd".
 * - Arabic is written without its short vowels, so its Latin form has none either. For names in Arabic
 *   script the comparison also uses a consonant skeleton of both sides (see `skeletonOf`), where
 *   "Mohammed", "Muhammad" and محمد all become "mhmd".
 */

const HAN = /\p{Script=Han}/u;
const HAN_RUN = /\p{Script=Han}+/gu;
const ARABIC = /\p{Script=Arabic}/u;

/** Two-character Chinese surnames (复姓), read together as one surname. */
const COMPOUND_SURNAMES = new Set([
  '欧阳',
  '司马',
  '诸葛',
  '上官',
  '东方',
  '皇甫',
  '尉迟',
  '公孙',
  '慕容',
  '长孙',
  '宇文',
  '司徒',
  '夏侯',
  '轩辕',
  '令狐',
  '端木',
  '西门',
  '南宫',
]);

function hanToPinyin(run: string, personal: boolean): string {
  const syllables = pinyin(run, { toneType: 'none', type: 'array', mode: personal ? 'surname' : 'normal', v: true });
  if (!personal) return syllables.join('');
  const surname = run.length >= 3 && COMPOUND_SURNAMES.has(run.slice(0, 2)) ? 2 : 1;
  return `${syllables.slice(0, surname).join('')} ${syllables.slice(surname).join('')}`;
}

/** Whether a name is written (at least partly) in Arabic script. */
export const isArabicScript = (text: string): boolean => ARABIC.test(text);

/**
 * A name in Latin letters: Chinese as grouped pinyin, any other script transliterated; apostrophes and
 * the marks any-ascii writes for the Arabic ʿayn and hamza are dropped (عبد → "bd", like "Abd" less its vowel).
 */
export function toLatin(text: string): string {
  let latin = text;
  if (HAN.test(latin)) {
    const runs = latin.match(HAN_RUN) ?? [];
    // One run of two to four characters is a Chinese personal name; longer runs, or several runs split by
    // "·", are names transliterated into Chinese, each run read as one word.
    const personal = runs.length === 1 && runs[0].length >= 2 && runs[0].length <= 4;
    latin = latin.replace(HAN_RUN, (run) => ` ${hanToPinyin(run, personal)} `);
  }
  return anyAscii(latin).replace(/['`’ʼʻ]/g, '');
}

/** Tokens that only join names in Arabic (son of, daughter of, the): left out of the skeleton. */
const ARABIC_PARTICLES = new Set(['bin', 'bn', 'ibn', 'bint', 'al', 'el', 'ul', 'b']);

/**
 * A token's consonant skeleton: vowels and the half-vowels w and y dropped, q and c read as k, dh as z
 * (ذ, ظ), th as s (ث), a final h dropped (the Arabic tāʾ marbūṭa), doubled letters written once.
 * "Mohammed" and "Muhammad" → "mhmd", "Osama" and أسامة ("smh") → "sm", "Qasem" and "Kassem" → "ksm".
 */
function tokenSkeleton(token: string): string {
  let s = token
    .replace(/dh/g, 'z')
    .replace(/th/g, 's')
    .replace(/[qc]/g, 'k')
    .replace(/[aeiouwy]/g, '');
  s = s.replace(/(.)\1+/g, '$1');
  if (s.length > 1 && s.endsWith('h')) s = s.slice(0, -1);
  return s;
}

/**
 * The skeleton of a name's Latin tokens, sorted, with the Arabic particles and the article dropped. An
 * Arabic token that starts with the article (الأسد, "lsd") loses it before transliteration, so that it
 * meets "al-Assad". "Abd" (servant of) is joined to the name after it, however it is written:
 * "Abdul Rahman", "Abd al-Rahman", "Abdulrahman" and عبد الرحمن all become "bdrhmn".
 */
export function skeletonOf(latinTokens: string[]): string {
  const skeletons: string[] = [];
  for (const token of latinTokens) {
    if (ARABIC_PARTICLES.has(token)) continue;
    let skeleton = tokenSkeleton(token);
    if (skeleton === '') continue;
    const previous = skeletons[skeletons.length - 1];
    if (previous === 'bd' || previous === 'bdl') {
      skeletons[skeletons.length - 1] = `bd${skeleton}`;
      continue;
    }
    if (skeleton.startsWith('bdl') && skeleton.length > 3) skeleton = `bd${skeleton.slice(3)}`;
    skeletons.push(skeleton);
  }
  return skeletons.sort().join(' ');
}

/**
 * One spelling of the sounds Latin spellings of the same name write differently (mostly romanised
 * Russian): x after a vowel → ks, an initial ye → e, yo and ye and ie inside a word → e, ya inside a
 * word → ia, a final ey → ei, and a final iy, yy, ii or y after a consonant → i. "Yevgeniy" and
 * "Evgeny" → "evgeni", "Pyotr" → "petr", "Alexei" and "Aleksey" → "aleksei", "Yuryevich" and
 * "Yurievich" → "yurevich". Pinyin's x (Xi, Xiaoping) starts a syllable and is left alone.
 */
export function romanisationKey(token: string): string {
  return token
    .replace(/(?<=[aeiou])x/g, 'ks')
    .replace(/ey$/, 'ei')
    .replace(/^ye/, 'e')
    .replace(/(?<=.)(?:yo|ye|ie)/g, 'e')
    .replace(/(?<=.)ya/g, 'ia')
    .replace(/(?:iy|yy|ii)$/, 'i')
    .replace(/(?<=[^aeiou])y$/, 'i');
}

/** Arabic tokens without their article (ال), when something is left after it. */
export function withoutArabicArticle(text: string): string {
  return text.replace(/(^|\s)ال(?=\S{2,})/gu, '$1');
}

/** What a name is compared by: its Latin tokens (sorted, and in their order) and, for Arabic script, its skeleton. */
export interface FoldedName {
  /** Latin tokens in sorted order. */
  key: string;
  /** Latin tokens in their original order. */
  plain: string;
  /** Consonant skeleton of the Latin tokens, sorted (see `skeletonOf`). */
  skeleton: string;
  /** Written in Arabic script: compared by its skeleton too. */
  abjad: boolean;
}

/**
 * Fold a normalised name (`normaliseName`: honorifics already dropped, in its own script) to what
 * screening compares. Null when nothing is left of it.
 */
export function foldName(name: string): FoldedName | null {
  const abjad = isArabicScript(name);
  const latin = letterTokens(toLatin(abjad ? withoutArabicArticle(name) : name));
  const tokens = latin.map(romanisationKey);
  if (tokens.join('').length < 2) return null;
  return { key: [...tokens].sort().join(' '), plain: tokens.join(' '), skeleton: skeletonOf(latin), abjad };
}
