import { lookup } from 'node:dns/promises';
import net, { BlockList } from 'node:net';

/**
 * Where webhooks may go. Merchants give us URLs we then call from inside our network, so private,
 * loopback, link-local and other non-public addresses are refused (server-side request forgery), unless
 * WEBHOOKS_ALLOW_PRIVATE_TARGETS allows them (local development, tests). Checked at registration and
 * again before every delivery, because a name may resolve elsewhere later.
 */

const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped?.[1]) return isPublicAddress(mapped[1]);
    return !nonPublic.check(address, 'ipv6');
  }
  return !nonPublic.check(address, 'ipv4');
}

export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

/** Throws WebhookTargetError naming what is wrong with `raw` as a webhook target. */
export async function checkWebhookTarget(
  raw: string,
  allowPrivate: boolean,
  resolve: (host: string) => Promise<string[]> = async (host) => (await lookup(host, { all: true })).map((a) => a.address),
): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetError('must be an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookTargetError('must be an http or https URL');
  if (url.username || url.password) throw new WebhookTargetError('must not carry credentials');
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = net.isIP(host) ? [host] : await resolve(host);
  } catch {
    throw new WebhookTargetError(`host ${host} does not resolve`);
  }
  if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
    throw new WebhookTargetError('private, loopback and link-local addresses are not allowed');
  }
  return url;
}
