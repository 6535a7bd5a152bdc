import { and, count, eq, gte, inArray, sql } from 'drizzle-orm';
import {
  attachments,
  destinations,
  forms,
  memberships,
  organizations,
  projects,
  routes,
  submissions,
} from '../db/schema.js';
import type { Actor, Deps } from '../http/context.js';
import { effectivePlan, limitsOf } from './orgs.js';

export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** Non-test submissions stored this calendar month (UTC), the unit of the monthly quota. */
export async function submissionsThisMonth(deps: Deps, orgId: string): Promise<number> {
  const [{ n }] = await deps.database.db
    .select({ n: count() })
    .from(submissions)
    .where(
      and(
        eq(submissions.orgId, orgId),
        eq(submissions.test, false),
        gte(submissions.receivedAt, monthStart(deps.now())),
      ),
    );
  return Number(n);
}

const countOf = async (deps: Deps, table: typeof projects | typeof destinations | typeof routes, orgId: string) =>
  Number((await deps.database.db.select({ n: count() }).from(table).where(eq(table.orgId, orgId)))[0].n);

/** GET /v1/me: organization and plan, key scopes, memberships, counts, limits with usage, next steps. */
export async function me(deps: Deps, actor: Actor) {
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
    otherOrgs(deps, actor),
  ]);
  const next = [];
  if (formsUsed === 0) {
    next.push({
      why: 'Create a routed form in one call',
      method: 'POST',
      path: '/v1/quickstart',
      body: { name: 'Contact', notify_email: 'you@example.com' },
    });
  }
  next.push({ why: 'List your forms', method: 'GET', path: '/v1/forms' });
  return {
    organization: {
      id: org.id,
      slug: org.slug,
      name: org.name,
      plan: effectivePlan(org, now),
      plan_source: org.planSource as 'free' | 'billing' | 'complimentary' | 'selfhost',
      plan_expires_at: org.planExpiresAt?.toISOString() ?? null,
      plan_note: org.planNote,
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

/** The organizations the caller can act in: a key sees its own; a session, the user's memberships. */
async function otherOrgs(deps: Deps, actor: Actor) {
  const db = deps.database.db;
  if (!actor.userId || actor.kind === 'key') {
    const [org] = await db.select().from(organizations).where(eq(organizations.id, actor.orgId));
    return [{ id: org.id, slug: org.slug, name: org.name, role: null, is_active: true }];
  }
  const mine = await db.select().from(memberships).where(eq(memberships.userId, actor.userId));
  const orgs = await db
    .select()
    .from(organizations)
    .where(
      inArray(
        organizations.id,
        mine.map((m) => m.orgId),
      ),
    );
  return orgs.map((o) => ({
    id: o.id,
    slug: o.slug,
    name: o.name,
    role: mine.find((m) => m.orgId === o.id)?.role as 'owner' | 'admin' | 'member',
    is_active: o.id === actor.orgId,
  }));
}
