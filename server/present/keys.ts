import type { z } from '../../shared/contracts/common.js';
import type { ApiKey } from '../../shared/contracts/keys.js';
import type { KeyRow } from '../db/rows.js';

export type ApiKeyOut = z.output<typeof ApiKey>;

/** Row → wire ApiKey: the prefix only, never the secret or its hash. */
export function presentKey(k: KeyRow): ApiKeyOut {
  return {
    key_id: k.id,
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    scopes: k.scopes as ApiKeyOut['scopes'],
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    created_by: k.createdByUserId && k.creatorEmail ? { id: k.createdByUserId, email: k.creatorEmail } : null,
  };
}
