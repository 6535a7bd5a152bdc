import { and, count, desc, eq } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import type { CreateProjectBody, UpdateProjectBody } from '../../shared/contracts/projects.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { ProjectRow } from '../db/rows.js';
import { forms, projects } from '../db/schema.js';
import { slugify } from '../domain/orgs.js';
import { type ProjectOut, presentProject } from '../present/projects.js';
import { routeOf } from './next-steps.js';

export type { ProjectRow } from '../db/rows.js';

export async function findProjectBySlug(db: Db, orgId: string, slug: string) {
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.orgId, orgId), eq(projects.slug, slug)))
    .limit(1);
  return row;
}

/** The project with this slug, created when missing (quickstart and form creation use it). */
export async function ensureProject(db: Db, orgId: string, slug: string, name?: string): Promise<ProjectRow> {
  const found = await findProjectBySlug(db, orgId, slug);
  if (found) return found;
  await db
    .insert(projects)
    .values({ id: newId('project'), orgId, slug, name: name ?? slug })
    .onConflictDoNothing();
  return (await findProjectBySlug(db, orgId, slug)) as ProjectRow;
}

/** Creates a project; with if_exists "return" an existing slug answers the existing project. */
export async function createProject(deps: Deps, actor: Actor, body: z.output<typeof CreateProjectBody>) {
  const db = deps.database.db;
  const slug = body.slug ?? slugify(body.name);
  const inserted = await db
    .insert(projects)
    .values({ id: newId('project'), orgId: actor.orgId, slug, name: body.name, tags: body.tags ?? [] })
    .onConflictDoNothing()
    .returning();
  if (inserted.length) return { created: true, project: presentProject(inserted[0]) };
  const existing = await findProjectBySlug(db, actor.orgId, slug);
  if (body.if_exists === 'return' && existing) return { created: false, project: presentProject(existing) };
  throw new ApiError('conflict', `A project with slug "${slug}" exists already.`, {
    hint: 'Pass if_exists: "return" to get the existing project, or choose another slug.',
    details: { existing_id: existing?.id },
  });
}

export async function listProjects(deps: Deps, actor: Actor, page: Page) {
  const rows = await deps.database.db
    .select()
    .from(projects)
    .where(and(eq(projects.orgId, actor.orgId), page.after(projects.id)))
    .orderBy(desc(projects.id))
    .limit(page.limit + 1);
  return pageResult(rows, page, presentProject);
}

export async function getProjectRow(db: Db, orgId: string, id: string) {
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.id, id), eq(projects.orgId, orgId)))
    .limit(1);
  if (!row) throw notFound('project', id);
  return row;
}

export async function updateProject(
  deps: Deps,
  actor: Actor,
  id: string,
  body: z.output<typeof UpdateProjectBody>,
): Promise<ProjectOut> {
  await getProjectRow(deps.database.db, actor.orgId, id);
  const [row] = await deps.database.db
    .update(projects)
    .set({ ...(body.name !== undefined ? { name: body.name } : {}), ...(body.tags ? { tags: body.tags } : {}) })
    .where(and(eq(projects.id, id), eq(projects.orgId, actor.orgId)))
    .returning();
  return presentProject(row);
}

export async function deleteProject(deps: Deps, actor: Actor, id: string) {
  const db = deps.database.db;
  await getProjectRow(db, actor.orgId, id);
  const [{ n }] = await db
    .select({ n: count() })
    .from(forms)
    .where(and(eq(forms.orgId, actor.orgId), eq(forms.projectId, id)));
  if (Number(n) > 0) {
    throw new ApiError('conflict', `The project still holds ${n} form(s).`, {
      hint: `Delete or move its forms first (${routeOf(ops.forms.delete)}).`,
    });
  }
  await db.delete(projects).where(and(eq(projects.id, id), eq(projects.orgId, actor.orgId)));
}
