import dns from 'node:dns';
import net from 'node:net';

// Addresses an outbound call must not reach from a production server: loopback, private,
// link-local (incl. the 169.254.169.254 metadata service), CGNAT, documentation, benchmarking,
// multicast, reserved and unspecified ranges, v4 and v6.
const BLOCKED = new net.BlockList();
for (const [addr, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(addr, bits, 'ipv4');
}
for (const [addr, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(addr, bits, 'ipv6');
}

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

/** True for an address an outbound call must not reach (anything that is not a public unicast IP). */
export function isBlockedAddress(ip: string): boolean {
  const addr = ip.replace(/^\[|\]$/g, '').split('%')[0];
  if (net.isIPv4(addr)) return BLOCKED.check(addr, 'ipv4') || addr === '255.255.255.255';
  if (!net.isIPv6(addr)) return true; // not an IP at all: refuse rather than guess
  const v4 = embeddedV4(addr);
  if (v4) return isBlockedAddress(v4);
  return BLOCKED.check(addr, 'ipv6');
}

export const REFUSED_HINT = 'OUTBOUND_ALLOW_PRIVATE=true allows it on a trusted network';

export class RefusedTarget extends Error {
  readonly code = 'ERR_OUTBOUND_REFUSED';
  constructor(host: string, address: string) {
    super(
      `refused: ${host} resolves to ${address}, a private, loopback or otherwise non-public address (${REFUSED_HINT})`,
    );
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
    const bad = list.find((a) => isBlockedAddress(a.address));
    if (bad || !list.length) return callback(new RefusedTarget(hostname, bad?.address ?? 'nothing'), '');
    if (options.all) return callback(null, list);
    return callback(null, list[0].address, list[0].family);
  });
}
