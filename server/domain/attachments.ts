import { and, asc, inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import type { AttachmentRow } from '../db/rows.js';
import { attachments } from '../db/schema.js';

/**
 * Whether a submission can have files: they arrive only in multipart bodies, whose content type
 * the submission keeps in meta. Lists and payloads read attachments only for these, so submissions
 * sent as JSON or urlencoded (nearly all) cost no query.
 */
export function mayHaveFiles(meta: unknown): boolean {
  const type = meta && typeof meta === 'object' ? (meta as Record<string, unknown>).content_type : null;
  return typeof type === 'string' && /^\s*multipart\//i.test(type);
}

/** The attachment rows of these submissions, by submission id (one query; none when no id is given). */
export async function attachmentsOf(db: Db, orgIds: string[], submissionIds: string[]) {
  const out = new Map<string, AttachmentRow[]>();
  if (!submissionIds.length) return out;
  const rows = await db
    .select()
    .from(attachments)
    .where(and(inArray(attachments.submissionId, submissionIds), inArray(attachments.orgId, [...new Set(orgIds)])))
    .orderBy(asc(attachments.id));
  for (const a of rows) out.set(a.submissionId, [...(out.get(a.submissionId) ?? []), a]);
  return out;
}
