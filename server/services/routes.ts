import { Cron } from 'croner';
import { and, desc, eq } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { CreateRouteBody, RouteListQuery, UpdateRouteBody } from '../../shared/contracts/routes.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { RouteRow } from '../db/rows.js';
import { destinations, forms, routes } from '../db/schema.js';
import { presentRoute, type RouteOut } from '../present/routes.js';
import { lockStream } from './streams.js';

export type { RouteRow } from '../db/rows.js';

import { matchIssue } from '../domain/match.js';
import { routeCounts } from '../domain/route-counts.js';

export { routeCounts } from '../domain/route-counts.js';

type Mode = { type: 'instant' } | { type: 'digest'; cron: string; timezone: string };
type Window = { from: string | null; until: string | null };
type Quality = { exclude_spam: boolean; exclude_quarantined: boolean };
type Issue = { path: string; message: string };

interface RouteRules {
  mode?: Mode;
  window?: { from?: string | null; until?: string | null };
  quality?: { exclude_spam?: boolean; exclude_quarantined?: boolean };
  enabled?: boolean;
  filter?: string | null;
  transform?: string | null;
  match?: Record<string, unknown> | null;
}

async function withCounts(db: Db, row: RouteRow) {
  return presentRoute(row, (await routeCounts(db, row.orgId, [row.id])).get(row.id));
}

const invalid = (message: string, issues: Issue[]) =>
  new ApiError('validation_failed', message, { details: { issues } });

/** filter and transform are reserved: accepted as null, refused otherwise. */
function refuseExpressions(body: RouteRules) {
  for (const field of ['filter', 'transform'] as const) {
    if (body[field] !== undefined && body[field] !== null) {
      throw new ApiError('expressions_not_enabled', `Route ${field} expressions are reserved and not evaluated.`, {
        hint: 'Leave filter and transform out (or null); choose what is delivered with quality, window and enabled.',
        details: { field },
      });
    }
  }
}

/** A digest mode needs a cron that parses and fires, read in a known IANA zone (stored canonical). */
function checkMode(mode: Mode | undefined): Mode {
  if (!mode || mode.type === 'instant') return { type: 'instant' };
  const issues: Issue[] = [];
  let timezone: string | undefined;
  try {
    timezone = new Intl.DateTimeFormat('en-US', { timeZone: mode.timezone }).resolvedOptions().timeZone;
  } catch {
    issues.push({
      path: 'mode.timezone',
      message: `unknown time zone "${mode.timezone}"; use an IANA name such as UTC`,
    });
  }
  try {
    const cron = new Cron(mode.cron, { timezone, paused: true });
    const fires = cron.nextRun() !== null;
    cron.stop();
    if (!fires) issues.push({ path: 'mode.cron', message: 'the cron expression never fires' });
  } catch (err) {
    issues.push({ path: 'mode.cron', message: `invalid cron expression: ${(err as Error).message}` });
  }
  if (issues.length) throw invalid('The digest mode is invalid.', issues);
  return { type: 'digest', cron: mode.cron, timezone: timezone as string };
}

/** Window bounds normalized to UTC ISO; from must come before until. */
function checkWindow(w: { from?: string | null; until?: string | null }): Window {
  const iso = (v: string | null | undefined) => (v ? new Date(v).toISOString() : null);
  const window = { from: iso(w.from), until: iso(w.until) };
  if (window.from && window.until && window.from >= window.until) {
    throw invalid('The route window ends before it starts.', [
      { path: 'window.until', message: 'until must be after from' },
    ]);
  }
  return window;
}

/**
 * A route's `match` (extension) must compile (domain/match.ts): 422 naming the bad part. A digest
 * collects a period's submissions without planning each, so it takes no condition.
 */
function checkMatch(match: Record<string, unknown> | null | undefined, mode: Mode) {
  if (match === undefined || match === null) return;
  const issue = matchIssue(match);
  if (issue) {
    throw new ApiError('validation_failed', `The route's match condition is invalid at ${issue.path}.`, {
      hint: 'See docs/routing-conditions.md: paths start with data., meta. or submission.; operators $eq $ne $in $nin $gt $gte $lt $lte $exists $contains $and $or $not.',
      details: { issues: [issue] },
    });
  }
  if (mode.type === 'digest') {
    throw invalid('A digest route takes no match condition.', [
      { path: 'match', message: 'use an instant route for a condition, or remove match' },
    ]);
  }
}

/** Digest periods collect one form's submissions; a stream route delivers each mapped submission instantly. */
function refuseStreamDigest(streamId: string | null, mode: Mode) {
  if (streamId === null || mode.type !== 'digest') return;
  throw invalid('Stream routes deliver instantly; digest mode is for form routes.', [
    { path: 'mode', message: 'use {type: "instant"} for a stream route, or a digest route per source form' },
  ]);
}

const defined = <T extends object>(o: T | undefined) =>
  Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The form (not a sandbox) or stream of this organization, locked against deletion until the transaction ends. */
