import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Actor, Deps } from '../core/deps.js';
import { destinations, forms, streams } from '../db/schema.js';

/** The named rows a page picks from or shows by name. */
export type NamedKind = 'forms' | 'streams' | 'destinations';

const TABLES = { forms, streams, destinations } as const;

/**
 * id → name of the actor's organization's rows among `ids`, in one query (no per-row look-ups). An id of
 * another organization, or of no row, is absent from the map: the page then shows the id.
 */
export async function namesOf(
  deps: Deps,
  actor: Actor,
  kind: NamedKind,
  ids: ReadonlyArray<string | null | undefined>,
): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((x): x is string => typeof x === 'string'))];
  const out = new Map<string, string>();
  if (!wanted.length) return out;
  const table = TABLES[kind];
  const rows = await deps.database.db
    .select({ id: table.id, name: table.name })
    .from(table)
    .where(and(eq(table.orgId, actor.orgId), inArray(table.id, wanted)));
  for (const r of rows) out.set(r.id, r.name);
  return out;
}

/** The choices of a select, by name: the organization's forms (not sandboxes), streams or destinations. */
export async function namedChoices(
  deps: Deps,
  actor: Actor,
  kind: NamedKind,
  limit = 500,
): Promise<Array<{ id: string; name: string }>> {
  const db = deps.database.db;
  if (kind === 'forms') {
    return db
      .select({ id: forms.id, name: forms.name })
      .from(forms)
      .where(and(eq(forms.orgId, actor.orgId), eq(forms.sandbox, false)))
      .orderBy(asc(forms.name))
      .limit(limit);
  }
  const table = TABLES[kind];
  return db
    .select({ id: table.id, name: table.name })
    .from(table)
    .where(eq(table.orgId, actor.orgId))
    .orderBy(asc(table.name))
    .limit(limit);
}
