import type { PlanGrant } from '../../shared/contracts/admin.js';
import type { z } from '../../shared/contracts/common.js';
import type { GrantRow } from '../db/rows.js';

export type PlanGrantOut = z.output<typeof PlanGrant>;

/** Row → wire PlanGrant: the code's hash never leaves (the code itself is answered once, at creation). */
export function presentGrant(g: GrantRow): PlanGrantOut {
  return {
    id: g.id,
    plan: g.plan as PlanGrantOut['plan'],
    note: g.note,
    expires_at: g.expiresAt?.toISOString() ?? null,
    plan_duration_days: g.planDurationDays,
    max_redemptions: g.maxRedemptions,
    redeemed_count: g.redeemedCount,
    created_by_user_id: g.createdByUserId,
    created_at: g.createdAt.toISOString(),
    revoked_at: g.revokedAt?.toISOString() ?? null,
  };
}