async function lockSource(db: Db, orgId: string, source: { form_id?: string; stream_id?: string }) {
  if (source.stream_id !== undefined) return lockStream(db, orgId, source.stream_id);
  const formId = source.form_id as string;
  const [form] = await db
    .select({ id: forms.id })
    .from(forms)
    .where(and(eq(forms.id, formId), eq(forms.orgId, orgId), eq(forms.sandbox, false)))
    .for('share');
  if (!form) throw notFound('form', formId);
}

/** The destination of this organization, locked so that deleting it waits for this route. */
async function lockDestination(db: Db, orgId: string, id: string) {
  const [dest] = await db
    .select({ id: destinations.id })
    .from(destinations)
    .where(and(eq(destinations.id, id), eq(destinations.orgId, orgId)))
    .for('share');
  if (!dest) throw notFound('destination', id);
}

/** Connects a form (streams come later) to a destination; defaults: instant, open window, both quality rules on. */
export async function createRoute(deps: Deps, actor: Actor, body: z.output<typeof CreateRouteBody>): Promise<RouteOut> {
  refuseExpressions(body);
  const mode = checkMode(body.mode);
  refuseStreamDigest(body.stream_id ?? null, mode);
  checkMatch(body.match, mode);
  const window = checkWindow(body.window ?? {});
  const quality: Quality = { exclude_spam: true, exclude_quarantined: true, ...defined(body.quality) };
  const row = await deps.database.db.transaction(async (tx) => {
    await lockSource(tx, actor.orgId, body);
    await lockDestination(tx, actor.orgId, body.destination_id);
    const [inserted] = await tx
      .insert(routes)
      .values({
        id: newId('route'),
        orgId: actor.orgId,
        formId: body.form_id ?? null,
        streamId: body.stream_id ?? null,
        destinationId: body.destination_id,
        enabled: body.enabled ?? true,
        mode,
        window,
        quality,
        match: body.match ?? null,
      })
      .returning();
    return inserted;
  });
  return presentRoute(row);
}

export async function listRoutes(
  deps: Deps,
  actor: Actor,
  page: Page,
  filter: Omit<z.output<typeof RouteListQuery>, 'cursor' | 'limit'>,
) {
  const db = deps.database.db;
  const conds = [eq(routes.orgId, actor.orgId), page.after(routes.id)];
  if (filter.form_id) conds.push(eq(routes.formId, filter.form_id));
  if (filter.stream_id) conds.push(eq(routes.streamId, filter.stream_id));
  if (filter.destination_id) conds.push(eq(routes.destinationId, filter.destination_id));
  const rows = await db
    .select()
    .from(routes)
    .where(and(...conds))
    .orderBy(desc(routes.id))
    .limit(page.limit + 1);
  const counts = await routeCounts(
    db,
    actor.orgId,
    rows.map((r) => r.id),
  );
  return pageResult(rows, page, (r) => presentRoute(r, counts.get(r.id)));
}

export async function getRouteRow(db: Db, orgId: string, id: string): Promise<RouteRow> {
  const [row] = await db
    .select()
    .from(routes)
    .where(and(eq(routes.id, id), eq(routes.orgId, orgId)))
    .limit(1);
  if (!row) throw notFound('route', id);
  return row;
}

export async function getRoute(deps: Deps, actor: Actor, id: string) {
  const db = deps.database.db;
  return withCounts(db, await getRouteRow(db, actor.orgId, id));
}

/** PATCH: mode replaces, window and quality merge over the current ones; the source never changes. */
export async function updateRoute(
  deps: Deps,
  actor: Actor,
  id: string,
  body: z.output<typeof UpdateRouteBody>,
): Promise<RouteOut> {
  refuseExpressions(body);
  const db = deps.database.db;
  const current = await getRouteRow(db, actor.orgId, id);
  const mode = body.mode ? checkMode(body.mode) : undefined;
  if (mode) refuseStreamDigest(current.streamId, mode);
  const window = body.window ? checkWindow({ ...current.window, ...defined(body.window) }) : undefined;
  const quality = body.quality ? { ...current.quality, ...defined(body.quality) } : undefined;
  checkMatch(body.match === undefined ? current.match : body.match, mode ?? (current.mode as Mode));
  const changes = {
    ...(body.destination_id !== undefined ? { destinationId: body.destination_id } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    ...(mode ? { mode } : {}),
    ...(window ? { window } : {}),
    ...(quality ? { quality } : {}),
    ...(body.match !== undefined ? { match: body.match } : {}),
  };
  if (!Object.keys(changes).length) return withCounts(db, current);
  const row = await db.transaction(async (tx) => {
    if (body.destination_id !== undefined) await lockDestination(tx, actor.orgId, body.destination_id);
    const [updated] = await tx
      .update(routes)
      .set(changes)
      .where(and(eq(routes.id, id), eq(routes.orgId, actor.orgId)))
      .returning();
    if (!updated) throw notFound('route', id);
    return updated;
  });
  return withCounts(db, row);
}

export async function deleteRoute(deps: Deps, actor: Actor, id: string) {
  const db = deps.database.db;
  await getRouteRow(db, actor.orgId, id);
  await db.delete(routes).where(and(eq(routes.id, id), eq(routes.orgId, actor.orgId)));
}
