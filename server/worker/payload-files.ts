import { type Obj, objOf } from '../../shared/objects.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { Claimed } from '../db/rows.js';
import { attachmentsOf, mayHaveFiles } from '../domain/attachments.js';
import { fileLinker } from '../domain/file-links.js';
import { attachmentSummary } from '../present/submissions.js';

/** The submissions a delivery row carries that may have files: its own, or a digest's items. */
function candidates(row: Claimed): string[] {
  const items = row.payload.submissions;
  if (Array.isArray(items)) {
    return items.filter((s) => mayHaveFiles(objOf(s).meta)).map((s) => String(objOf(s).id));
  }
  return row.submission_id && mayHaveFiles(row.payload.meta) ? [row.submission_id] : [];
}

/**
 * Files travel with their submission: the payloads of the rows whose submissions have files, with
 * `attachments` added (id, field_name, filename, content_type, size_bytes, sha256 and a signed
 * download_url that needs no key until download_expires_at). Added at each attempt, so a retry
 * carries fresh links; the stored snapshot stays as planned. Rows of submissions without files are
 * left out, and a batch without multipart submissions costs no query.
 */
export async function payloadsWithFiles(
  deps: { config: Config; database: Database; now: () => Date },
  rows: Claimed[],
): Promise<Map<string, Obj>> {
  const out = new Map<string, Obj>();
  const wanted = rows.flatMap((row) => candidates(row).map((id) => ({ id, org: row.org_id })));
  if (!wanted.length) return out;
  const files = await attachmentsOf(
    deps.database.db,
    wanted.map((w) => w.org),
    wanted.map((w) => w.id),
  );
  if (!files.size) return out;
  const link = await fileLinker(deps);
  const listed = (row: Claimed, submissionId: string) => {
    const own = (files.get(submissionId) ?? []).filter((a) => a.orgId === row.org_id);
    return own.map((a) => ({
      ...attachmentSummary(a),
      download_url: link.url(a.id),
      download_expires_at: link.expiresAt,
    }));
  };
  for (const row of rows) {
    const items = row.payload.submissions;
    if (Array.isArray(items)) {
      if (!items.some((s) => files.has(String(objOf(s).id)))) continue;
      out.set(row.id, {
        ...row.payload,
        submissions: items.map((s) => {
          const found = listed(row, String(objOf(s).id));
          return found.length ? { ...objOf(s), attachments: found } : s;
        }),
      });
    } else if (row.submission_id && files.has(row.submission_id)) {
      const found = listed(row, row.submission_id);
      if (found.length) out.set(row.id, { ...row.payload, attachments: found });
    }
  }
  return out;
}
