/**
 * What an origin a person names (a form's allowed_origins, the quickstart's and a sandbox's origin)
 * may be. `new URL()` accepts hosts with `'`, `$`, `(`, `{` and `,`, and an origin is written into
 * shell lines (the verify curl), snippets and headers: only a plain host name gets stored.
 */

/** One DNS label: letters, digits and inner hyphens, 1 to 63 characters (as `new URL()` lowercases it). */
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const DNS_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);
const IPV4 = /^(?:\d{1,3}\.){3}\d{1,3}$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;

/** A hostname as `new URL()` writes it that is a plain DNS name or an IP literal (IPv4, bracketed IPv6). */
export function isPlainHost(hostname: string): boolean {
  if (hostname.length === 0 || hostname.length > 253) return false;
  return IPV4.test(hostname) || IPV6.test(hostname) || DNS_NAME.test(hostname);
}

/** An http(s) URL whose host is a plain DNS name or IP literal (its path, if any, is ignored). */
export function isPlainOrigin(value: string): boolean {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return false;
  }
  return (u.protocol === 'http:' || u.protocol === 'https:') && isPlainHost(u.hostname);
}

/** An allowed_origins entry: `*` (any site) or a plain http(s) origin. */
export const isAllowedOriginEntry = (value: string): boolean => value === '*' || isPlainOrigin(value);

export const ORIGIN_RULE =
  'an http(s) origin whose host is a plain DNS name (letters, digits, hyphens, dots) or an IP literal, e.g. https://www.example.com';
