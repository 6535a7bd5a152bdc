import type { z } from '../../shared/contracts/common.js';
import type { DriftEvent } from '../../shared/contracts/drift.js';
import type { DriftRow } from '../db/rows.js';

export type DriftOut = z.output<typeof DriftEvent>;

export function presentDrift(d: DriftRow): DriftOut {
  return {
    id: d.id,
    form_id: d.formId,
    field: d.field,
    kind: d.kind as DriftOut['kind'],
    details: d.details,
    status: d.status as DriftOut['status'],
    count: d.count,
    schema_version: d.schemaVersion,
    first_submission_id: d.firstSubmissionId,
    last_submission_id: d.lastSubmissionId,
    created_at: d.createdAt.toISOString(),
    last_seen_at: d.lastSeenAt.toISOString(),
    closed_at: d.closedAt?.toISOString() ?? null,
  };
}
