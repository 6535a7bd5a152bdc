import type { z } from '../../shared/contracts/common.js';
import type { Organization } from '../../shared/contracts/organizations.js';
import type { Role } from '../core/deps.js';
import type { Org } from '../domain/orgs.js';
import { presentPlan } from './plan.js';

export type OrganizationOut = z.output<typeof Organization>;

export function presentOrganization(o: Org, role: Role | null, isActive: boolean, now: Date): OrganizationOut {
  return {
    id: o.id,
    slug: o.slug,
    name: o.name,
    role,
    is_active: isActive,
    personal: o.personal,
    ...presentPlan(o, now),
    timezone: o.timezone,
    settings: o.settings ?? {},
    created_at: o.createdAt.toISOString(),
  };
}
