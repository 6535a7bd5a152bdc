import { and, desc, eq, exists } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import type {
  CreateOrganizationBody,
  OrganizationCreated,
  UpdateOrganizationBody,
} from '../../shared/contracts/organizations.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps, Role } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import { apiKeys, memberships, organizations, sessions, users } from '../db/schema.js';
import { type Org, slugify } from '../domain/orgs.js';
import { randomToken } from '../domain/secrets.js';
import { type OrganizationOut, presentOrganization } from '../present/organizations.js';
import { checkSpamSettings } from '../spam/policy.js';
import { nextStep, routeOf } from './next-steps.js';

/** The zone's canonical IANA name ("europe/berlin" → "Europe/Berlin"); the contract already rejected unknown ones. */
const canonicalZone = (tz: string) => new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;

/** Rows of the organizations a caller can act in: a key its own (role null), a session the user's memberships. */
async function callerOrgRows(
  deps: Deps,
  actor: Actor,
  page?: Page,
): Promise<{ id: string; org: Org; role: Role | null }[]> {
  const db = deps.database.db;
  const after = page?.after(organizations.id);
  // A key or an OAuth token sees only its own organization.
  if (actor.kind !== 'session' || !actor.userId) {
    const rows = await db
      .select()
      .from(organizations)
      .where(and(eq(organizations.id, actor.orgId), after));
    return rows.map((org) => ({ id: org.id, org, role: null }));
  }
  const query = db
    .select({ org: organizations, role: memberships.role })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.orgId))
    .where(and(eq(memberships.userId, actor.userId), after))
    .orderBy(desc(organizations.id))
    .$dynamic();
  const rows = await (page ? query.limit(page.limit + 1) : query);
  return rows.map((r) => ({ id: r.org.id, org: r.org, role: r.role as Role }));
}

/** GET /v1/organizations: every organization the caller can act in, with its plan, newest first. */
export async function listOrganizations(deps: Deps, actor: Actor, page: Page) {
  const now = deps.now();
  const rows = await callerOrgRows(deps, actor, page);
  return pageResult(rows, page, (r) => presentOrganization(r.org, r.role, r.id === actor.orgId, now));
}

/** The OrganizationSummary list of GET /v1/me (all of them, newest first). */
export async function organizationSummaries(deps: Deps, actor: Actor) {
  const rows = await callerOrgRows(deps, actor);
  return rows.map((r) => ({
    id: r.org.id,
    slug: r.org.slug,
    name: r.org.name,
    role: r.role,
    is_active: r.id === actor.orgId,
  }));
}

/**
 * The person behind the caller: a session's user, or the user who minted the key while they are still a
 * member of the key's organization (a key outlives its creator's membership; it must not act for them).
 */
async function callerUser(deps: Deps, actor: Actor) {
  const db = deps.database.db;
  if (actor.kind === 'session' && actor.userId) {
    const [user] = await db.select().from(users).where(eq(users.id, actor.userId));
    if (user) return user;
  }
  if (actor.kind === 'key' && actor.keyId) {
    const [row] = await db
      .select({ user: users })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.createdByUserId))
      .innerJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.orgId, apiKeys.orgId)))
      .where(eq(apiKeys.id, actor.keyId));
    if (row) return row.user;
  }
  throw new ApiError('forbidden', 'Creating an organization needs a person to own it; this key has none.', {
    hint: `Sign in with ${routeOf(ops.auth.signIn)} and call it with the session cookie, or use a key minted by a current member (${routeOf(ops.auth.verifyCode)}).`,
  });
}

/** Creates a team organization with the caller's user as its owner; the caller's active organization stays. */
export async function createOrganization(
  deps: Deps,
  actor: Actor,
  body: z.output<typeof CreateOrganizationBody>,
): Promise<z.output<typeof OrganizationCreated>> {
  const user = await callerUser(deps, actor);
  const base = slugify(body.name, 48);
  const candidates = body.slug
    ? [body.slug]
    : [base, `${base}-${randomToken(6).toLowerCase()}`, `${base}-${randomToken(10).toLowerCase()}`];
  const planSource = deps.config.defaultPlan === 'selfhost' ? 'selfhost' : 'free';
  const org = await deps.database.db.transaction(async (tx) => {
    for (const slug of candidates) {
      const [row] = await tx
        .insert(organizations)
        .values({
          id: newId('organization'),
          slug,
          name: body.name,
          personal: false,
          ownerUserId: user.id,
          plan: deps.config.defaultPlan,
          planSource,
          timezone: canonicalZone(body.timezone ?? 'UTC'),
        })
        .onConflictDoNothing()
        .returning();
      if (!row) continue;
      await tx.insert(memberships).values({ id: newId('membership'), orgId: row.id, userId: user.id, role: 'owner' });
      return row;
    }
    return null;
  });
  if (!org) {
    throw new ApiError('conflict', `The organization slug "${candidates[0]}" is taken.`, {
      hint: 'Organization slugs are unique across the service: choose another slug, or leave slug out to get a free one.',
    });
  }
  const isKey = actor.kind === 'key';
  const next = isKey
    ? [
        nextStep(
          ops.auth.signIn,
          `API keys belong to one organization: sign in as ${user.email} to work in the new one`,
          {
            body: { email: user.email, code: `<code from ${routeOf(ops.auth.requestCode)}>` },
          },
        ),
        nextStep(ops.organizations.switch, 'Then make it the active organization of that session', {
          params: { id: org.id },
        }),
        nextStep(ops.keys.create, 'Then mint a key of the new organization', { body: { name: 'agent' } }),
      ]
    : [
        nextStep(ops.organizations.switch, 'Make it the active organization of this session', {
          params: { id: org.id },
        }),
        nextStep(ops.invitations.create, 'Then invite people', {
          body: { email: 'teammate@example.com', role: 'member' },
        }),
      ];
  return { ...presentOrganization(org, isKey ? null : 'owner', false, deps.now()), next };
}

