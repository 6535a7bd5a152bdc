import { eq } from 'drizzle-orm';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { apiKeys, users } from '../db/schema.js';

/**
 * Platform operators are people, not organizations: the caller's user (the session's, or the one
 * who minted the key) must have an email listed in ADMIN_EMAILS. Returns that user's id.
 */
export async function requireOperator(deps: Deps, actor: Actor): Promise<string> {
  const db = deps.database.db;
  let userId = actor.userId ?? null;
  if (!userId && actor.keyId) {
    const [key] = await db
      .select({ userId: apiKeys.createdByUserId })
      .from(apiKeys)
      .where(eq(apiKeys.id, actor.keyId))
      .limit(1);
    userId = key?.userId ?? null;
  }
  const admins = deps.config.adminEmails;
  if (userId && admins.length) {
    const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
    if (user && admins.includes(user.email.toLowerCase())) return userId;
  }
  throw new ApiError('forbidden', 'Only platform operators can use /v1/admin.', {
    hint: 'Call with a key minted by verify-code (or a session) of a user whose email is listed in the ADMIN_EMAILS setting.',
  });
}
