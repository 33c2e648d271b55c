import { normaliseKenyanPhone } from '../phone';

/**
 * Normalisation of blocklist values and of the values screened against them: the same function runs on
 * both sides, so "JOHN  Kamau", "john kamau" and "Kamau, John" meet in one form.
 */

export const BLOCKLIST_TYPES = ['name', 'email', 'phone', 'national_id', 'bank_account', 'crypto_address', 'country'] as const;
export type BlocklistType = (typeof BLOCKLIST_TYPES)[number];
export const isBlocklistType = (value: string): value is BlocklistType => (BLOCKLIST_TYPES as readonly string[]).includes(value);

export const BLOCKLIST_SOURCES = ['manual', 'ofac', 'un', 'eu'] as const;
export type BlocklistSource = (typeof BLOCKLIST_SOURCES)[number];
export const isBlocklistSource = (value: string): value is BlocklistSource => (BLOCKLIST_SOURCES as readonly string[]).includes(value);

export interface NormalisedValue {
  /** The normalised value, as stored and shown. */
  value: string;
  /** What screening compares: the value itself, or for names its tokens in sorted order. */
  matchKey: string;
}

/** Honorifics and legal-form suffixes that say nothing about who a party is. */
const NAME_STOP_WORDS = new Set([
  'mr',
  'mrs',
  'ms',
  'miss',
  'dr',
  'prof',
  'sir',
  'hon',
  'rev',
  'ltd',
  'limited',
  'inc',
  'incorporated',
  'llc',
  'plc',
  'corp',
  'corporation',
  'company',
  'gmbh',
]);

/**
 * Lower case, punctuation to spaces. Accents are folded from Latin letters (é → e) and the vowel marks
 * from Arabic, but letters of other scripts keep theirs: й is not и, nor ё е, and a transliteration
 * tells them apart.
 */
export function letterTokens(raw: string): string[] {
  const folded = raw
    .normalize('NFKD')
    .replace(/([\p{Script=Latin}\p{Script=Arabic}])\p{M}+/gu, '$1')
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  return folded === '' ? [] : folded.split(' ');
}

/** A name's tokens (see `letterTokens`), honorifics and legal forms dropped. */
export function nameTokens(raw: string): string[] {
  const tokens = letterTokens(raw);
  if (tokens.length === 0) return [];
  const meaningful = tokens.filter((t) => !NAME_STOP_WORDS.has(t));
  return meaningful.length > 0 ? meaningful : tokens;
}

export function normaliseName(raw: string): NormalisedValue | null {
  const tokens = nameTokens(raw);
  const value = tokens.join(' ');
  if (value.length < 2) return null;
  return { value, matchKey: [...tokens].sort().join(' ') };
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,}$/;

export function normaliseEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return EMAIL.test(email) ? email : null;
}

/** E.164: Kenyan numbers in any local form, other countries with their calling code (`+` or `00`). */
export function normalisePhone(raw: string): string | null {
  const kenyan = normaliseKenyanPhone(raw);
  if (kenyan) return kenyan;
  const compact = raw.replace(/[\s().-]/g, '');
  const match = /^(?:\+|00)([1-9]\d{6,14})$/.exec(compact);
  return match ? `+${match[1]}` : null;
}

/** Identity document numbers and bank accounts: upper case, without spaces, dashes, dots or slashes. */
function normaliseCode(raw: string, min: number, max: number): string | null {
  const code = raw.toUpperCase().replace(/[\s./-]/g, '');
  return code.length >= min && code.length <= max && /^[A-Z0-9]+$/.test(code) ? code : null;
}

export const normaliseDocumentNumber = (raw: string): string | null => normaliseCode(raw, 4, 20);
export const normaliseBankAccount = (raw: string): string | null => normaliseCode(raw, 4, 34);

/**
 * Hex (0x…) and bech32 addresses are case-insensitive, so they are lower-cased; base58 addresses are
 * case-sensitive and kept as they are.
 */
export function normaliseCryptoAddress(raw: string): string | null {
  const address = raw.replace(/\s/g, '');
  if (!/^[A-Za-z0-9:_-]{20,120}$/.test(address)) return null;
  if (/^0x[0-9a-f]+$/i.test(address) || /^(bc1|tb1|ltc1|bcrt1)/i.test(address)) return address.toLowerCase();
  return address;
}

/** ISO 3166-1 alpha-2. */
export function normaliseCountry(raw: string): string | null {
  const code = raw.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) ? code : null;
}

/** Normalise a value of a blocklist type; null when it is not a valid value of that type. */
export function normaliseBlocklistValue(type: BlocklistType, raw: string): NormalisedValue | null {
  if (type === 'name') return normaliseName(raw);
  const normalisers: Record<Exclude<BlocklistType, 'name'>, (raw: string) => string | null> = {
    email: normaliseEmail,
    phone: normalisePhone,
    national_id: normaliseDocumentNumber,
    bank_account: normaliseBankAccount,
    crypto_address: normaliseCryptoAddress,
    country: normaliseCountry,
  };
  const value = normalisers[type](raw);
  return value === null ? null : { value, matchKey: value };
}

/** What a valid value of each type looks like, for validation messages. */
export const BLOCKLIST_VALUE_HINTS: Record<BlocklistType, string> = {
  name: 'a person or entity name of at least 2 letters',
  email: 'an e-mail address',
  phone: 'a phone number in E.164 form, e.g. +254712345678',
  national_id: 'an identity document number of 4 to 20 letters and digits',
  bank_account: 'a bank account number of 4 to 34 letters and digits',
  crypto_address: 'a wallet address of 20 to 120 characters',
  country: 'an ISO 3166-1 alpha-2 country code, e.g. KE',
};
