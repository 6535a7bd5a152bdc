import { and, asc, eq } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import type { Plan, PlanLimits } from '../../shared/plans.js';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { OrgRow } from '../db/rows.js';
import { memberships, organizations, users } from '../db/schema.js';
import { randomToken } from './secrets.js';

export type Org = OrgRow;

export function slugify(value: string, max = 48): string {
  const s = value
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/g, '');
  return s || 'item';
}

/** The plan in force: an expired plan falls back to free. */
export function effectivePlan(org: Org, now: Date): Plan {
  if (org.planExpiresAt && org.planExpiresAt <= now) return 'free';
  return org.plan as Plan;
}

export function limitsOf(config: Config, org: Org, now: Date): PlanLimits {
  return config.planLimits[effectivePlan(org, now)];
}

/** A user's personal organization, created with the user (owner). */
export async function createPersonalOrg(db: Db, config: Config, userId: string, email: string): Promise<Org> {
  const local = email.split('@')[0];
  const id = newId('organization');
  const planSource = config.defaultPlan === 'selfhost' ? 'selfhost' : 'free';
  const [org] = await db
    .insert(organizations)
    .values({
      id,
      slug: `${slugify(local, 32)}-${randomToken(6).toLowerCase()}`,
      name: `${local}'s organization`,
      personal: true,
      ownerUserId: userId,
      plan: config.defaultPlan,
      planSource,
    })
    .returning();
  await db.insert(memberships).values({ id: newId('membership'), orgId: id, userId, role: 'owner' });
  return org;
}

/** Finds or creates the user for an email, and their oldest owned personal organization. */
export async function userWithPersonalOrg(db: Db, config: Config, email: string) {
  let created = false;
  let [user] = await db.select().from(users).where(eq(users.email, email)).limit(1);
  if (!user) {
    const inserted = await db
      .insert(users)
      .values({ id: newId('user'), email, name: email.split('@')[0] })
      .onConflictDoNothing()
      .returning();
    if (inserted.length) {
      user = inserted[0];
      created = true;
    } else {
      [user] = await db.select().from(users).where(eq(users.email, email)).limit(1);
    }
  }
  let [org] = await db
    .select()
    .from(organizations)
    .where(and(eq(organizations.ownerUserId, user.id), eq(organizations.personal, true)))
    .orderBy(asc(organizations.createdAt), asc(organizations.id))
    .limit(1);
  if (!org) org = await createPersonalOrg(db, config, user.id, email);
  return { user, org, created };
}
