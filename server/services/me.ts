import { and, count, eq, sql } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import type { Me } from '../../shared/contracts/me.js';
import type { Actor, Deps } from '../core/deps.js';
import { attachments, destinations, forms, organizations, projects, routes } from '../db/schema.js';
import { limitsOf } from '../domain/orgs.js';
import { monthStart, quotaUsed } from '../domain/quota.js';
import { presentPlan } from '../present/plan.js';
import { nextStep } from './next-steps.js';
import { organizationSummaries } from './organizations.js';

export { monthStart };

/** Submissions counted against this month's quota (the rule is in quotaUsed). */
export async function submissionsThisMonth(deps: Deps, orgId: string): Promise<number> {
  return quotaUsed(deps.database.db, orgId, deps.now());
}

const countOf = async (deps: Deps, table: typeof projects | typeof destinations | typeof routes, orgId: string) =>
  Number((await deps.database.db.select({ n: count() }).from(table).where(eq(table.orgId, orgId)))[0].n);

/** GET /v1/me: organization and plan, key scopes, memberships, counts, limits with usage, next steps. */
export async function me(deps: Deps, actor: Actor): Promise<z.output<typeof Me>> {
  const db = deps.database.db;
  const now = deps.now();
  const [org] = await db.select().from(organizations).where(eq(organizations.id, actor.orgId));
  const limits = limitsOf(deps.config, org, now);
  const [nProjects, nDestinations, nRoutes, formsUsed, monthUsed, storage, orgs] = await Promise.all([
    countOf(deps, projects, org.id),
    countOf(deps, destinations, org.id),
    countOf(deps, routes, org.id),
    db
      .select({ n: count() })
      .from(forms)
      .where(and(eq(forms.orgId, org.id), eq(forms.sandbox, false)))
      .then((r) => Number(r[0].n)),
    submissionsThisMonth(deps, org.id),
    db
      .select({ n: sql<string>`coalesce(sum(${attachments.sizeBytes}), 0)` })
      .from(attachments)
      .where(eq(attachments.orgId, org.id))
      .then((r) => Number(r[0].n)),
    organizationSummaries(deps, actor),
  ]);
  const next = [];
  if (formsUsed === 0) {
    next.push(
      nextStep(ops.quickstart.run, 'Create a routed form in one call', {
        body: { name: 'Contact', notify_email: 'you@example.com' },
      }),
    );
  }
  next.push(nextStep(ops.forms.list, 'List your forms'));
  return {
    organization: {
      id: org.id,
      slug: org.slug,
      name: org.name,
      ...presentPlan(org, now),
      timezone: org.timezone,
    },
    key: { ...(actor.keyPrefix ? { prefix: actor.keyPrefix } : {}), scopes: actor.scopes },
    organizations: orgs,
    counts: { projects: nProjects, forms: formsUsed, streams: 0, destinations: nDestinations, routes: nRoutes },
    limits: {
      ...limits,
      used: { forms: formsUsed, submissions_this_month: monthUsed, attachment_storage_bytes: storage },
    },
    next,
  };
}
