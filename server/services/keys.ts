import { and, desc, eq, isNull } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { ApiKeyCreated, CreateKeyBody } from '../../shared/contracts/keys.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps, KeyScope } from '../core/deps.js';
import { notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import { apiKeys, users } from '../db/schema.js';
import { newApiKeySecret } from '../domain/secrets.js';
import { presentKey } from '../present/keys.js';
import { requireManager } from './members.js';

export type { KeyRow } from '../db/rows.js';

const columns = { creatorEmail: users.email };

function select(deps: Deps) {
  return deps.database.db
    .select({
      id: apiKeys.id,
      orgId: apiKeys.orgId,
      name: apiKeys.name,
      prefix: apiKeys.prefix,
      hash: apiKeys.hash,
      scopes: apiKeys.scopes,
      createdByUserId: apiKeys.createdByUserId,
      lastUsedAt: apiKeys.lastUsedAt,
      revokedAt: apiKeys.revokedAt,
      createdAt: apiKeys.createdAt,
      ...columns,
    })
    .from(apiKeys)
    .leftJoin(users, eq(users.id, apiKeys.createdByUserId));
}

/** Mints a key for the session's organization; the secret is returned once, only its hash is kept. */
export async function createKey(
  deps: Deps,
  actor: Actor,
  body: z.output<typeof CreateKeyBody>,
): Promise<z.output<typeof ApiKeyCreated>> {
  const key = newApiKeySecret();
  const id = newId('apiKey');
  const scopes = [...new Set<KeyScope>(body.scopes ?? ['manage'])];
  await deps.database.db.insert(apiKeys).values({
    id,
    orgId: actor.orgId,
    name: body.name,
    prefix: key.prefix,
    hash: key.hash,
    scopes,
    createdByUserId: actor.userId ?? null,
  });
  const [row] = await select(deps).where(eq(apiKeys.id, id));
  return { ...presentKey(row), api_key: key.secret };
}

export async function listKeys(deps: Deps, actor: Actor, page: Page) {
  const rows = await select(deps)
    .where(and(eq(apiKeys.orgId, actor.orgId), isNull(apiKeys.revokedAt), page.after(apiKeys.id)))
    .orderBy(desc(apiKeys.id))
    .limit(page.limit + 1);
  return pageResult(rows, page, presentKey);
}

export async function getKey(deps: Deps, actor: Actor, id: string) {
  const [row] = await select(deps).where(
    and(eq(apiKeys.id, id), eq(apiKeys.orgId, actor.orgId), isNull(apiKeys.revokedAt)),
  );
  if (!row) throw notFound('API key', id);
  return presentKey(row);
}

/**
 * Revokes a key of the organization. Takes what minting one takes: a member's session is refused
 * (owners and admins only), as is done by requireManager; a manage key may revoke (it could do
 * everything the revoked key could).
 */
export async function revokeKey(deps: Deps, actor: Actor, id: string) {
  requireManager(actor, 'revoke API keys');
  const done = await deps.database.db
    .update(apiKeys)
    .set({ revokedAt: deps.now() })
    .where(and(eq(apiKeys.id, id), eq(apiKeys.orgId, actor.orgId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (!done.length) throw notFound('API key', id);
}
