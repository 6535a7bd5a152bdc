import { desc, eq } from 'drizzle-orm';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import type { Db } from '../db/client.js';
import { organizations, spamMarks, submissions } from '../db/schema.js';
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

/**
 * The latest marks, newest first, with their submissions' form and status now (null once the
 * submission is gone). Marks are people's clicks, so an organization has few: the sort is cheap.
 */
async function recentMarks(db: Db, orgId: string) {
  const rows = await db
    .select({
      submissionId: spamMarks.submissionId,
      mark: spamMarks.mark,
      markedAt: spamMarks.createdAt,
      formId: submissions.formId,
      status: submissions.status,
    })
    .from(spamMarks)
    .leftJoin(submissions, eq(submissions.id, spamMarks.submissionId))
    .where(eq(spamMarks.orgId, orgId))
    .orderBy(desc(spamMarks.createdAt), desc(spamMarks.submissionId))
    .limit(TOP);
  return rows.map((r) => ({
    submission_id: r.submissionId,
    form_id: r.formId ?? null,
    mark: r.mark === 'spam' ? ('spam' as const) : ('ham' as const),
    status: r.status ?? null,
    marked_at: r.markedAt.toISOString(),
  }));
}

/** GET /v1/spam: what the organization's filter learned, its lists and its latest marks. */
export async function spamFilter(deps: Deps, actor: Actor) {
  const db = deps.database.db;
  const [{ model }, [org], marks] = await Promise.all([
    readModel(db, actor.orgId),
    db.select({ settings: organizations.settings }).from(organizations).where(eq(organizations.id, actor.orgId)),
    recentMarks(db, actor.orgId),
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
    recent_marks: marks,
  };
}

/**
 * DELETE /v1/spam/model: forgets every mark the filter learned. Like changing the organization, a
 * session needs the owner or admin role: a member's one click would undo everyone's marks.
 */
export async function forgetSpamModel(deps: Deps, actor: Actor) {
  if (actor.role === 'member') {
    throw new ApiError('forbidden', 'Only an owner or admin can make the spam filter forget what it learned.', {
      hint: 'Ask an owner or admin of the organization (GET /v1/members lists them).',
    });
  }
  await deps.database.db.transaction((tx) => forgetModel(tx, actor.orgId));
  return { forgotten: true as const };
}