/** The caller's view of one organization: a key sees only its own, a session those it is a member of. */
async function visibleOrg(deps: Deps, actor: Actor, id: string) {
  const db = deps.database.db;
  const [org] = await db.select().from(organizations).where(eq(organizations.id, id));
  if (org && actor.kind !== 'session' && org.id === actor.orgId) return { org, role: actor.role };
  if (org && actor.kind === 'session' && actor.userId) {
    const [m] = await db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.orgId, id), eq(memberships.userId, actor.userId)));
    if (m) return { org, role: m.role as Role };
  }
  throw notFound('organization', id);
}

/** Renames an organization or sets its time zone: owner or admin of it, or a manage key of it. */
export async function updateOrganization(
  deps: Deps,
  actor: Actor,
  id: string,
  body: z.output<typeof UpdateOrganizationBody>,
): Promise<OrganizationOut> {
  const { org, role } = await visibleOrg(deps, actor, id);
  if (role === 'member') {
    throw new ApiError('forbidden', 'Only an owner or admin can change the organization.', {
      hint: `Ask an owner or admin of it (${routeOf(ops.members.list)} lists them).`,
    });
  }
  checkSpamSettings(body.settings?.spam, 'settings.spam');
  // A key may ask for approval of new targets but never turn it off: that is a person's decision.
  const approving = (org.settings as { approve_destinations?: unknown } | null)?.approve_destinations === 'keys';
  const loosening =
    body.settings && 'approve_destinations' in body.settings && body.settings.approve_destinations !== 'keys';
  if (actor.kind !== 'session' && approving && loosening) {
    throw new ApiError('forbidden', 'Only a dashboard session can turn settings.approve_destinations off.', {
      hint: 'An owner or admin changes it while signed in (PATCH with the session cookie, or the dashboard); API keys can only turn it on.',
    });
  }
  const set = {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.timezone !== undefined ? { timezone: canonicalZone(body.timezone) } : {}),
    ...(body.settings ? { settings: mergeSettings(org.settings ?? {}, body.settings) } : {}),
  };
  let row = org;
  if (Object.keys(set).length) {
    [row] = await deps.database.db.update(organizations).set(set).where(eq(organizations.id, id)).returning();
  }
  return presentOrganization(row, role, id === actor.orgId, deps.now());
}

/** Settings merge key by key; a key set to null is removed. */
function mergeSettings(current: Record<string, unknown>, patch: Record<string, unknown>) {
  const out = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (v !== undefined) out[k] = v;
  }
  return out;
}

/** Points the session at another organization of its user; keys are bound to theirs. */
export async function switchOrganization(deps: Deps, actor: Actor, id: string) {
  if (actor.kind !== 'session' || !actor.sessionId || !actor.userId) {
    throw new ApiError('forbidden', 'An API key belongs to one organization and cannot switch.', {
      hint: `Use a key of the other organization: sign in (${routeOf(ops.auth.signIn)}), switch with the session cookie, then mint one with ${routeOf(ops.keys.create)}.`,
    });
  }
  const db = deps.database.db;
  // One statement: the membership is checked where the session is moved, so a removal racing it cannot slip in.
  const isMember = exists(
    db
      .select({ id: memberships.id })
      .from(memberships)
      .where(and(eq(memberships.orgId, id), eq(memberships.userId, actor.userId))),
  );
  const moved = await db
    .update(sessions)
    .set({ activeOrgId: id })
    .where(and(eq(sessions.id, actor.sessionId), isMember))
    .returning({ id: sessions.id });
  if (!moved.length) throw notFound('organization', id);
  const { org, role } = await visibleOrg(deps, actor, id);
  return presentOrganization(org, role, true, deps.now());
}
