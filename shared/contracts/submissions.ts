import { body, errors, getById, IdParam, json, ListQuery, listOf, op, Timestamp, z } from './common.js';
import { Delivery } from './deliveries.js';
import { DriftEvent } from './drift.js';
import { Confirmation } from './submitter.js';

export const SUBMISSION_STATUSES = ['received', 'quarantined', 'spam'] as const;
export const QUARANTINE_REASONS = [
  'schema_violation',
  'rate_limited',
  'origin_rejected',
  'turnstile_failed',
  'over_quota',
  'spam_suspected',
  'challenge_failed',
  /** extension: settings.unique found the same values already received (duplicate_of names the first) */
  'duplicate',
  // extension: a double opt-in submission waiting for its submitter's confirmation
  'pending_confirmation',
] as const;

/**
 * The spam reason codes formsvc records today (docs/spam.md explains each); the dashboard's inbox
 * filter offers them. The `spam_reason` filter takes any code of this shape, so a code added later
 * filters without a contract change.
 */
export const SPAM_REASONS = [
  'honeypot_filled',
  'block_list',
  'allow_list',
  'learned_spam',
  'learned_ham',
  'too_fast',
  'stale_page',
  'bad_render_token',
  'many_links',
  'link_density',
  'url_shortener',
  'markup',
  'repeated_text',
  'mostly_symbols',
  'all_caps',
  'disposable_email',
  'email_no_dot',
  'velocity_content',
  'velocity_address',
  'no_user_agent',
] as const;

export const SpamSignal = z
  .object({
    code: z.string().meta({ description: 'the reason code, as in `reasons`' }),
    text: z.string().meta({ description: 'why it fired, for a person' }),
    weight: z.number().meta({ description: 'what it added to the score (0..1)' }),
  })
  .meta({ id: 'SpamSignal' });

export const Submission = z
  .object({
    id: z.string(),
    form_id: z.string(),
    status: z.enum(SUBMISSION_STATUSES),
    quarantine_reason: z.enum(QUARANTINE_REASONS).nullable().meta({
      description:
        'null unless quarantined; spam_suspected, challenge_failed (a missing, wrong, expired or replayed proof-of-work solution) and duplicate (settings.unique found the values already received) are extensions',
    }),
    duplicate_of: z.string().nullable().meta({
      description: 'extension: the first submission with the same settings.unique values (set on a duplicate)',
    }),
    test: z.boolean().meta({ description: 'sent with _test: true' }),
    data: z.record(z.string(), z.unknown()).meta({
      description: 'fields as sent, control fields (_*) removed; files appear as fl_ ids',
    }),
    form_schema_version: z.number().int().nullable().meta({ description: 'version validated against' }),
    spam: z
      .object({
        score: z.number().meta({ description: '0..1' }),
        reasons: z.array(z.string()).meta({ description: 'the codes of the signals that fired' }),
        signals: z.array(SpamSignal).optional().meta({
          description: 'extension: each signal with a short text and its weight (absent on older submissions)',
        }),
      })
      .meta({
        description:
          'the spam verdict; quarantine reason spam_suspected (an extension) is the verdict with settings.spam.action "quarantine"',
      }),
    meta: z.record(z.string(), z.unknown()).meta({
      description: 'ip, user_agent, origin, referer, country (when known), received_at, content_type',
    }),
    received_at: Timestamp,
    confirmation: Confirmation.optional().meta({
      description: 'extension: present once a double opt-in submission was confirmed (settings.confirm)',
    }),
  })
  .meta({ id: 'Submission' });

export const SubmissionAttachment = z
  .object({
    id: z.string(),
    form_id: z.string(),
    submission_id: z.string(),
    field_name: z.string(),
    filename: z.string(),
    content_type: z.string(),
    size_bytes: z.number().int().min(0),
    sha256: z.string(),
    download_url: z.string().meta({
      description:
        'GET with the same credentials (read scope); in a delivery payload instead a signed link that needs no key',
    }),
    created_at: Timestamp,
  })
  .meta({ id: 'SubmissionAttachment' });

export const AttachmentSummary = SubmissionAttachment.pick({
  id: true,
  field_name: true,
  filename: true,
  content_type: true,
  size_bytes: true,
  sha256: true,
}).meta({ id: 'AttachmentSummary' });

