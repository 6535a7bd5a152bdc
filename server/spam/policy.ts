import { ApiError } from '../core/errors.js';
import { compileList, listProblems, type SpamListInput } from './lists.js';
import type { SpamPolicy } from './verdict.js';

/** `settings.spam` as stored (validated when written: shared/contracts/forms.ts SpamSettings). */
export interface SpamSettingsInput {
  threshold?: number;
  action?: 'spam' | 'quarantine';
  min_seconds?: number;
  block?: SpamListInput;
  allow?: SpamListInput;
}

export const DEFAULT_THRESHOLD = 0.8;
export const DEFAULT_MIN_SECONDS = 2;

function spamOf(settings: Record<string, unknown> | null | undefined): SpamSettingsInput {
  const spam = settings?.spam;
  return spam && typeof spam === 'object' ? (spam as SpamSettingsInput) : {};
}

/** A form's policy: its own threshold, action and minimum time; its lists merged with its organization's. */
export function spamPolicyOf(
  formSettings: Record<string, unknown>,
  orgSettings: Record<string, unknown> | null | undefined,
): SpamPolicy {
  const form = spamOf(formSettings);
  const org = spamOf(orgSettings);
  return {
    threshold: typeof form.threshold === 'number' ? form.threshold : DEFAULT_THRESHOLD,
    action: form.action === 'quarantine' ? 'quarantine' : 'spam',
    minSeconds: typeof form.min_seconds === 'number' ? form.min_seconds : DEFAULT_MIN_SECONDS,
    block: compileList(form.block, org.block),
    allow: compileList(form.allow, org.allow),
  };
}

/** Throws 422 validation_failed naming each bad list entry of a `settings.spam` being written. */
export function checkSpamSettings(spam: SpamSettingsInput | null | undefined, path: string): void {
  if (!spam) return;
  const issues = [
    ...(spam.block ? listProblems(spam.block, `${path}.block`) : []),
    ...(spam.allow ? listProblems(spam.allow, `${path}.allow`) : []),
  ];
  if (!issues.length) return;
  throw new ApiError('validation_failed', `${issues[0].path}: ${issues[0].message}.`, {
    details: { issues },
    hint: 'ips take addresses or CIDRs (203.0.113.0/24, 2001:db8::/32); emails take whole addresses.',
  });
}
