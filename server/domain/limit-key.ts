import net from 'node:net';

/** The 16-bit groups of an IPv6 address in full, as numbers (zone id dropped, a trailing IPv4 part split). */
function ipv6Groups(ip: string): number[] {
  let s = ip.split('%')[0];
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    s = `${s.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const gap = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...gap, ...right].map((g) => Number.parseInt(g, 16));
}

/**
 * What per-IP limits count a client by (form rate limits, the email-code throttle, the sandbox
 * allowance): an IPv4 address itself, an IPv6 address its /64. One subscriber usually holds a whole
 * /64 and may use any address in it, so counting single IPv6 addresses would let one client walk
 * past every limit.
 */
export function limitKey(ip: string): string {
  if (!net.isIPv6(ip)) return ip;
  return `${ipv6Groups(ip)
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
