import { XMLParser } from 'fast-xml-parser';
import type { SanctionsListing } from './ofac';

/**
 * The UN Security Council consolidated list and the EU financial sanctions list, in their XML
 * distributions, read into the same listings as OFAC's: every name and alias (with the names printed in
 * their original script), and the identity documents. Each listing points at its entry in its list.
 *
 * - UN (`consolidated.xml`): `CONSOLIDATED_LIST` → `INDIVIDUALS/INDIVIDUAL` and `ENTITIES/ENTITY`, each
 *   with `DATAID`, `REFERENCE_NUMBER`, `UN_LIST_TYPE`, `FIRST_NAME` … `FOURTH_NAME`,
 *   `NAME_ORIGINAL_SCRIPT`, `…_ALIAS/ALIAS_NAME` and `INDIVIDUAL_DOCUMENT` (`TYPE_OF_DOCUMENT`, `NUMBER`).
 * - EU (`xmlFullSanctionsList_1_1`): `export/sanctionEntity` with `logicalId`, `euReferenceNumber`,
 *   `subjectType/@code`, `regulation/@programme`, `nameAlias/@wholeName` (one per alias and script) and
 *   `identification` (`@identificationTypeCode`, `@number`).
 */

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  isArray: (name) =>
    [
      'INDIVIDUAL',
      'ENTITY',
      'INDIVIDUAL_ALIAS',
      'ENTITY_ALIAS',
      'INDIVIDUAL_DOCUMENT',
      'sanctionEntity',
      'nameAlias',
      'identification',
      'regulation',
    ].includes(name),
});

type Node = Record<string, unknown>;

const text = (value: unknown): string | null => {
  if (typeof value === 'string' || typeof value === 'number') {
    const s = String(value).trim();
    return s === '' ? null : s;
  }
  if (value && typeof value === 'object' && '#text' in value) return text((value as Node)['#text']);
  return null;
};
const nodes = (value: unknown): Node[] => (Array.isArray(value) ? value.filter((v): v is Node => typeof v === 'object' && v !== null) : []);
const child = (node: Node | undefined, name: string): Node | undefined => {
  const value = node?.[name];
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Node) : undefined;
};

/** A document type the blocklist screens: passports and national identity cards. */
const DOCUMENT_TYPES = /passport|^id$|national identi|identity card/i;

function pushName(listings: SanctionsListing[], seen: Set<string>, value: string | null, reason: string, externalRef: string): void {
  if (!value) return;
  const key = value.toLowerCase();
  if (seen.has(key)) return;
  seen.add(key);
  listings.push({ type: 'name', value, reason, externalRef });
}

/** Every name, alias and identity document of the UN consolidated list. */
export function parseUnConsolidatedXml(source: string): SanctionsListing[] {
  const root = child(xml.parse(source) as Node, 'CONSOLIDATED_LIST');
  if (!root) throw new Error('not a UN consolidated list: no CONSOLIDATED_LIST element');
  const listings: SanctionsListing[] = [];
  const parties = [
    ...nodes(child(root, 'INDIVIDUALS')?.INDIVIDUAL).map((node) => ({ node, kind: 'individual', aliases: 'INDIVIDUAL_ALIAS' })),
    ...nodes(child(root, 'ENTITIES')?.ENTITY).map((node) => ({ node, kind: 'entity', aliases: 'ENTITY_ALIAS' })),
  ];
  for (const { node, kind, aliases } of parties) {
    const dataId = text(node.DATAID);
    if (!dataId) continue;
    const reference = text(node.REFERENCE_NUMBER) ?? `DATAID ${dataId}`;
    const programme = text(node.UN_LIST_TYPE) ?? 'unspecified';
    const reason = `UN Security Council consolidated list ${kind}, ${programme} (${reference})`;
    const ref = `un:${dataId}`;
    const seen = new Set<string>();
    const name = ['FIRST_NAME', 'SECOND_NAME', 'THIRD_NAME', 'FOURTH_NAME']
      .map((field) => text(node[field]))
      .filter(Boolean)
      .join(' ');
    pushName(listings, seen, name || null, reason, ref);
    pushName(listings, seen, text(node.NAME_ORIGINAL_SCRIPT), `${reason}, name in original script`, ref);
    for (const alias of nodes(node[aliases])) pushName(listings, seen, text(alias.ALIAS_NAME), `${reason}, alias`, ref);
    for (const document of nodes(node.INDIVIDUAL_DOCUMENT)) {
      const type = text(document.TYPE_OF_DOCUMENT) ?? '';
      const number = text(document.NUMBER);
      if (number && DOCUMENT_TYPES.test(type))
        listings.push({ type: 'national_id', value: number, reason: `${reason}, ${type.toLowerCase()}`, externalRef: ref });
    }
  }
  return listings;
}

/** Every name, alias and identity document of the EU financial sanctions list. */
export function parseEuSanctionsXml(source: string): SanctionsListing[] {
  const root = child(xml.parse(source) as Node, 'export');
  if (!root) throw new Error('not an EU financial sanctions list: no export element');
  const listings: SanctionsListing[] = [];
  for (const entity of nodes(root.sanctionEntity)) {
    const logicalId = text(entity['@logicalId']);
    if (!logicalId) continue;
    const kind = text(child(entity, 'subjectType')?.['@code']) ?? 'party';
    const programme = text(nodes(entity.regulation)[0]?.['@programme']) ?? 'unspecified';
    const reference = text(entity['@euReferenceNumber']) ?? `logical id ${logicalId}`;
    const reason = `EU financial sanctions list ${kind}, programme ${programme} (${reference})`;
    const ref = `eu:${logicalId}`;
    const seen = new Set<string>();
    for (const alias of nodes(entity.nameAlias)) {
      const whole =
        text(alias['@wholeName']) ??
        (['@firstName', '@middleName', '@lastName']
          .map((field) => text(alias[field]))
          .filter(Boolean)
          .join(' ') ||
          null);
      const language = text(alias['@nameLanguage']);
      pushName(listings, seen, whole, language ? `${reason}, name (${language})` : reason, ref);
    }
    for (const identification of nodes(entity.identification)) {
      const type = text(identification['@identificationTypeCode']) ?? '';
      const number = text(identification['@number']);
      if (number && DOCUMENT_TYPES.test(type))
        listings.push({ type: 'national_id', value: number, reason: `${reason}, ${type}`, externalRef: ref });
    }
  }
  return listings;
}
