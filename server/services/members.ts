import { and, asc, count, desc, eq } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import type { UpdateMemberBody } from '../../shared/contracts/members.js';
import type { Actor, Deps, Role } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import { memberships, organizations, sessions, users } from '../db/schema.js';
import { type MemberOut, presentMember } from '../present/members.js';
import { routeOf } from './next-steps.js';

/**
 * Rights, checked here and in invitations.ts:
 * - owner: everything, including owners, role changes to and from owner, and removing anyone;
 * - admin: members and admins (roles between member and admin, removal), invitations (not as owner), keys
 *   (minting and revoking them);
 * - member: read and manage resources; may list members and leave; no member, invitation or key management;
 * - manage key (no role): list members, list, create (member or admin) and revoke invitations, revoke keys;
 *   role changes and removals need a person, so a session.
 */
export function requireManager(actor: Actor, what: string): void {
  if (manages(actor)) return;
  throw new ApiError('forbidden', `Only an owner or admin can ${what}.`, {
    hint: `Ask an owner or admin of the organization (${routeOf(ops.members.list)} lists them).`,
  });
}

/** Whether the actor may manage people and keys: a manage key, or an owner's or admin's session. */
export const manages = (actor: Actor): boolean =>
  actor.kind === 'key' || actor.role === 'owner' || actor.role === 'admin';

/** The session behind a member-management call; keys have no person to answer for it. */
export function requireSession(actor: Actor, what: string): asserts actor is Actor & { userId: string } {
  if (actor.kind === 'session' && actor.userId && actor.role) return;
  throw new ApiError('forbidden', `API keys cannot ${what}; it needs the session of an owner or admin.`, {
    hint: `Sign in with ${routeOf(ops.auth.signIn)} (email code) and send the request with the session cookie.`,
  });
}

export type MemberRow = { m: typeof memberships.$inferSelect; u: typeof users.$inferSelect };

const selectMembers = (db: Pick<Db, 'select'>) =>
  db.select({ m: memberships, u: users }).from(memberships).innerJoin(users, eq(users.id, memberships.userId));

/** GET /v1/members: the active organization's members, newest first. */
export async function listMembers(deps: Deps, actor: Actor, page: Page) {
  const rows = await selectMembers(deps.database.db)
    .where(and(eq(memberships.orgId, actor.orgId), page.after(memberships.id)))
    .orderBy(desc(memberships.id))
    .limit(page.limit + 1);
  return pageResult(
    rows.map((r) => ({ ...r, id: r.m.id })),
    page,
    presentMember,
  );
}

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * Locks the organization row, then reads the caller's role and the target membership: role changes and
 * removals of one organization run one at a time and judge the roles as they are now, so two owners
 * demoting each other cannot leave it without an owner.
 */
async function lockTarget(tx: Tx, actor: Actor & { userId: string }, id: string) {
  const [org] = await tx.select().from(organizations).where(eq(organizations.id, actor.orgId)).for('update');
  const [target] = await selectMembers(tx).where(and(eq(memberships.id, id), eq(memberships.orgId, actor.orgId)));
  const [self] = await tx
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.orgId, actor.orgId), eq(memberships.userId, actor.userId)));
  if (!org || !target || !self) throw notFound('member', id);
  return { org, target, role: self.role as Role };
}

/** 409 when the change would take the last owner away, or the first owner from their personal organization. */
async function keepOwner(tx: Tx, org: typeof organizations.$inferSelect, target: MemberRow) {
  if (target.m.role !== 'owner') return;
  if (org.personal && org.ownerUserId === target.u.id) {
    throw new ApiError('conflict', `${target.u.email} owns this personal organization and stays its owner.`, {
      hint: `Share work in a team organization instead: ${routeOf(ops.organizations.create)}, then invite people to it.`,
    });
  }
  const [{ n }] = await tx
    .select({ n: count() })
    .from(memberships)
    .where(and(eq(memberships.orgId, org.id), eq(memberships.role, 'owner')));
  if (Number(n) <= 1) {
    throw new ApiError('conflict', 'This would leave the organization without an owner.', {
      hint: `Make another member owner first: ${routeOf(ops.members.update)} {"role": "owner"}.`,
    });
  }
}

/** A team organization's recorded owner moves to its oldest remaining owner when theirs goes. */
async function reassignOwner(tx: Tx, org: typeof organizations.$inferSelect, userId: string) {
  if (org.personal || org.ownerUserId !== userId) return;
  const [next] = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.orgId, org.id), eq(memberships.role, 'owner')))
    .orderBy(asc(memberships.createdAt), asc(memberships.id))
    .limit(1);
  await tx
    .update(organizations)
    .set({ ownerUserId: next?.userId ?? null })
    .where(eq(organizations.id, org.id));
}

function checkAuthority(role: Role, target: MemberRow, newRole?: Role) {
  if (role === 'owner') return;
  if (role === 'member') {
    throw new ApiError('forbidden', 'Only an owner or admin can manage members.', {
      hint: `Ask an owner or admin of the organization (${routeOf(ops.members.list)} lists them).`,
    });
  }
  if (target.m.role === 'owner' || newRole === 'owner') {
    throw new ApiError('forbidden', 'Only an owner can change or remove an owner, or make someone an owner.', {
      hint: `Ask an owner of the organization (${routeOf(ops.members.list)} lists them).`,
    });
  }
}

/** PATCH /v1/members/{id}: owners change any role; admins move people between member and admin. */
export async function updateMember(
  deps: Deps,
  actor: Actor,
  id: string,
  body: z.output<typeof UpdateMemberBody>,
): Promise<MemberOut> {
  requireSession(actor, 'change roles');
  return deps.database.db.transaction(async (tx) => {
    const { org, target, role } = await lockTarget(tx, actor, id);
    checkAuthority(role, target, body.role);
    if (target.m.role === body.role) return presentMember(target);
    if (body.role !== 'owner') await keepOwner(tx, org, target);
    const [m] = await tx.update(memberships).set({ role: body.role }).where(eq(memberships.id, id)).returning();
    if (body.role !== 'owner') await reassignOwner(tx, org, target.u.id);
    return presentMember({ m, u: target.u });
  });
}

/**
 * DELETE /v1/members/{id}: owners remove anyone, admins non-owners, and everyone may leave. The removed
 * user's sessions in this organization move to another organization of theirs (their personal one first),
 * so they stay signed in; their API keys stay, since keys belong to the organization.
 */
export async function removeMember(deps: Deps, actor: Actor, id: string) {
  requireSession(actor, 'remove members');
  await deps.database.db.transaction(async (tx) => {
    const { org, target, role } = await lockTarget(tx, actor, id);
    if (target.u.id !== actor.userId) checkAuthority(role, target);
    await keepOwner(tx, org, target);
    await tx.delete(memberships).where(eq(memberships.id, id));
    await reassignOwner(tx, org, target.u.id);
    await moveSessions(tx, target.u.id, org.id);
  });
}

async function moveSessions(tx: Tx, userId: string, fromOrgId: string) {
  const left = await tx
    .select({ orgId: memberships.orgId, personal: organizations.personal, owner: organizations.ownerUserId })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.orgId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(memberships.createdAt), asc(memberships.id));
  const home = left.find((o) => o.personal && o.owner === userId) ?? left[0];
  const where = and(eq(sessions.userId, userId), eq(sessions.activeOrgId, fromOrgId));
  if (home) await tx.update(sessions).set({ activeOrgId: home.orgId }).where(where);
  else await tx.delete(sessions).where(where);
}
