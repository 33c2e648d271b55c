import { isIPv4, isIPv6 } from 'node:net';

/**
 * The key a client's address is rate-limited under. An IPv4 address is one client. An IPv6 client is given
 * a whole /64 by its provider (SLAAC, privacy addresses), so it could rotate through 2^64 addresses and
 * make every guess from a fresh one: it is counted per /64 prefix. An IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`, how a dual-stack socket reports an IPv4 peer) is the IPv4 address it maps.
 * Anything that is not an address (no peer known) is its own key.
 */
export function rateLimitKeyOf(address: string): string {
  const bare = address.trim().toLowerCase();
  if (isIPv4(bare)) return bare;
  const withoutZone = bare.split('%')[0] ?? bare;
  if (!isIPv6(withoutZone)) return bare;
  const hextets = expandIPv6(withoutZone);
  if (hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff) {
    const [hi = 0, lo = 0] = hextets.slice(6);
    return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  }
  return `${hextets
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, `::` expanded and a dotted IPv4 tail converted. */
function expandIPv6(address: string): number[] {
  let text = address;
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
