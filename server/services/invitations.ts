import { and, desc, eq, gt, isNull, lte } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import {
  type AcceptInvitationResult,
  type CreateInvitationBody,
  INVITATION_TTL_DAYS,
  type InvitationCreated,
  type PublicInvitation,
} from '../../shared/contracts/invitations.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps, Role } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { InvitationRow } from '../db/rows.js';
import { invitations, memberships, organizations, users } from '../db/schema.js';
import { invitationMail, maskEmail, presentInvitation } from '../present/invitation.js';
import { requireManager } from './members.js';
import { nextStep, routeOf } from './next-steps.js';

const selectInvitations = (db: Pick<Db, 'select'>) =>
  db.select({ i: invitations, by: users }).from(invitations).leftJoin(users, eq(users.id, invitations.invitedByUserId));

/** Not accepted, not revoked (expired ones are still "pending" for the unique index). */
const open = and(isNull(invitations.acceptedAt), isNull(invitations.revokedAt));

const acceptUrl = (deps: Deps, id: string) => `${deps.config.publicBaseUrl}/v1/invitations/${id}`;

/** GET /v1/invitations: pending (open and unexpired) invitations, newest first. */
export async function listInvitations(deps: Deps, actor: Actor, page: Page) {
  requireManager(actor, 'see invitations');
  const rows = await selectInvitations(deps.database.db)
    .where(
      and(eq(invitations.orgId, actor.orgId), open, gt(invitations.expiresAt, deps.now()), page.after(invitations.id)),
    )
    .orderBy(desc(invitations.id))
    .limit(page.limit + 1);
  return pageResult(
    rows.map((r) => ({ ...r, id: r.i.id })),
    page,
    presentInvitation,
  );
}

/** Owner invitations are made and revoked by owners only; a key has no role to grant it. */
function requireOwnerFor(actor: Actor, role: string, what: string) {
  if (role !== 'owner' || (actor.kind !== 'key' && actor.role === 'owner')) return;
  throw new ApiError('forbidden', `Only an owner's session can ${what} an owner invitation.`, {
    hint: `Invite as "admin" or "member", or ask an owner; an owner can promote later with ${routeOf(ops.members.update)}.`,
  });
}

/**
 * POST /v1/invitations: one pending invitation per address. An expired one is superseded, an open one
 * answers 409 (or itself with if_exists "return"), a member answers 409. The mail goes out after commit;
 * when it fails the invitation stays and `email_sent` is false, so the link can be shared by hand.
 */
export async function createInvitation(
  deps: Deps,
  actor: Actor,
  body: z.output<typeof CreateInvitationBody>,
): Promise<{ created: boolean; invitation: z.output<typeof InvitationCreated> }> {
  requireManager(actor, 'invite people');
  const role = body.role ?? 'member';
  requireOwnerFor(actor, role, 'make');
  const db = deps.database.db;
  const now = deps.now();
  // The spec: invited_by is null when an API key invites (a key acts for the organization, not a person).
  const invitedBy = actor.kind !== 'key' ? (actor.userId ?? null) : null;
  const result = await db.transaction(async (tx) => {
    const [member] = await tx
      .select({ id: memberships.id })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.orgId, actor.orgId), eq(users.email, body.email)));
    if (member) {
      throw new ApiError('conflict', `${body.email} is already a member of this organization.`, {
        hint: `Change their role with ${routeOf(ops.members.update)} instead (${routeOf(ops.members.list)} lists them).`,
        details: { member_id: member.id },
      });
    }
    const forAddress = and(eq(invitations.orgId, actor.orgId), eq(invitations.email, body.email), open);
    await tx
      .update(invitations)
      .set({ revokedAt: now })
      .where(and(forAddress, lte(invitations.expiresAt, now)));
    const [inserted] = await tx
      .insert(invitations)
      .values({
        id: newId('invitation'),
        orgId: actor.orgId,
        email: body.email,
        role,
        invitedByUserId: invitedBy,
        expiresAt: new Date(now.getTime() + INVITATION_TTL_DAYS * 86_400_000),
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning();
    const [row] = await selectInvitations(tx).where(inserted ? eq(invitations.id, inserted.id) : forAddress);
    if (!row) {
      throw new ApiError('conflict', `An invitation for ${body.email} changed while this one was made.`, {
        hint: 'Send the request again.',
      });
    }
    const [org] = await tx.select().from(organizations).where(eq(organizations.id, actor.orgId));
    return { created: Boolean(inserted), row, org };
  });
  const { row, org } = result;
  if (!result.created && body.if_exists !== 'return') {
    throw new ApiError('conflict', `${body.email} has a pending invitation already.`, {
      hint: `Pass if_exists: "return" to get it, or revoke it (${routeOf(ops.invitations.revoke)}) and invite again.`,
      details: { existing_id: row.i.id },
    });
  }
  const url = acceptUrl(deps, row.i.id);
  const sent = result.created
    ? await deps.mailer.send(invitationMail(deps.config.publicBaseUrl, row, org.name, url))
    : { ok: false };
  return {
    created: result.created,
    invitation: {
      ...presentInvitation(row),
      accept_url: url,
      email_sent: sent.ok,
      next: [
        nextStep(ops.invitations.accept, 'The invitee signs in as that address, then accepts', {
          params: { id: row.i.id },
        }),
        nextStep(ops.invitations.list, 'Pending invitations'),
      ],
    },
  };
}

