import type { Deps } from '../core/deps.js';
import { type IntakeEntry, intakeEntry } from './cache.js';
import { type IntakeRequest, intake, type Outcome } from './submit.js';

/**
 * One submission to a form, as POST /s/{formId} takes it: the form's kept entry, then intake with
 * this process's worker yielding while it runs (IntakeLoad). The intake route and the dashboard's
 * "Send a test submission" both call this. `onEntry` sees the entry before the write (the route
 * answers CORS from it, so an error thrown by intake still carries the form's CORS headers).
 */
export async function receive(
  deps: Deps,
  formId: string,
  input: IntakeRequest,
  onEntry?: (entry: IntakeEntry) => void,
): Promise<{ entry: IntakeEntry; out: Outcome }> {
  const entry = await intakeEntry(deps.database, formId);
  onEntry?.(entry);
  deps.handoff?.started();
  try {
    const out = await intake(deps, input, entry);
    if (!out.idempotent) deps.metrics?.submission(out.submission.status, out.submission.quarantineReason);
    return { entry, out };
  } finally {
    deps.handoff?.finished();
  }
}
