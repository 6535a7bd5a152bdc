import { and, count, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { deliveries } from '../db/schema.js';

type Counts = { deliveries: number; sent: number };
/** Deliveries per route and how many were sent, in one grouped query. */
export async function routeCounts(db: Db, orgId: string, routeIds: string[]): Promise<Map<string, Counts>> {
  const out = new Map<string, Counts>();
  if (!routeIds.length) return out;
  const rows = await db
    .select({
      routeId: deliveries.routeId,
      n: count(),
      sent: sql<string | number>`count(*) filter (where ${deliveries.status} = 'sent')`,
    })
    .from(deliveries)
    .where(and(eq(deliveries.orgId, orgId), inArray(deliveries.routeId, routeIds)))
    .groupBy(deliveries.routeId);
  for (const r of rows) out.set(r.routeId, { deliveries: Number(r.n), sent: Number(r.sent) });
  return out;
}
