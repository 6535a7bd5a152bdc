import type { z } from '../../shared/contracts/common.js';
import type { Form } from '../../shared/contracts/forms.js';
import type { Deps } from '../core/deps.js';
import type { FormRow } from '../db/rows.js';

export type FormOut = z.output<typeof Form>;
type Counts = FormOut['counts'];

export const submitUrl = (deps: Deps, formId: string) => `${deps.config.publicBaseUrl}/s/${formId}`;
/** The hosted form page (public HTML rendered from the current schema). */
export const hostedUrl = (deps: Deps, formId: string) => `${deps.config.publicBaseUrl}/f/${formId}`;

/** Settings as read through the API: the challenge secret never leaves. */
export function presentSettings(settings: Record<string, unknown>): FormOut['settings'] {
  const out = { ...settings };
  const ch = out.challenge as Record<string, unknown> | null | undefined;
  if (ch && typeof ch === 'object' && 'secret' in ch) out.challenge = { ...ch, secret: '[redacted]' };
  return out;
}

/** Row → wire Form (settings redacted). */
export function presentForm(
  deps: Deps,
  f: FormRow,
  counts: Counts = { submissions: 0, last_submission_at: null },
  streams: FormStream[] = [],
): FormOut {
  return {
    id: f.id,
    project_id: f.projectId,
    slug: f.slug,
    name: f.name,
    tags: f.tags,
    status: f.status as FormOut['status'],
    schema_mode: f.schemaMode as FormOut['schema_mode'],
    current_schema_version: f.currentSchemaVersion,
    settings: presentSettings(f.settings),
    submit_url: submitUrl(deps, f.id),
    hosted_url: hostedUrl(deps, f.id),
    streams,
    counts,
    created_at: f.createdAt.toISOString(),
  };
}

export type FormStream = { id: string; slug: string; mapping_status: 'valid' | 'incomplete' };
