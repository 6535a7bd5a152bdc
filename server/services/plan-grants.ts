import crypto from 'node:crypto';
import { and, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { CreatePlanGrantBody, PlanGrantCreated } from '../../shared/contracts/admin.js';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { GrantRow } from '../db/rows.js';
import { organizations, planGrants, planRedemptions } from '../db/schema.js';
import { sha256 } from '../domain/secrets.js';
import { presentPlan } from '../present/plan.js';
import { presentGrant } from '../present/plan-grants.js';
import { nextStep, routeOf } from './next-steps.js';
import { requireOperator } from './operators.js';

export type { GrantRow } from '../db/rows.js';

const DAY_MS = 86_400_000;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** "pg_" + 32 base32 characters: 160 random bits. Lowercase so it survives being read aloud or retyped. */
export function newGrantCode(): string {
  let out = '';
  for (const b of crypto.randomBytes(32)) out += BASE32[b & 31];
  return `pg_${out}`;
}

const codeHash = (code: string) => sha256(code.trim().toLowerCase());

export type CreateGrantInput = z.output<typeof CreatePlanGrantBody>;

/** Mints a grant; its code is returned once and only the hash is stored. */
export async function createGrant(
  deps: Deps,
  actor: Actor,
  input: CreateGrantInput,
): Promise<z.output<typeof PlanGrantCreated>> {
  const userId = await requireOperator(deps, actor);
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt <= deps.now()) {
    throw new ApiError('validation_failed', 'expires_at is in the past: nobody could redeem the code.', {
      details: { issues: [{ path: 'expires_at', message: 'must be in the future' }] },
    });
  }
  const code = newGrantCode();
  const [row] = await deps.database.db
    .insert(planGrants)
    .values({
      id: newId('planGrant'),
      plan: input.plan,
      note: input.note ?? '',
      codeHash: codeHash(code),
      expiresAt,
      planDurationDays: input.plan_duration_days ?? null,
      maxRedemptions: input.max_redemptions ?? 1,
      createdByUserId: userId,
    })
    .returning();
  return { ...presentGrant(row), code };
}

export async function listGrants(deps: Deps, actor: Actor, page: Page) {
  await requireOperator(deps, actor);
  const rows = await deps.database.db
    .select()
    .from(planGrants)
    .where(page.after(planGrants.id))
    .orderBy(desc(planGrants.id))
    .limit(page.limit + 1);
  return pageResult(rows, page, presentGrant);
}

/** Stops a code from working. Revoking twice answers the grant unchanged; granted plans stay. */
export async function revokeGrant(deps: Deps, actor: Actor, id: string) {
  await requireOperator(deps, actor);
  const db = deps.database.db;
  const [done] = await db
    .update(planGrants)
    .set({ revokedAt: deps.now() })
    .where(and(eq(planGrants.id, id), isNull(planGrants.revokedAt)))
    .returning();
  if (done) return presentGrant(done);
  const [row] = await db.select().from(planGrants).where(eq(planGrants.id, id));
  if (!row) {
    throw new ApiError('not_found', `Plan grant ${id} was not found.`, {
      hint: `List grants with ${routeOf(ops.admin.listGrants)} to find the id.`,
    });
  }
  return presentGrant(row);
}

/** Why a grant cannot be redeemed now, or null when it can (given this organization has not yet). */
function refusal(g: GrantRow, now: Date): ApiError | null {
  if (g.revokedAt) {
    return new ApiError('gone', 'This plan grant code was revoked.', {
      hint: 'Ask the operator who gave you the code for a new one.',
    });
  }
  if (g.expiresAt && g.expiresAt <= now) {
    return new ApiError('gone', `This plan grant code expired at ${g.expiresAt.toISOString()}.`, {
      hint: 'Ask the operator who gave you the code for a new one.',
    });
  }
  if (g.redeemedCount >= g.maxRedemptions) {
    return new ApiError('conflict', 'This plan grant code has been used up.', {
      hint: 'Every redemption it allows is taken; ask the operator for a new code.',
      details: { max_redemptions: g.maxRedemptions },
    });
  }
  return null;
}

const alreadyRedeemed = () =>
  new ApiError('conflict', 'This organization has already redeemed this plan grant code.', {
    hint: `${routeOf(ops.me.get)} shows the plan in force; a code counts once per organization.`,
  });

/**
 * Sets the caller's organization plan from a grant code (plan_source complimentary). One
 * transaction: the (grant, organization) row makes a second redemption by the same organization
 * fail, and the conditional increment makes concurrent redemptions of the last slot yield exactly
 * one winner (the loser's UPDATE re-checks the row after the winner commits and matches nothing).
 */
export async function redeemGrant(deps: Deps, actor: Actor, code: string) {
  const now = deps.now();
  const db = deps.database.db;
  const [grant] = await db
    .select()
    .from(planGrants)
    .where(eq(planGrants.codeHash, codeHash(code)))
    .limit(1);
  if (!grant) {
    throw new ApiError('not_found', 'No plan grant has this code.', {
      hint: 'Check the code (it starts with "pg_"); codes are shown once when created.',
    });
  }
  const early = refusal(grant, now);
  if (early && early.code === 'gone') throw early;

  const org = await db.transaction(async (tx) => {
    const mine = await tx
      .insert(planRedemptions)
      .values({ id: newId('planRedemption'), grantId: grant.id, orgId: actor.orgId })
      .onConflictDoNothing()
      .returning({ id: planRedemptions.id });
    if (!mine.length) throw alreadyRedeemed();
    const won = await tx
      .update(planGrants)
      .set({ redeemedCount: sql`${planGrants.redeemedCount} + 1` })
      .where(
        and(
          eq(planGrants.id, grant.id),
          isNull(planGrants.revokedAt),
          lt(planGrants.redeemedCount, planGrants.maxRedemptions),
          or(isNull(planGrants.expiresAt), gt(planGrants.expiresAt, now)),
        ),
      )
      .returning({ id: planGrants.id });
    if (!won.length) {
      const [latest] = await tx.select().from(planGrants).where(eq(planGrants.id, grant.id));
      throw refusal(latest, now) ?? new ApiError('conflict', 'The plan grant changed while redeeming; try again.');
    }
    const [updated] = await tx
      .update(organizations)
      .set({
        plan: grant.plan,
        planSource: 'complimentary',
        planExpiresAt: grant.planDurationDays ? new Date(now.getTime() + grant.planDurationDays * DAY_MS) : null,
        planNote: grant.note || null,
      })
      .where(eq(organizations.id, actor.orgId))
      .returning();
    return updated;
  });
  return {
    ...presentPlan(org, now),
    next: [nextStep(ops.me.get, 'See the plan in force, its limits and usage')],
  };
}
