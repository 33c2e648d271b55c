import { lookup } from 'node:dns/promises';
import net, { BlockList } from 'node:net';

/**
 * Where webhooks may go. Merchants give us URLs we then call from inside our network, so private,
 * loopback, link-local and other non-public addresses are refused (server-side request forgery), unless
 * WEBHOOKS_ALLOW_PRIVATE_TARGETS allows them (local development, tests). Checked at registration and
 * again before every delivery, because a name may resolve elsewhere later. A delivery resolves the name
 * once, checks every address it got, and connects to those very addresses (see `transport.ts`): a DNS
 * server that answers a public address to the check and 127.0.0.1 to the connection (DNS rebinding) is
 * never asked twice.
 */

const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
// IPv4-mapped addresses (::ffff:a.b.c.d) are checked against the IPv4 rules by BlockList itself.
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback, and the deprecated IPv4-compatible ::a.b.c.d
  ['64:ff9b::', 96], // NAT64: a gateway would translate it to any IPv4 address, private ones included
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments, Teredo included
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4, which embeds any IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0 || address.includes('%')) return false; // a zone index only makes sense on a local link
  return !nonPublic.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

/** Every address a host name resolves to. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export interface TargetPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: any address will do (local development, tests). */
  allowPrivate: boolean;
  /** Only `https://` targets: everywhere but a local run (docs/events.md#webhooks). */
  requireHttps?: boolean;
  resolve?: Resolver;
  /** Which resolved addresses may be called; by default the public ones, or all of them when `allowPrivate`. */
  isAllowedAddress?: (address: string) => boolean;
}

/** A checked target: its URL, and the addresses that were checked, which are the only ones to connect to. */
export interface VettedTarget {
  url: URL;
  /** The host without IPv6 brackets. */
  host: string;
  addresses: string[];
}

function parseTarget(raw: string, requireHttps = false): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetError('must be an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookTargetError('must be an http or https URL');
  // Events carry payment details and are signed, not encrypted: in the clear any hop could read them.
  if (requireHttps && url.protocol !== 'https:') {
    throw new WebhookTargetError('must be an https URL (plain http is taken only in a local development or test run)');
  }
  if (url.username || url.password) throw new WebhookTargetError('must not carry credentials');
  return url;
}

/**
 * Resolve the target's host once and check every address. Throws WebhookTargetError naming what is
 * wrong; answers the addresses to connect to.
 */
export async function vetWebhookTarget(raw: string, policy: TargetPolicy): Promise<VettedTarget> {
  const url = parseTarget(raw, policy.requireHttps);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = net.isIP(host) ? [host] : await (policy.resolve ?? systemResolver)(host);
  } catch {
    throw new WebhookTargetError(`host ${host} does not resolve`);
  }
  const allowed = policy.isAllowedAddress ?? (policy.allowPrivate ? () => true : isPublicAddress);
  if (addresses.length === 0 || !addresses.every((a) => net.isIP(a) !== 0 && allowed(a))) {
    throw new WebhookTargetError('private, loopback and link-local addresses are not allowed');
  }
  return { url, host, addresses };
}

/**
 * The registration check: throws WebhookTargetError naming what is wrong with `raw` as a webhook target.
 * With private targets allowed the host need not resolve yet (it is resolved again at every delivery).
 */
export async function checkWebhookTarget(raw: string, policy: Omit<TargetPolicy, 'isAllowedAddress'>): Promise<URL> {
  if (policy.allowPrivate) return parseTarget(raw, policy.requireHttps);
  return (await vetWebhookTarget(raw, policy)).url;
}
