import type { Readable } from 'node:stream';
import { and, asc, desc, eq, getTableColumns, gte, lt, type SQL, sql } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import type {
  SubmissionDetail,
  SubmissionListQuery,
  UpdateSubmissionBody,
} from '../../shared/contracts/submissions.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { AttachmentRow, SubmissionRow } from '../db/rows.js';
import { attachments, submissions } from '../db/schema.js';
import { attachmentsOf, mayHaveFiles } from '../domain/attachments.js';
import { fileLinkKey, linkProblem } from '../domain/file-links.js';
import { getFormRow } from '../domain/form-rows.js';
import { appendEvent } from '../events.js';
import { attachmentSummary, presentAttachment, presentSubmission } from '../present/submissions.js';
import { learnMark } from '../spam/learn.js';
import { responseBody } from '../storage.js';
import { deliveriesOfSubmission } from './deliveries.js';
import { driftOfSubmission } from './drift.js';
import { routeOf } from './next-steps.js';
import { searchConditions } from './submission-search.js';

export type { AttachmentRow, SubmissionRow } from '../db/rows.js';

/** Every column but search_text: the database's own (for `q`), as large as data, never presented. */
const { searchText: _searchText, ...submissionColumns } = getTableColumns(submissions);

export { submissionColumns };

/** The list filters (form_id, status, test, since/until, q, email, spam_reason), as the contract's query parses them. */
export type SubmissionFilter = Omit<z.output<typeof SubmissionListQuery>, 'cursor' | 'limit'>;

/** Submissions of the caller's organization, newest first, each with a summary of its files. */
export async function listSubmissions(deps: Deps, actor: Actor, page: Page, filter: SubmissionFilter) {
  const rows = await deps.database.db
    .select(submissionColumns)
    .from(submissions)
    .where(and(page.after(submissions.id), ...filterConditions(actor.orgId, filter)))
    .orderBy(desc(submissions.id))
    .limit(page.limit + 1);
  const withFiles = rows.slice(0, page.limit).filter((r) => mayHaveFiles(r.meta));
  const files = await attachmentsOf(
    deps.database.db,
    [actor.orgId],
    withFiles.map((r) => r.id),
  );
  return pageResult(rows, page, (r) => ({
    ...presentSubmission(r),
    attachments: (files.get(r.id) ?? []).map(attachmentSummary),
  }));
}

/** The list's filters as conditions on one organization's submissions (the list and the export). */
export function filterConditions(orgId: string, filter: SubmissionFilter): (SQL | undefined)[] {
  const conds: (SQL | undefined)[] = [eq(submissions.orgId, orgId)];
  if (filter.form_id) conds.push(eq(submissions.formId, filter.form_id));
  if (filter.status) conds.push(eq(submissions.status, filter.status));
  if (filter.test) conds.push(eq(submissions.test, filter.test === 'true'));
  if (filter.since) conds.push(gte(submissions.receivedAt, new Date(filter.since)));
  if (filter.until) conds.push(lt(submissions.receivedAt, new Date(filter.until)));
  // Containment (@>), the form a GIN index on spam would answer; there is none (it would cost every
  // intake insert), so this narrows the organization's rows read newest first by submissions_org.
  if (filter.spam_reason) {
    conds.push(sql`${submissions.spam} @> ${JSON.stringify({ reasons: [filter.spam_reason] })}::jsonb`);
  }
  conds.push(...searchConditions(filter));
  return conds;
}

/** One form's submissions; another organization's form is 404 rather than an empty list. */
export async function listFormSubmissions(
  deps: Deps,
  actor: Actor,
  formId: string,
  page: Page,
  filter: Omit<SubmissionFilter, 'form_id'>,
) {
  await getFormRow(deps.database.db, actor.orgId, formId);
  return listSubmissions(deps, actor, page, { ...filter, form_id: formId });
}

export async function getSubmissionRow(db: Db, orgId: string, id: string): Promise<SubmissionRow> {
  const [row] = await db
    .select(submissionColumns)
    .from(submissions)
    .where(and(eq(submissions.id, id), eq(submissions.orgId, orgId)))
    .limit(1);
  if (!row) throw notFound('submission', id);
  return row;
}

/** SubmissionDetail: the submission with its files, its deliveries (oldest first) and its issues. */
export async function submissionDetail(
  deps: Deps,
  actor: Actor,
  id: string,
): Promise<z.output<typeof SubmissionDetail>> {
  const db = deps.database.db;
  const row = await getSubmissionRow(db, actor.orgId, id);
  const files = await db
    .select()
    .from(attachments)
    .where(and(eq(attachments.orgId, actor.orgId), eq(attachments.submissionId, id)))
    .orderBy(asc(attachments.id));
  return {
    ...presentSubmission(row),
    attachments: files.map((a) => presentAttachment(deps, a)),
    deliveries: await deliveriesOfSubmission(db, actor.orgId, id),
    drift: await driftOfSubmission(db, actor.orgId, row.drift),
    issues: row.issues ?? null,
  };
}

/**
 * A user's reclassification: spam, or not spam / released from quarantine ("received"). Only the
 * status moves (quarantine_reason is cleared); data is never edited and no delivery is planned.
 * A real change appends `submission.updated` in the same transaction; the same status is a no-op.
 */
