/**
 * SSRF guard for every URL a client gives us (http_request nodes, callback_url, mediaUrl).
 *
 * - only `http:` and `https:` URLs, without credentials;
 * - the target must not be loopback, private (RFC 1918, CGNAT), link-local (including the cloud metadata
 *   address 169.254.169.254), unique-local / link-local IPv6, multicast, reserved or documentation ranges,
 *   also when written as IPv4-mapped or NAT64 IPv6;
 * - host names are checked **at connection time** through `guardedLookup` (every address DNS returns must be
 *   public), so a name cannot resolve to a public address for the check and a private one for the connection.
 *
 * `allowPrivate` (config `ALLOW_PRIVATE_NETWORK_TARGETS=true`) turns the address check off for local development
 * and tests; the scheme check always applies.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Appended to every refusal of a non-public address: the one setting that allows such targets (never in production). */
export const PRIVATE_TARGETS_HINT =
  'private network targets are refused unless ALLOW_PRIVATE_NETWORK_TARGETS=true (development and tests only)';

export class BlockedTargetError extends Error {
  readonly code = 'blocked_target';
  constructor(message: string) {
    super(message);
    this.name = 'BlockedTargetError';
  }
}

const blocked = new BlockList();
const V4: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local / metadata'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const V6: Array<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
  ['2001:db8::', 32, 'documentation'],
  ['100::', 64, 'discard'],
];
for (const [net, prefix] of V4) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of V6) blocked.addSubnet(net, prefix, 'ipv6');
/** One list per range, to name the reason. */
const ranges = [
  ...V4.map(([net, prefix, reason]) => ({ list: subnet(net, prefix, 'ipv4'), family: 'ipv4' as const, reason })),
  ...V6.map(([net, prefix, reason]) => ({ list: subnet(net, prefix, 'ipv6'), family: 'ipv6' as const, reason })),
];

function subnet(net: string, prefix: number, family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return list;
}

function reasonOf(ip: string, family: 'ipv4' | 'ipv6'): string | null {
  if (!blocked.check(ip, family)) return null;
  return ranges.find((r) => r.family === family && r.list.check(ip, family))?.reason ?? 'reserved';
}

/** The IPv4 address embedded in an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 (64:ff9b::/96) address. */
function embeddedIpv4(ipv6: string): string | null {
  const lower = ipv6.toLowerCase();
  const dotted = lower.match(/^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) return dotted[1];
  const hex = lower.match(/^(?:::ffff:|::|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  if (hex) {
    const hi = parseInt(hex[1], 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

/** Why an IP address is not a public target (`loopback`, `private`...), or null when it is public. */
export function blockedAddressReason(ip: string): string | null {
  const address = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return reasonOf(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    return v4 ? reasonOf(v4, 'ipv4') : reasonOf(address, 'ipv6');
  }
  return 'not an IP address';
}

export function isPublicAddress(ip: string): boolean {
  return blockedAddressReason(ip) === null;
}

export interface SsrfOptions {
  /** ALLOW_PRIVATE_NETWORK_TARGETS: skip the address check (scheme and credentials are still checked). */
  allowPrivate: boolean;
}

/**
 * Parses and checks a URL before any connection: scheme, credentials, and literal IP hosts.
 * Host names are checked when connecting (guardedLookup) or by `assertPublicTarget`.
 */
export function checkTargetUrl(raw: string, options: SsrfOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedTargetError(`invalid URL "${raw.slice(0, 200)}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new BlockedTargetError(`URL scheme "${url.protocol.replace(/:$/, '')}" is not allowed (http or https only)`);
  if (url.username || url.password) throw new BlockedTargetError('URLs with credentials are not allowed');
  if (!url.hostname) throw new BlockedTargetError('URL has no host');
  if (!options.allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const reason = blockedAddressReason(host);
      if (reason)
        throw new BlockedTargetError(`target ${host} is not allowed (${reason} address); ${PRIVATE_TARGETS_HINT}`);
    }
  }
  return url;
}

/**
 * A `lookup` for http.request / net.connect that refuses host names resolving to a non-public address
 * (checked on the addresses actually connected to, which defeats DNS rebinding).
 */
export function guardedLookup(options: SsrfOptions): LookupFunction {
  return ((hostname: string, lookupOptions: Record<string, unknown>, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error);
      const list = addresses as LookupAddress[];
      if (!options.allowPrivate) {
        for (const { address } of list) {
          const reason = blockedAddressReason(address);
          if (reason)
            return callback(
              new BlockedTargetError(
                `target ${hostname} resolves to ${address}, which is not allowed (${reason} address); ${PRIVATE_TARGETS_HINT}`,
              ),
            );
        }
      }
      if (lookupOptions.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(new Error(`no address for ${hostname}`));
      callback(null, first.address, first.family);
    });
  }) as unknown as LookupFunction;
}

/** For callers that cannot pass a lookup (e.g. global fetch): check the URL and every address its host resolves to now. */
export async function assertPublicTarget(raw: string, options: SsrfOptions): Promise<URL> {
  const url = checkTargetUrl(raw, options);
  if (options.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return url;
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, list) => (error ? reject(error) : resolve(list as LookupAddress[]))),
  );
  for (const { address } of addresses) {
    const reason = blockedAddressReason(address);
    if (reason)
      throw new BlockedTargetError(
        `target ${host} resolves to ${address}, which is not allowed (${reason} address); ${PRIVATE_TARGETS_HINT}`,
      );
  }
  return url;
}
