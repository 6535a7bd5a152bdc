import type { z } from '../../shared/contracts/common.js';
import type { Stream, StreamSource } from '../../shared/contracts/streams.js';
import type { StreamRow, StreamSchemaRow, StreamSourceRow } from '../db/rows.js';
import { presentSchemaVersion, type SchemaVersionOut } from './schemas.js';

export type StreamOut = z.output<typeof Stream>;
export type StreamSourceOut = z.output<typeof StreamSource>;

export const presentStreamSchema = (s: StreamSchemaRow): SchemaVersionOut => presentSchemaVersion(s);

export function presentSource(s: StreamSourceRow): StreamSourceOut {
  return {
    id: s.id,
    form_id: s.formId,
    selector: s.selector,
    mapping: s.mapping as StreamSourceOut['mapping'],
    mapping_status: s.mappingStatus as StreamSourceOut['mapping_status'],
    missing: s.missing,
    stream_schema_version: s.streamSchemaVersion,
    created_at: s.createdAt.toISOString(),
  };
}

export function presentStream(
  s: StreamRow,
  counts: StreamOut['counts'] = { sources: 0, routes: 0, submissions_30d: 0 },
): StreamOut {
  return {
    id: s.id,
    slug: s.slug,
    name: s.name,
    current_schema_version: s.currentSchemaVersion,
    counts,
    created_at: s.createdAt.toISOString(),
  };
}
