import type { z } from '../../shared/contracts/common.js';
import type { SchemaVersion } from '../../shared/contracts/schemas.js';
import type { FormSchemaRow } from '../db/rows.js';

export type SchemaVersionOut = z.output<typeof SchemaVersion>;

/** A form or stream schema version row, as SchemaVersion. */
export function presentSchemaVersion(
  s: Pick<FormSchemaRow, 'version' | 'jsonSchema' | 'ui' | 'changelog' | 'inferred' | 'createdAt' | 'createdBy'>,
): SchemaVersionOut {
  return {
    version: s.version,
    json_schema: s.jsonSchema,
    ui: s.ui as SchemaVersionOut['ui'],
    changelog: s.changelog,
    inferred: s.inferred,
    created_at: s.createdAt.toISOString(),
    created_by: s.createdBy,
  };
}
