/** Normalise a Kenyan phone number to E.164 (`+2547XXXXXXXX` or `+2541XXXXXXXX`); null when it is not one. */
export function normaliseKenyanPhone(raw: string): string | null {
  const compact = raw.replace(/[\s()-]/g, '');
  const match = /^(?:\+?254|0)([17]\d{8})$/.exec(compact);
  return match ? `+254${match[1]}` : null;
}
