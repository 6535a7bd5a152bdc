import type { z } from '../../shared/contracts/common.js';
import type { Project } from '../../shared/contracts/projects.js';
import type { ProjectRow } from '../db/rows.js';

export type ProjectOut = z.output<typeof Project>;

export function presentProject(p: ProjectRow): ProjectOut {
  return { id: p.id, slug: p.slug, name: p.name, tags: p.tags, created_at: p.createdAt.toISOString() };
}