/** Unknown and revoked invitations are 404 alike. */
const missing = (id: string) =>
  new ApiError('not_found', `Invitation ${id} does not exist or was revoked.`, {
    hint: 'Check the link, or ask the organization for a new invitation.',
  });

/** 410 for an accepted or expired invitation. */
function usable(i: InvitationRow, now: Date) {
  if (i.acceptedAt) {
    throw new ApiError('gone', 'This invitation has been accepted already.', {
      hint: `Sign in as the invited address; the organization is in ${routeOf(ops.organizations.list)}.`,
    });
  }
  if (i.expiresAt <= now) {
    throw new ApiError('gone', 'This invitation has expired.', {
      hint: `Invitations last ${INVITATION_TTL_DAYS} days; ask the organization to invite you again.`,
    });
  }
}

/** GET /v1/invitations/{id} (no credentials): what the invitation offers, with the address masked. */
export async function getPublicInvitation(deps: Deps, id: string): Promise<z.output<typeof PublicInvitation>> {
  const [row] = await deps.database.db
    .select({ i: invitations, by: users, orgName: organizations.name })
    .from(invitations)
    .innerJoin(organizations, eq(organizations.id, invitations.orgId))
    .leftJoin(users, eq(users.id, invitations.invitedByUserId))
    .where(eq(invitations.id, id));
  if (!row || row.i.revokedAt) throw missing(id);
  usable(row.i, deps.now());
  return {
    organization: { name: row.orgName },
    invited_by_name: row.by?.name ?? null,
    role: row.i.role as Role,
    expires_at: row.i.expiresAt.toISOString(),
    email_hint: maskEmail(row.i.email),
    next: [
      nextStep(
        ops.auth.signIn,
        `Sign in as the invited address (the code comes from ${routeOf(ops.auth.requestCode)})`,
      ),
      nextStep(ops.invitations.accept, 'Accept with the session cookie', { params: { id } }),
    ],
  };
}

/**
 * POST /v1/invitations/{id}/accept with the invitee's session. One conditional UPDATE takes the
 * invitation, so of two concurrent accepts one adds the membership; the other (same user) gets the
 * same answer. Accepting again later answers the same while the membership lasts.
 */
export async function acceptInvitation(
  deps: Deps,
  actor: Actor,
  id: string,
): Promise<z.output<typeof AcceptInvitationResult>> {
  if (actor.kind !== 'session' || !actor.userId) {
    throw new ApiError(
      'forbidden',
      'Accepting an invitation needs the session of the invited person, not an API key.',
      {
        hint: `Sign in as the invited address (${routeOf(ops.auth.requestCode)}, then ${routeOf(ops.auth.signIn)}) and accept with the session cookie.`,
      },
    );
  }
  const userId = actor.userId;
  const db = deps.database.db;
  const now = deps.now();
  const [user] = await db.select().from(users).where(eq(users.id, userId));
  const [found] = await db.select().from(invitations).where(eq(invitations.id, id));
  if (!found || found.revokedAt) throw missing(id);
  if (found.email !== user?.email) {
    throw new ApiError('forbidden', `This invitation is for another address (${maskEmail(found.email)}).`, {
      hint: `Sign in as the invited address with ${routeOf(ops.auth.signIn)} and accept again.`,
    });
  }
  const outcome = await db.transaction(async (tx) => {
    const [taken] = await tx
      .update(invitations)
      .set({ acceptedAt: now, acceptedUserId: userId })
      .where(and(eq(invitations.id, id), open, gt(invitations.expiresAt, now)))
      .returning();
    if (taken) {
      await tx
        .insert(memberships)
        .values({ id: newId('membership'), orgId: taken.orgId, userId, role: taken.role })
        .onConflictDoNothing();
    }
    const [current] = await tx.select().from(invitations).where(eq(invitations.id, id));
    const [member] = await tx
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.orgId, found.orgId), eq(memberships.userId, userId)));
    return { current, member };
  });
  const { current, member } = outcome;
  if (!current || current.revokedAt) throw missing(id);
  if (current.acceptedUserId !== userId || !member) {
    usable(current, now);
    throw missing(id); // not reached: an open, unexpired invitation was taken above
  }
  const [org] = await db.select().from(organizations).where(eq(organizations.id, found.orgId));
  return {
    organization: { id: org.id, slug: org.slug, name: org.name },
    role: member.role as Role,
    next: [
      nextStep(ops.organizations.switch, 'Work in it: make it the active organization of this session', {
        params: { id: org.id },
      }),
      nextStep(ops.organizations.list, 'Your organizations'),
    ],
  };
}

/** DELETE /v1/invitations/{id}: revokes a pending invitation; an accepted one answers 409. */
export async function revokeInvitation(deps: Deps, actor: Actor, id: string) {
  requireManager(actor, 'revoke invitations');
  const db = deps.database.db;
  const mine = and(eq(invitations.id, id), eq(invitations.orgId, actor.orgId), isNull(invitations.revokedAt));
  const [row] = await db.select().from(invitations).where(mine);
  if (!row) throw notFound('invitation', id);
  requireOwnerFor(actor, row.role, 'revoke');
  const done = await db
    .update(invitations)
    .set({ revokedAt: deps.now() })
    .where(and(mine, isNull(invitations.acceptedAt)))
    .returning({ id: invitations.id });
  if (!done.length) {
    throw new ApiError('conflict', 'This invitation has been accepted already.', {
      hint: `Remove the member with ${routeOf(ops.members.remove)} instead (${routeOf(ops.members.list)} lists them).`,
    });
  }
}
