import type { Config } from '../config.js';
import { ApiError } from '../core/errors.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const LOOPBACK_LISTEN = ['127.0.0.1', 'localhost', '::1', '[::1]'];
const WILDCARD_LISTEN = ['0.0.0.0', '::', '[::]'];

/** The host name of a URL or of a Host header value (lowercase, port and trailing dot left out). */
function hostName(value: string): string | null {
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return null;
  }
}

const originOf = (value: string): string | null => {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin.toLowerCase() : null;
  } catch {
    return null;
  }
};

/**
 * Who may call POST /mcp, against DNS rebinding (the MCP streamable HTTP transport asks servers
 * to check Origin): the Host a request names must be the service's own (the host of
 * PUBLIC_BASE_URL, the listen HOST, and the loopback names when it listens on loopback or on every
 * interface) or a host of MCP_ALLOWED_ORIGINS; an Origin, when sent, must be the service's own
 * origin, the origin of the Host it called, or one of MCP_ALLOWED_ORIGINS. Host names are compared
 * without ports: a rebinding page can choose a port, never our name.
 */
export function callerGuard(config: Pick<Config, 'publicBaseUrl' | 'host' | 'mcpAllowedOrigins'>) {
  const hosts = new Set<string>();
  const add = (v: string) => {
    const h = hostName(v);
    if (h) hosts.add(h);
  };
  add(config.publicBaseUrl);
  for (const o of config.mcpAllowedOrigins) add(o);
  const listen = config.host.toLowerCase();
  if (WILDCARD_LISTEN.includes(listen) || LOOPBACK_LISTEN.includes(listen)) for (const n of LOOPBACK_NAMES) add(n);
  else add(listen.includes(':') && !listen.startsWith('[') ? `[${listen}]` : listen);
  const origins = new Set([originOf(config.publicBaseUrl), ...config.mcpAllowedOrigins].filter(Boolean));
  const hint =
    'Call /mcp at the service’s own address (PUBLIC_BASE_URL), or add the origin to MCP_ALLOWED_ORIGINS on the server.';

  return (host: string | undefined, origin: string | undefined): void => {
    if (host !== undefined) {
      const name = hostName(host);
      if (!name || !hosts.has(name)) {
        throw new ApiError('forbidden', `Host ${JSON.stringify(host)} is not this service's address.`, { hint });
      }
    }
    if (origin === undefined) return;
    const o = originOf(origin);
    const own = o !== null && host !== undefined && new URL(o).host === host.toLowerCase();
    if (o === null || !(own || origins.has(o))) {
      throw new ApiError('forbidden', `Origin ${JSON.stringify(origin)} may not call /mcp.`, { hint });
    }
  };
}

const guards = new WeakMap<object, ReturnType<typeof callerGuard>>();

/** callerGuard for a config, built once. */
export function callerGuardOf(config: Config) {
  let g = guards.get(config);
  if (!g) {
    g = callerGuard(config);
    guards.set(config, g);
  }
  return g;
}
