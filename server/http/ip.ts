import net from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { Config } from '../config.js';

const unmap = (ip: string) => (ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip);

/** The set of TRUSTED_PROXIES as a BlockList. */
export function trustList(cidrs: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const cidr of cidrs) {
    const [addr, bits] = cidr.split('/');
    const type = net.isIPv6(addr) ? 'ipv6' : 'ipv4';
    if (!net.isIP(addr)) throw new Error(`TRUSTED_PROXIES: ${cidr} is not a CIDR`);
    list.addSubnet(addr, Number(bits ?? (type === 'ipv6' ? 128 : 32)), type);
  }
  return list;
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
export function clientIp(c: Context, config: Config, trusted: net.BlockList): string {
  const peer = socketIp(c);
  const type = net.isIPv6(peer) ? 'ipv6' : 'ipv4';
  if (!net.isIP(peer) || !trusted.check(peer, type)) return peer;
  const edge = c.req.header(config.clientIpHeader)?.trim();
  if (edge && net.isIP(unmap(edge))) return unmap(edge);
  const first = c.req.header('x-forwarded-for')?.split(',')[0]?.trim();
  if (first && net.isIP(unmap(first))) return unmap(first);
  return peer;
}
