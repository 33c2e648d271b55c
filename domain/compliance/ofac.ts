import { parse } from 'csv-parse/sync';
import type { BlocklistType } from './normalise';

/**
 * The OFAC Specially Designated Nationals list in its CSV distribution (treasury.gov, `sdn.csv` and
 * `alt.csv`): no header row, `-0-` for an empty field.
 *
 * - SDN rows, 12 columns: ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign, Vess_type, Tonnage,
 *   GRT, Vess_flag, Vess_owner, Remarks. Individuals are named "LAST, First"; the remarks carry
 *   identifiers such as "Passport A1234567 (Kenya)", "National ID No. 12345678 (Kenya)",
 *   "Email Address x@example.com", "Digital Currency Address - XBT 1A2b…", "Phone Number +254…".
 * - ALT rows (aliases), 5 columns: ent_num, alt_num, alt_type, alt_name, alt_remarks.
 *
 * Address rows (`add.csv`) are not used: a listed party's address does not blocklist a country.
 */

export interface SanctionsListing {
  type: BlocklistType;
  value: string;
  reason: string;
  /** The row in the source list: `sdn:<ent_num>` or `alt:<alt_num>`. */
  externalRef: string;
}

const field = (raw: string | undefined): string | null => {
  const value = (raw ?? '').trim();
  return value === '' || value === '-0-' ? null : value;
};

/** "MWANGI, John Kamau" → "John Kamau MWANGI"; other names stay as they are. */
function naturalOrder(name: string, sdnType: string | null): string {
  const parts = name.split(',');
  if (sdnType?.toLowerCase() !== 'individual' || parts.length !== 2) return name;
  return `${parts[1].trim()} ${parts[0].trim()}`;
}

const REMARK_IDENTIFIERS: { type: BlocklistType; pattern: RegExp; label: string }[] = [
  { type: 'email', pattern: /Email Address ([^\s;,]+@[^\s;,]*[^\s;,.])/gi, label: 'e-mail' },
  { type: 'crypto_address', pattern: /Digital Currency Address - [A-Za-z0-9]+ ([A-Za-z0-9]{20,120})/g, label: 'digital currency address' },
  { type: 'national_id', pattern: /National ID No\. ([A-Za-z0-9-]{4,24})/gi, label: 'national ID' },
  { type: 'national_id', pattern: /Passport ([A-Za-z0-9-]{4,24})/gi, label: 'passport' },
  { type: 'phone', pattern: /Phone(?: Number)? (\+?[\d][\d ()-]{6,20}\d)/gi, label: 'phone' },
];

/** Every blocklistable value of an OFAC SDN CSV file (SDN or ALT rows, told apart by their width). */
export function parseOfacCsv(text: string): SanctionsListing[] {
  const rows: string[][] = parse(text, {
    bom: true,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    trim: true,
  });
  const listings: SanctionsListing[] = [];
  for (const row of rows) {
    const entNum = field(row[0]);
    if (!entNum || !/^\d+$/.test(entNum)) continue;
    if (row.length >= 12) {
      const name = field(row[1]);
      const sdnType = field(row[2]);
      const program = field(row[3]) ?? 'unspecified program';
      const kind = sdnType ?? 'entity';
      if (name) {
        listings.push({
          type: 'name',
          value: naturalOrder(name, sdnType),
          reason: `OFAC SDN ${kind}, program ${program} (entry ${entNum})`,
          externalRef: `sdn:${entNum}`,
        });
      }
      const remarks = field(row[11]) ?? '';
      for (const { type, pattern, label } of REMARK_IDENTIFIERS) {
        for (const match of remarks.matchAll(pattern)) {
          listings.push({
            type,
            value: match[1],
            reason: `OFAC SDN ${label} of ${name ?? `entry ${entNum}`}, program ${program} (entry ${entNum})`,
            externalRef: `sdn:${entNum}`,
          });
        }
      }
    } else if (row.length === 5) {
      const altNum = field(row[1]);
      const altType = field(row[2]) ?? 'aka';
      const name = field(row[3]);
      if (name && altNum) {
        listings.push({
          type: 'name',
          value: naturalOrder(name, name.includes(',') ? 'individual' : null),
          reason: `OFAC SDN alias (${altType}) of entry ${entNum}`,
          externalRef: `alt:${altNum}`,
        });
      }
    }
  }
  return listings;
}
