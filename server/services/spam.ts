import { eq } from 'drizzle-orm';
import type { Actor, Deps } from '../core/deps.js';
import { organizations } from '../db/schema.js';
import { strongestTokens } from '../spam/bayes.js';
import { forgetModel, readModel } from '../spam/learn.js';
import type { SpamListInput } from '../spam/lists.js';

const TOP = 20;

const listOut = (l: SpamListInput | undefined) => ({
  emails: l?.emails ?? [],
  domains: l?.domains ?? [],
  ips: l?.ips ?? [],
  keywords: l?.keywords ?? [],
});

/** GET /v1/spam: what the organization's filter learned and its lists. */
export async function spamFilter(deps: Deps, actor: Actor) {
  const db = deps.database.db;
  const [{ model }, [org]] = await Promise.all([
    readModel(db, actor.orgId),
    db.select({ settings: organizations.settings }).from(organizations).where(eq(organizations.id, actor.orgId)),
  ]);
  const strongest = model ? strongestTokens(model, TOP) : { spam: [], ham: [] };
  const spam = (org?.settings?.spam ?? {}) as { block?: SpamListInput; allow?: SpamListInput };
  return {
    model: {
      spam: model?.spam ?? 0,
      ham: model?.ham ?? 0,
      spam_tokens: strongest.spam,
      ham_tokens: strongest.ham,
    },
    lists: { block: listOut(spam.block), allow: listOut(spam.allow) },
  };
}

/** DELETE /v1/spam/model: forgets every mark the filter learned. */
export async function forgetSpamModel(deps: Deps, actor: Actor) {
  await deps.database.db.transaction((tx) => forgetModel(tx, actor.orgId));
  return { forgotten: true as const };
}