export async function updateSubmission(
  deps: Deps,
  actor: Actor,
  id: string,
  body: z.output<typeof UpdateSubmissionBody>,
): Promise<z.output<typeof SubmissionDetail>> {
  let wakeAfter = false;
  await deps.database.db.transaction(async (tx) => {
    const [row] = await tx
      .select({ status: submissions.status, formId: submissions.formId, data: submissions.data })
      .from(submissions)
      .where(and(eq(submissions.id, id), eq(submissions.orgId, actor.orgId)))
      .limit(1)
      .for('update');
    if (!row) throw notFound('submission', id);
    // Every mark teaches the organization's filter, also "received" on one already received.
    await learnMark(tx, actor.orgId, id, row.data, body.status === 'spam' ? 'spam' : 'ham');
    if (row.status === body.status) return;
    await tx
      .update(submissions)
      .set({ status: body.status, quarantineReason: null })
      .where(and(eq(submissions.id, id), eq(submissions.orgId, actor.orgId)));
    const { dispatched } = await appendEvent(tx, {
      orgId: actor.orgId,
      type: 'submission.updated',
      subject: { submission_id: id, form_id: row.formId },
      data: { from: row.status, to: body.status },
      now: deps.now(),
    });
    if (dispatched) wakeAfter = true;
  });
  if (wakeAfter) deps.wake();
  return submissionDetail(deps, actor, id);
}

/** An attachment's row and its bytes, ready to stream; 404 unless it belongs to this submission and org. */
export async function openAttachment(deps: Deps, actor: Actor, submissionId: string, fileId: string) {
  const [file] = await deps.database.db
    .select()
    .from(attachments)
    .where(
      and(eq(attachments.id, fileId), eq(attachments.submissionId, submissionId), eq(attachments.orgId, actor.orgId)),
    )
    .limit(1);
  if (!file) throw notFound('attachment', fileId);
  return { file, body: await fileBody(deps, file) };
}

/**
 * An attachment by its signed download link (a delivery payload's download_url): no API key, the
 * signature is the permission. A wrong or expired signature is 403 whether or not the file exists.
 */
export async function openFileLink(deps: Deps, fileId: string, q: { expires: string; signature: string }) {
  const problem = linkProblem(await fileLinkKey(deps.database), fileId, q.expires, q.signature, deps.now());
  if (problem) {
    throw new ApiError(
      'forbidden',
      problem === 'expired' ? 'This download link has expired.' : 'This download link is not valid.',
      {
        hint:
          'Use the download_url exactly as a delivery payload gave it, before it expires (ATTACHMENT_URL_TTL_S, 24 h by ' +
          `default); later, download with a read key through ${routeOf(ops.submissions.get)} (attachments[].download_url).`,
      },
    );
  }
  const [file] = await deps.database.db.select().from(attachments).where(eq(attachments.id, fileId)).limit(1);
  if (!file) {
    throw new ApiError('not_found', `Attachment ${fileId} no longer exists.`, {
      hint: 'Its submission was deleted (by a user or by retention); nothing is left to download.',
    });
  }
  return { file, body: await fileBody(deps, file) };
}

/** The stored bytes of an attachment as a response body; a missing file is 404, a failing store 503. */
async function fileBody(deps: Deps, file: AttachmentRow) {
  const fileId = file.id;
  let source: Readable | undefined;
  try {
    source = deps.storage.read(file.storageKey);
    return await responseBody(source);
  } catch (err) {
    source?.destroy();
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ApiError('not_found', `The bytes of attachment ${fileId} are no longer stored.`, {
        hint: `The file was removed from storage; its metadata (size, sha256) is still in ${routeOf(ops.submissions.get)}.`,
      });
    }
    deps.log.error({ err, file_id: fileId }, 'attachment storage read failed');
    throw new ApiError('attachment_storage_unavailable', 'The attachment cannot be read from storage right now.');
  }
}

const MEDIA_TYPE = /^[\w!#$&^.+-]{1,64}\/[\w!#$&^.+-]{1,128}(?:\s*;\s*[\w!#$&^.+-]+=(?:[\w!#$&^.+-]+|"[^"\\\r\n]*"))*$/;

/** Download headers: the stored type (when well-formed), always a download, never sniffed or rendered. */
export function attachmentHeaders(a: AttachmentRow): Record<string, string> {
  const type =
    a.contentType.length <= 255 && MEDIA_TYPE.test(a.contentType) ? a.contentType : 'application/octet-stream';
  return {
    'Content-Type': type,
    'Content-Length': String(a.sizeBytes),
    'Content-Disposition': contentDisposition(a.filename),
    'X-Content-Type-Options': 'nosniff',
    // An uploader chooses the type; should a browser render it anyway, it runs sandboxed and loads nothing.
    'Content-Security-Policy': "default-src 'none'; sandbox",
    'Cache-Control': 'private, no-store',
  };
}

/** RFC 6266: an ASCII fallback in filename, the exact name (UTF-8, RFC 5987) in filename*. */
export function contentDisposition(name: string): string {
  const exact = name.slice(0, 255).toWellFormed() || 'file';
  const ascii = exact.replace(/[^\x20-\x7e]|["\\/%;]/gu, '_');
  const encoded = encodeURIComponent(exact).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
