import net from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { Config } from '../config.js';

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
 * Client IP: from a trusted proxy, CLIENT_IP_HEADER then the first hop of X-Forwarded-For;
 * from anyone else the socket address, so a client on the internet cannot pick its own IP.
 */
export function clientIp(c: Context, config: Config, trusted: TrustCheck): string {
  const peer = socketIp(c);
  if (!trusted(peer)) return peer;
  const edge = c.req.header(config.clientIpHeader)?.trim();
  if (edge && net.isIP(unmap(edge))) return unmap(edge);
  const first = c.req.header('x-forwarded-for')?.split(',')[0]?.trim();
  if (first && net.isIP(unmap(first))) return unmap(first);
  return peer;
}
