import type { z } from '../../shared/contracts/common.js';
import { type Destination, REDACTED } from '../../shared/contracts/destinations.js';
import type { DestinationRow } from '../services/destinations.js';

export type DestinationOut = z.output<typeof Destination>;
type Config = Record<string, unknown>;

/** Config keys that hold secrets: stored as given, read back as REDACTED. */
export const SECRET_KEYS = ['secret', 'bot_token'];

/** Config as read through the API: secrets and webhook header values never leave. */
export function presentConfig(config: Config): Config {
  const out = { ...config };
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
    config: presentConfig(d.config),
    health: d.health as DestinationOut['health'],
    verified: d.verified,
    enabled: d.enabled,
    disabled_reason: d.disabledReason,
    failing_since: d.failingSince?.toISOString() ?? null,
    created_at: d.createdAt.toISOString(),
  };
}
