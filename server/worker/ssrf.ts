import dns from 'node:dns';
import net from 'node:net';

// Addresses an outbound call must not reach from a production server, by class: loopback, private,
// link-local (incl. the 169.254.169.254 metadata service), CGNAT, documentation, benchmarking,
// multicast, reserved and unspecified ranges, v4 and v6, and the v6 prefixes that tunnel or
// translate to an IPv4 address (NAT64, 6to4, Teredo, IPv4-translated) the v4 rules would judge.
const RANGES: [family: 'ipv4' | 'ipv6', address: string, bits: number, kind: string][] = [
  ['ipv4', '0.0.0.0', 8, 'unspecified ("this network")'],
  ['ipv4', '10.0.0.0', 8, 'private'],
  ['ipv4', '100.64.0.0', 10, 'shared (CGNAT)'],
  ['ipv4', '127.0.0.0', 8, 'loopback'],
  ['ipv4', '169.254.0.0', 16, 'link-local'],
  ['ipv4', '172.16.0.0', 12, 'private'],
  ['ipv4', '192.0.0.0', 24, 'IETF protocol assignment'],
  ['ipv4', '192.0.2.0', 24, 'documentation'],
  ['ipv4', '192.168.0.0', 16, 'private'],
  ['ipv4', '198.18.0.0', 15, 'benchmarking'],
  ['ipv4', '198.51.100.0', 24, 'documentation'],
  ['ipv4', '203.0.113.0', 24, 'documentation'],
  ['ipv4', '224.0.0.0', 4, 'multicast'],
  ['ipv4', '240.0.0.0', 4, 'reserved'],
  ['ipv6', '::', 128, 'unspecified'],
  ['ipv6', '::1', 128, 'loopback'],
  ['ipv6', '::ffff:0:0:0', 96, 'IPv4-translated'],
  ['ipv6', '64:ff9b::', 96, 'NAT64'],
  ['ipv6', '64:ff9b:1::', 48, 'NAT64 (local)'],
  ['ipv6', '100::', 64, 'discard-only'],
  ['ipv6', '2001::', 32, 'Teredo'],
  ['ipv6', '2001:db8::', 32, 'documentation'],
  ['ipv6', '2002::', 16, '6to4'],
  ['ipv6', 'fc00::', 7, 'unique local (private)'],
  ['ipv6', 'fe80::', 10, 'link-local'],
  ['ipv6', 'fec0::', 10, 'site-local'],
  ['ipv6', 'ff00::', 8, 'multicast'],
];
const BLOCKED = RANGES.map(([family, address, bits, kind]) => {
  const list = new net.BlockList();
  list.addSubnet(address, bits, family);
  return { family, list, kind };
});

/**
 * The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) IPv6
 * address, whichever way it is written (the URL parser normalizes both to hex groups).
 */
function embeddedV4(ip: string): string | null {
  let host: string;
  try {
    host = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const m = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(host);
  if (!m) return null;
  const a = Number.parseInt(m[1], 16);
  const b = Number.parseInt(m[2], 16);
  return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
}

/**
 * The class of an address an outbound call must not reach ("loopback", "private", "6to4", …), or
 * null for a public unicast IP. Anything that is not an IP at all is refused rather than guessed.
 */
export function blockedKind(ip: string): string | null {
  const addr = ip.replace(/^\[|\]$/g, '').split('%')[0];
  if (net.isIPv4(addr)) {
    if (addr === '255.255.255.255') return 'broadcast';
    return BLOCKED.find((b) => b.family === 'ipv4' && b.list.check(addr, 'ipv4'))?.kind ?? null;
  }
  if (!net.isIPv6(addr)) return 'unparsable';
  const v4 = embeddedV4(addr);
  if (v4) {
    const kind = blockedKind(v4);
    return kind ? `IPv4-mapped ${kind}` : null;
  }
  return BLOCKED.find((b) => b.family === 'ipv6' && b.list.check(addr, 'ipv6'))?.kind ?? null;
}

/** True for an address an outbound call must not reach (anything that is not a public unicast IP). */
export function isBlockedAddress(ip: string): boolean {
  return blockedKind(ip) !== null;
}

export const REFUSED_HINT = 'OUTBOUND_ALLOW_PRIVATE=true allows it on a trusted network';

/**
 * The guard's refusal. Its message names the class of the refused address only: never the address
 * or the name a lookup returned, since the message reaches API callers (last_error, destination
 * tests) and must not map the server's internal network for them.
 */
export class RefusedTarget extends Error {
  readonly code = 'ERR_OUTBOUND_REFUSED';
  constructor(kind: string) {
    super(`refused: the target's address is of a non-public class: ${kind} (${REFUSED_HINT})`);
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for net.connect that resolves as usual and then refuses non-public addresses, so the
 * check applies to the address actually dialled (a DNS answer cannot change between check and use).
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    const list = addresses as dns.LookupAddress[];
    const bad = list.map((a) => blockedKind(a.address)).find((kind) => kind !== null);
    if (bad || !list.length) return callback(new RefusedTarget(bad ?? 'none (the name resolved to no address)'), '');
    if (options.all) return callback(null, list);
    return callback(null, list[0].address, list[0].family);
  });
}