/** A list item: the submission and a summary of its files (download them through submissions_get). */
export const SubmissionListItem = Submission.extend({
  attachments: z.array(AttachmentSummary).meta({ description: 'the files of the submission; empty when none' }),
}).meta({ id: 'SubmissionListItem' });

export const SubmissionDetail = Submission.extend({
  attachments: z.array(SubmissionAttachment),
  deliveries: z.array(Delivery).meta({ description: 'deliveries of this submission, oldest first' }),
  drift: z.array(DriftEvent).meta({
    description: 'the drift events this submission opened or counted into (their current state)',
  }),
  issues: z
    .array(z.unknown())
    .nullable()
    .meta({ description: 'schema validation issues found at intake; null when not validated or none' }),
}).meta({ id: 'SubmissionDetail' });

const IsoTime = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .meta({ description: 'ISO 8601 timestamp (or date, meaning its 00:00 UTC)', example: '2026-01-01T00:00:00Z' });

/** An address as a person typed it: surrounding spaces dropped, compared case-insensitively. */
const Address = z.string().trim().max(320).pipe(z.email()).meta({ example: 'ada@example.com' });

const filters = {
  status: z.enum(SUBMISSION_STATUSES).optional(),
  test: z.enum(['true', 'false']).optional().meta({
    description: 'true: only _test submissions; false: only real ones; absent: both (the default includes tests)',
  }),
  since: IsoTime.optional().meta({ description: 'received at or after this time' }),
  until: IsoTime.optional().meta({ description: 'received before this time' }),
  q: z
    .string()
    .max(1000)
    .optional()
    .meta({
      description:
        'search: every word (letters and digits) must occur, case-insensitively, in a data value ' +
        '(strings at any depth, numbers as written) or the id',
    }),
  spam_reason: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,63}$/, 'a spam reason code such as block_list or too_fast')
    .optional()
    .meta({
      description:
        'extension: only submissions whose spam.reasons hold this code (e.g. block_list, too_fast, learned_spam)',
    }),
};

export const SubmissionListQuery = ListQuery.extend({
  form_id: z.string().optional(),
  ...filters,
  email: Address.optional().meta({
    description: 'data-subject lookup: submissions holding this address in any field (case-insensitive, trimmed)',
  }),
});

export const FormSubmissionListQuery = ListQuery.extend(filters);

export const UpdateSubmissionBody = z
  .strictObject({
    status: z.enum(['received', 'spam']).meta({
      description: '"spam" marks as spam; "received" marks as not spam or releases a quarantined submission',
    }),
  })
  .meta({ id: 'UpdateSubmissionBody' });

const AttachmentParams = z.object({
  id: z.string().meta({ param: { name: 'id', in: 'path' } }),
  fileId: z.string().meta({ param: { name: 'fileId', in: 'path' } }),
});

export const SubmissionList = listOf(SubmissionListItem, 'SubmissionList');

const FileLinkParams = z.object({ fileId: z.string().meta({ param: { name: 'fileId', in: 'path' } }) });
const FileLinkQuery = z.object({
  expires: z.string().max(20).meta({ description: 'unix seconds after which the link stops working' }),
  signature: z.string().max(100).meta({ description: 'HMAC of the file id and expires, made by the server' }),
});

export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;

export const ExportQuery = z.object({
  format: z.enum(EXPORT_FORMATS).meta({ description: 'csv (UTF-8 with BOM, for spreadsheets) or ndjson' }),
  ...filters,
});

export const EraseBody = z
  .strictObject({
    email: Address,
    form_id: z.string().optional().meta({ description: 'only this form’s submissions (default: every form)' }),
    dry_run: z.boolean().optional().meta({ description: 'true: count only, delete nothing' }),
  })
  .meta({ id: 'EraseBody' });

export const EraseResult = z
  .object({
    matched: z.number().int().meta({ description: 'submissions holding the address' }),
    deleted: z.number().int().meta({ description: 'submissions deleted (0 in a dry run)' }),
    files_deleted: z.number().int().meta({ description: 'attachments deleted with them' }),
    dry_run: z.boolean(),
  })
  .meta({ id: 'EraseResult' });

const tags = ['submissions'];
const listErrors = errors('unauthorized', 'forbidden', 'validation_failed');

