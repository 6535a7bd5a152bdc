import type { OrganizationPlan } from '../../shared/contracts/billing.js';
import type { z } from '../../shared/contracts/common.js';
import type { Plan } from '../../shared/plans.js';
import { effectivePlan, type Org } from '../domain/orgs.js';

export type OrganizationPlanOut = z.output<typeof OrganizationPlan>;

/**
 * OrganizationPlan as the caller sees it. Expiry is applied at read time (nothing rewrites the row
 * when a plan lapses): past plan_expires_at the plan in force is free and so is its source, while
 * plan_expires_at and plan_note stay to say what lapsed and when.
 */
export function presentPlan(org: Org, now: Date): OrganizationPlanOut {
  const plan: Plan = effectivePlan(org, now);
  const lapsed = org.planExpiresAt !== null && org.planExpiresAt <= now;
  return {
    plan,
    plan_source: (lapsed ? 'free' : org.planSource) as OrganizationPlanOut['plan_source'],
    plan_expires_at: org.planExpiresAt?.toISOString() ?? null,
    plan_note: org.planNote,
  };
}
