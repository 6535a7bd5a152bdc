import type { z } from '../../shared/contracts/common.js';
import type { AttachmentSummary, Submission, SubmissionAttachment } from '../../shared/contracts/submissions.js';
import type { Deps } from '../core/deps.js';
import type { AttachmentRow, SubmissionRow } from '../db/rows.js';

export type SubmissionOut = z.output<typeof Submission>;
export type SubmissionAttachmentOut = z.output<typeof SubmissionAttachment>;
export type AttachmentSummaryOut = z.output<typeof AttachmentSummary>;

/** Where a file is read with the API's own credentials. */
export const downloadUrl = (deps: Deps, a: { submissionId: string; id: string }) =>
  `${deps.config.publicBaseUrl}/v1/submissions/${a.submissionId}/attachments/${a.id}`;

/** Row → wire Submission: quarantine_reason only while quarantined. */
export function presentSubmission(s: SubmissionRow): SubmissionOut {
  return {
    id: s.id,
    form_id: s.formId,
    status: s.status as SubmissionOut['status'],
    quarantine_reason: s.status === 'quarantined' ? (s.quarantineReason as SubmissionOut['quarantine_reason']) : null,
    duplicate_of: s.duplicateOf ?? null,
    test: s.test,
    data: s.data,
    form_schema_version: s.formSchemaVersion,
    spam: s.spam,
    meta: s.meta,
    received_at: s.receivedAt.toISOString(),
    ...(s.confirmation ? { confirmation: s.confirmation } : {}),
  };
}

export function presentAttachment(deps: Deps, a: AttachmentRow): SubmissionAttachmentOut {
  return {
    id: a.id,
    form_id: a.formId,
    submission_id: a.submissionId,
    field_name: a.fieldName,
    filename: a.filename,
    content_type: a.contentType,
    size_bytes: a.sizeBytes,
    sha256: a.sha256,
    download_url: downloadUrl(deps, a),
    created_at: a.createdAt.toISOString(),
  };
}

/** What a list item and a payload say about a file; no link (a payload adds a signed one). */
export function attachmentSummary(a: AttachmentRow): AttachmentSummaryOut {
  return {
    id: a.id,
    field_name: a.fieldName,
    filename: a.filename,
    content_type: a.contentType,
    size_bytes: a.sizeBytes,
    sha256: a.sha256,
  };
}
