import net from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { Config } from '../config.js';

export { limitKey } from '../domain/limit-key.js';

const unmap = (ip: string) => (ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip);

/** Whether a peer address is one of TRUSTED_PROXIES (from the address as the socket gives it). */
export type TrustCheck = (peer: string) => boolean;

/** Peer addresses remembered at most; past that the memory starts over. */
const REMEMBERED = 10_000;

/**
 * The set of TRUSTED_PROXIES as a check. A BlockList lookup builds a SocketAddress each time, a
 * noticeable cost per request; the answer per peer address is remembered (a few proxies or
 * clients, usually).
 */
export function trustList(cidrs: string[]): TrustCheck {
  const list = new net.BlockList();
  for (const cidr of cidrs) {
    const [addr, bits] = cidr.split('/');
    const type = net.isIPv6(addr) ? 'ipv6' : 'ipv4';
    if (!net.isIP(addr)) throw new Error(`TRUSTED_PROXIES: ${cidr} is not a CIDR`);
    list.addSubnet(addr, Number(bits ?? (type === 'ipv6' ? 128 : 32)), type);
  }
  const known = new Map<string, boolean>();
  return (peer) => {
    let trusted = known.get(peer);
    if (trusted === undefined) {
      const type = net.isIPv6(peer) ? 'ipv6' : 'ipv4';
      trusted = net.isIP(peer) !== 0 && list.check(peer, type);
      if (known.size >= REMEMBERED) known.clear();
      known.set(peer, trusted);
    }
    return trusted;
  };
}

function socketIp(c: Context): string {
  try {
    return unmap(getConnInfo(c).remote.address ?? '127.0.0.1');
  } catch {
    return '127.0.0.1'; // in-process requests (app.request) come from this machine
  }
}

/**
 * One address as a proxy writes it: bare, IPv4 with a port (`1.2.3.4:5678`) or IPv6 in brackets
 * with or without a port (`[2001:db8::1]:5678`); null for anything else (`unknown`, a name, junk).
 */
function address(raw: string | undefined): string | null {
  let s = raw?.trim() ?? '';
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) s = bracketed[1];
  else if (/^[\d.]+:\d+$/.test(s)) s = s.slice(0, s.lastIndexOf(':'));
  return net.isIP(s) ? unmap(s) : null;
}

/**
 * The client named by X-Forwarded-For, read from the right. Each proxy appends the address it was
 * connected from, so the rightmost entries are written by our own proxies and anything to their
 * left may have been sent by the client. Walking leftwards past trusted proxies, the first address
 * that is not trusted is the client (an honest chain's first hop); when every entry is trusted, the
 * leftmost. An entry that is not an address ends the walk at the hop before it: no trusted proxy
 * vouched for what lies further left.
 */
export function forwardedClient(header: string | undefined, peer: string, trusted: TrustCheck): string {
  if (!header) return peer;
  const hops = header.split(',');
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = address(hops[i]);
    if (!hop) break;
    client = hop;
    if (!trusted(hop)) break;
  }
  return client;
}

/**
 * Client IP: from a peer in TRUSTED_PROXIES, CLIENT_IP_HEADER when it is set (an edge such as
 * Cloudflare writes it), else X-Forwarded-For read from the right; from anyone else the socket
 * address. Either way a client cannot pick its own IP by sending a header.
 */
export function clientIp(c: Context, config: Config, trusted: TrustCheck): string {
  const peer = socketIp(c);
  if (!trusted(peer)) return peer;
  const edge = config.clientIpHeader ? address(c.req.header(config.clientIpHeader)) : null;
  return edge ?? forwardedClient(c.req.header('x-forwarded-for'), peer, trusted);
}
