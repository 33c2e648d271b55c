import { normaliseDocumentNumber, normaliseEmail, normaliseName, normalisePhone } from './compliance/normalise';

/**
 * Own interest (README, "Four-eyes requests"; docs/compliance.md#own-interest): no staff member decides a
 * screening review, a KYC decision or an appeal when a party to it is the staff member, or carries the
 * staff member's own name, phone, e-mail or ID number. A second account opened under the officer's name is
 * the officer as far as this rule goes.
 */

/** Who someone is, as far as the rule reads it: any field may be unknown. */
export interface Identity {
  userId?: string | null;
  name?: string | null;
  phone?: string | null;
  email?: string | null;
  idNumber?: string | null;
}

/** A party to the decision (the customer under review, the payer, the payee, the appellant), and what it is. */
export interface Party extends Identity {
  role: string;
}

export type SharedField = 'account' | 'name' | 'phone' | 'email' | 'id_number';

export interface OwnInterest {
  role: string;
  field: SharedField;
}

const nameKey = (raw: string | null | undefined): string | null => (raw ? (normaliseName(raw)?.matchKey ?? null) : null);
const phoneKey = (raw: string | null | undefined): string | null => (raw ? normalisePhone(raw) : null);
const emailKey = (raw: string | null | undefined): string | null => (raw ? normaliseEmail(raw) : null);
const idKey = (raw: string | null | undefined): string | null => (raw ? normaliseDocumentNumber(raw) : null);

const KEYS: [SharedField, (who: Identity) => string | null][] = [
  ['account', (who) => who.userId ?? null],
  ['name', (who) => nameKey(who.name)],
  ['phone', (who) => phoneKey(who.phone)],
  ['email', (who) => emailKey(who.email)],
  ['id_number', (who) => idKey(who.idNumber)],
];

/**
 * The first party in which `staff` has an own interest, and what they share, or null when none. Names are
 * compared by their tokens in any order, after folding case, accents and honorifics; phones in E.164; e-mails
 * in lower case; ID numbers without spaces or dashes.
 */
export function ownInterest(staff: Identity, parties: readonly Party[]): OwnInterest | null {
  const mine = KEYS.map(([field, key]) => [field, key(staff)] as const).filter((pair): pair is [SharedField, string] => pair[1] !== null);
  for (const party of parties) {
    for (const [field, value] of mine) {
      const key = KEYS.find(([f]) => f === field)?.[1];
      if (key && key(party) === value) return { role: party.role, field };
    }
  }
  return null;
}

/**
 * A screened value is a party of every kind at once: a screened phone is compared with the staff member's
 * phone, a screened name with their name, and so on (a value of another kind never normalises to a match).
 */
export const screenedValueParty = (value: string): Party => ({
  role: 'screened value',
  name: value,
  phone: value,
  email: value,
  idNumber: value,
});

/** What the refusal says: which party, and what it shares, never the value itself. */
export const ownInterestMessage = (found: OwnInterest, what: string): string =>
  `nobody decides ${what} in which they have an own interest: the ${found.role} ${found.field === 'account' ? 'is you' : `shares your ${found.field.replace('_', ' ')}`}`;
