/**
 * The closed list of error codes: HTTP status, what it means, and what to do next.
 * The server writes every error envelope from this table; /docs/errors renders it.
 */
export const ERROR_CODES = {
  bad_request: {
    status: 400,
    meaning: 'The request could not be read: malformed JSON or a malformed header.',
    hint: 'Send a well-formed body (JSON objects need Content-Type: application/json).',
  },
  unauthorized: {
    status: 401,
    meaning: 'Credentials are missing or invalid.',
    hint: 'Send Authorization: Bearer <API_KEY>. Get a key with POST /v1/auth/request-code then POST /v1/auth/verify-code.',
  },
  forbidden: {
    status: 403,
    meaning: 'The credentials lack permission (scope or role) for this operation.',
    hint: 'Use a key with a wider scope (manage ⊃ read ⊃ submit), or ask an owner or admin.',
  },
  origin_rejected: {
    status: 403,
    meaning:
      "The request's Origin is not in the form's allowed origins; the submission is still stored as quarantined.",
    hint: "Add the origin to the form's settings.allowed_origins, or post from an allowed origin.",
  },
  not_found: {
    status: 404,
    meaning: 'Unknown id or path, or a resource of another organization.',
    hint: 'Check the id (list the resource to find it) and that the key belongs to the right organization.',
  },
  method_not_allowed: {
    status: 405,
    meaning: 'The path exists but not with this HTTP method.',
    hint: 'See the Allow header or /openapi.json for the methods this path takes.',
  },
  conflict: {
    status: 409,
    meaning: 'The resource exists already or is still referenced.',
    hint: 'Pass if_exists: "return" to get the existing resource, or remove what still references it.',
  },
  idempotency_conflict: {
    status: 409,
    meaning: 'An Idempotency-Key was reused for a different request.',
    hint: 'Use a fresh Idempotency-Key for a different body, or resend the original body unchanged.',
  },
  approval_pending: {
    status: 409,
    meaning:
      'Extension: the destination was created or re-pointed by an API key and waits for an owner or admin to approve it (settings.approve_destinations "keys").',
    hint: 'Ask an owner or admin to approve it in the dashboard (/app/approvals); its deliveries wait until then and are sent once approved.',
  },
  gone: {
    status: 410,
    meaning: 'The resource existed but has expired or been consumed.',
    hint: 'Create a new one.',
  },
  plan_limit_reached: {
    status: 402,
    meaning: "The organization's plan limit is reached.",
    hint: 'Delete unused resources or move to a larger plan; GET /v1/me shows limits and usage.',
  },
  payload_too_large: {
    status: 413,
    meaning: 'The payload size, field count or nesting depth is too large; multipart has a 16 MiB aggregate ceiling.',
    hint: 'Send a smaller body (256 KB for JSON and urlencoded submissions, 1 MB for /v1 bodies).',
  },
  attachment_too_large: {
    status: 413,
    meaning: 'A file is above the per-file limit.',
    hint: 'Send a smaller file; GET /v1/me shows limits.attachment_max_bytes.',
  },
  attachment_limit_reached: {
    status: 413,
    meaning: 'Too many attachments in one submission.',
    hint: 'Send fewer files; GET /v1/me shows limits.attachments_per_submission.',
  },
  attachment_storage_limit_reached: {
    status: 402,
    meaning: 'Retained attachment storage is full, including pending work.',
    hint: 'Delete old submissions with files or move to a larger plan.',
  },
  attachment_storage_unavailable: {
    status: 503,
    meaning: 'Private attachment storage is not available.',
    hint: 'Retry later, or submit without files.',
  },
  unsupported_media_type: {
    status: 415,
    meaning: 'The body encoding is not supported.',
    hint: 'Send application/json, application/x-www-form-urlencoded or multipart/form-data.',
  },
  validation_failed: {
    status: 422,
    meaning: 'Some fields are invalid.',
    hint: 'Fix the fields listed in details.issues and send again.',
  },
  mapping_incomplete: {
    status: 422,
    meaning: 'Required stream fields are unmapped.',
    hint: 'Map every field listed in details.missing with from, const or default.',
  },
  stream_schema_missing: {
    status: 422,
    meaning: 'The stream has no schema and the source cannot provide one.',
    hint: 'Publish a stream schema with POST /v1/streams/{id}/schema first.',
  },
  schema_violation: {
    status: 422,
    meaning: "The data violates the form's schema.",
    hint: 'Fix the fields listed in details.issues, or switch the form to observe mode.',
  },
  expressions_not_enabled: {
    status: 422,
    meaning: 'expr, filter or transform was used; expressions are reserved.',
    hint: 'Use from, const or default instead, and leave filter and transform out.',
  },
  rate_limited: {
    status: 429,
    meaning: 'Too many requests; for submissions, the submission is stored as quarantined.',
    hint: 'Wait for the number of seconds in Retry-After, then try again.',
  },
  internal_error: {
    status: 500,
    meaning: 'An unexpected failure on the server.',
    hint: 'Retry; if it persists, report the X-Request-Id of the response.',
  },
  not_implemented: {
    status: 501,
    meaning: 'The feature is not configured on this server (for example email sending).',
    hint: 'Ask the operator to configure it (SMTP_URL or MAIL_TRANSPORT).',
  },
  bad_gateway: {
    status: 502,
    meaning: 'An upstream service (for example the SMTP server) refused the request.',
    hint: 'Retry in a minute; if it persists, ask the operator to check the mail server.',
  },
  service_unavailable: {
    status: 503,
    meaning: 'The service or its database is temporarily unavailable.',
    hint: 'Retry after a few seconds.',
  },
} as const satisfies Record<string, { status: number; meaning: string; hint: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
