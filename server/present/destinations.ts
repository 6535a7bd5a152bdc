import type { z } from '../../shared/contracts/common.js';
import { type Destination, REDACTED } from '../../shared/contracts/destinations.js';
import type { DestinationRow } from '../db/rows.js';

export type DestinationOut = z.output<typeof Destination>;
type Config = Record<string, unknown>;

/** Config keys that hold secrets: stored as given, read back as REDACTED. */
export const SECRET_KEYS = ['secret', 'bot_token'];

/** Destination types whose `config.url` is itself the credential (whoever has it can post). */
export const CREDENTIAL_URL_TYPES = ['slack', 'discord'];

/**
 * A chat incoming-webhook URL as every reader sees it: its scheme and host, and its last 4
 * characters to tell two apart. The path is the credential, so it never leaves.
 */
export function redactedUrl(url: unknown): unknown {
  if (typeof url !== 'string') return url;
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/${REDACTED}…${url.slice(-4)}`;
  } catch {
    return REDACTED;
  }
}

/** Config as read through the API: secrets, chat webhook URLs and webhook header values never leave. */
export function presentConfig(config: Config, type?: string): Config {
  const out = { ...config };
  if (type && CREDENTIAL_URL_TYPES.includes(type) && out.url !== undefined && out.url !== null) {
    out.url = redactedUrl(out.url);
  }
  for (const key of SECRET_KEYS) if (out[key] !== undefined && out[key] !== null) out[key] = REDACTED;
  if (out.headers && typeof out.headers === 'object') {
    out.headers = Object.fromEntries(Object.keys(out.headers).map((name) => [name, REDACTED]));
  }
  return out;
}

/** Row → wire Destination (config redacted). */
export function presentDestination(d: DestinationRow): DestinationOut {
  return {
    id: d.id,
    type: d.type as DestinationOut['type'],
    name: d.name,
    config: presentConfig(d.config, d.type),
    health: d.health as DestinationOut['health'],
    verified: d.verified,
    enabled: d.enabled,
    disabled_reason: d.disabledReason,
    failing_since: d.failingSince?.toISOString() ?? null,
    approval: d.approval === 'pending' ? 'pending' : 'approved',
    created_at: d.createdAt.toISOString(),
  };
}