export const submissionOps = {
  list: op('read', {
    method: 'get',
    path: '/v1/submissions',
    operationId: 'submissions_list',
    tags,
    summary:
      'List submissions of all forms, newest first (filters: form_id, status, test, since, until); ' +
      'test submissions are included unless test=false',
    request: { query: SubmissionListQuery },
    responses: { 200: json(SubmissionList), ...listErrors },
  }),
  formList: op('read', {
    method: 'get',
    path: '/v1/forms/{id}/submissions',
    operationId: 'forms_submissions',
    tags,
    summary:
      'List one form’s submissions, newest first (filters: status, test, since, until); ' +
      'test submissions are included unless test=false',
    request: { params: IdParam, query: FormSubmissionListQuery },
    responses: {
      200: json(SubmissionList),
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'not_found'),
    },
  }),
  get: getById(SubmissionDetail, {
    path: '/v1/submissions/{id}',
    operationId: 'submissions_get',
    tags,
    summary: 'One submission with its attachments (download_url), deliveries, drift and validation issues',
    also: ['forbidden'],
  }),
  update: op('manage', {
    method: 'patch',
    path: '/v1/submissions/{id}',
    operationId: 'submissions_update',
    tags,
    summary:
      'Reclassify a submission: mark as spam, or as not spam / release from quarantine (status "received"). ' +
      'Changes only the status (data is never edited) and plans no deliveries; ' +
      're-delivery after reclassification: use POST /v1/deliveries/{id}/retry',
    request: { params: IdParam, body: body(UpdateSubmissionBody) },
    responses: {
      200: json(SubmissionDetail),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed'),
    },
  }),
  export: op('read', {
    method: 'get',
    path: '/v1/forms/{id}/submissions/export',
    operationId: 'forms_export',
    tags,
    summary:
      'Export a form’s submissions (filters as in the list) as CSV or NDJSON, streamed newest first; ' +
      'CSV: id, status, quarantine_reason, received_at, test, then one column per data field and per file field',
    request: { params: IdParam, query: ExportQuery },
    responses: {
      200: {
        description: 'The export, as a download (Content-Disposition)',
        content: {
          'text/csv': { schema: z.string() },
          'application/x-ndjson': { schema: z.string() },
        },
      },
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'not_found'),
    },
  }),
  erase: op('manage', {
    method: 'post',
    path: '/v1/submissions/erase',
    operationId: 'submissions_erase',
    tags,
    summary:
      'Data-subject erasure: delete every submission holding an address (any field, any form, or form_id), ' +
      'with its files and its deliveries’ payloads; dry_run only counts. Records a submissions.erased event ' +
      'with the count and a hash of the address',
    request: { body: body(EraseBody) },
    responses: {
      200: json(EraseResult),
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'not_found', 'idempotency_conflict'),
    },
  }),
  attachment: op('read', {
    method: 'get',
    path: '/v1/submissions/{id}/attachments/{fileId}',
    operationId: 'submissions_attachment',
    tags,
    summary: 'Download an attachment: the stored bytes with their content type, as a file (Content-Disposition)',
    request: { params: AttachmentParams },
    responses: {
      200: {
        description:
          'The file, with the media type it was uploaded with (application/octet-stream when that was not a valid one)',
        headers: {
          'Content-Disposition': {
            description: 'attachment; filename="<ASCII name>"; filename*=UTF-8\'\'<exact name> (RFC 6266)',
            required: true,
            schema: { type: 'string' },
          },
          'Content-Length': { description: 'the size in bytes', required: true, schema: { type: 'integer' } },
        },
        content: {
          '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
          'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
        },
      },
      ...errors('unauthorized', 'forbidden', 'not_found', 'attachment_storage_unavailable'),
    },
  }),
  fileLink: op('public', {
    method: 'get',
    path: '/files/{fileId}',
    operationId: 'files_download',
    tags,
    summary:
      'Download an attachment through the signed download_url of a delivery payload: no API key, valid until ' +
      'its expiry (ATTACHMENT_URL_TTL_S, 24 h by default); 403 when the signature is wrong or expired',
    request: { params: FileLinkParams, query: FileLinkQuery },
    responses: {
      200: {
        description: 'The file',
        content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } },
      },
      ...errors('forbidden', 'not_found', 'validation_failed', 'attachment_storage_unavailable'),
    },
  }),
};
