import { sql } from 'drizzle-orm';
import type { GrowthMetrics } from '../../shared/contracts/admin.js';
import type { z } from '../../shared/contracts/common.js';
import type { Actor, Deps } from '../core/deps.js';
import { requireOperator } from './operators.js';

const DAY_MS = 86_400_000;
const DESTINATION_TYPES = ['email', 'telegram', 'webhook', 'slack', 'discord'] as const;

type Row = Record<string, number | string | null>;
const n = (v: unknown) => Number(v ?? 0);

/**
 * GET /v1/admin/growth: platform-wide aggregates for operators, five grouped queries, no rows
 * about any person or organization. The internal sandbox organization (slug starting with "_")
 * and sandbox forms are left out of the organization and form counts.
 */
export async function growthMetrics(deps: Deps, actor: Actor): Promise<z.output<typeof GrowthMetrics>> {
  await requireOperator(deps, actor);
  const { database } = deps;
  const nowDate = deps.now();
  // Bound as text and cast, the same on PGlite and postgres.js.
  const now = sql`${nowDate.toISOString()}::timestamptz`;
  const d7 = sql`${new Date(nowDate.getTime() - 7 * DAY_MS).toISOString()}::timestamptz`;
  const d30 = sql`${new Date(nowDate.getTime() - 30 * DAY_MS).toISOString()}::timestamptz`;

  const [orgs, forms, subs, sandboxes, destinations] = await Promise.all([
    // An expired plan counts as free, as effectivePlan() decides at read time.
    database.rows<Row>(sql`
      select count(*)::int as total,
        count(*) filter (where created_at >= ${d7})::int as created_7d,
        count(*) filter (where created_at >= ${d30})::int as created_30d,
        count(*) filter (where eff = 'free')::int as free,
        count(*) filter (where eff = 'pro')::int as pro,
        count(*) filter (where eff = 'team')::int as team,
        count(*) filter (where eff = 'selfhost')::int as selfhost
      from (
        select created_at,
          case when plan_expires_at is not null and plan_expires_at <= ${now} then 'free' else plan end as eff
        from organizations where left(slug, 1) <> '_'
      ) o`),
    database.rows<Row>(sql`
      select count(*)::int as total,
        count(*) filter (where created_at >= ${d7})::int as created_7d,
        count(*) filter (where created_at >= ${d30})::int as created_30d,
        (select count(distinct s.form_id)::int from submissions s join forms f on f.id = s.form_id
          where not f.sandbox and not s.test and s.received_at >= ${d30}) as active
      from forms where not sandbox`),
    // Submissions of sandbox forms are left out; those of deleted forms still count.
    database.rows<Row>(sql`
      select count(*)::int as total,
        count(*) filter (where s.received_at >= ${d7})::int as last_7d,
        count(*) filter (where s.received_at >= ${d30})::int as last_30d,
        count(*) filter (where s.received_at >= ${d30} and not s.test)::int as real_last_30d,
        count(*) filter (where s.received_at >= ${d30} and s.test)::int as test_last_30d,
        (select count(distinct d.org_id)::int from deliveries d
          left join submissions ds on ds.id = d.submission_id
          where d.status = 'sent' and d.sent_at >= ${d30} and not coalesce(ds.test, false)
        ) as orgs_with_real_delivery_30d
      from submissions s
      where not exists (select 1 from forms f where f.id = s.form_id and f.sandbox)`),
    // "Expired" is derived: still active past expires_at (housekeeping deletes later).
    database.rows<Row>(sql`
      select count(*)::int as created,
        count(*) filter (where status = 'claimed')::int as claimed,
        count(*) filter (where status in ('blocked', 'expired')
          or (status = 'active' and expires_at < ${now}))::int as expired_or_blocked
      from sandboxes where created_at >= ${d30}`),
    database.rows<Row>(sql`select type, count(*)::int as n from destinations group by type`),
  ]);

  const o = orgs[0];
  const f = forms[0];
  const s = subs[0];
  const x = sandboxes[0];
  const byType: Record<string, number> = Object.fromEntries(DESTINATION_TYPES.map((t) => [t, 0]));
  for (const r of destinations) byType[String(r.type)] = n(r.n);
  return {
    generated_at: nowDate.toISOString(),
    organizations: {
      total: n(o.total),
      created_7d: n(o.created_7d),
      created_30d: n(o.created_30d),
      by_plan: { free: n(o.free), pro: n(o.pro), team: n(o.team), selfhost: n(o.selfhost) },
    },
    forms: { total: n(f.total), created_7d: n(f.created_7d), created_30d: n(f.created_30d), active: n(f.active) },
    submissions: {
      total: n(s.total),
      last_7d: n(s.last_7d),
      last_30d: n(s.last_30d),
      real_last_30d: n(s.real_last_30d),
      test_last_30d: n(s.test_last_30d),
      orgs_with_real_delivery_30d: n(s.orgs_with_real_delivery_30d),
    },
    sandboxes: {
      retained_created_30d: n(x.created),
      retained_claimed_30d: n(x.claimed),
      retained_expired_or_blocked_30d: n(x.expired_or_blocked),
    },
    destinations: { by_type: byType as Record<(typeof DESTINATION_TYPES)[number], number> & Record<string, number> },
  };
}
