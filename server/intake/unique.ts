import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { uniqueClaims } from '../db/schema.js';

/**
 * One per person (settings.unique, extension): `{fields: string[], window_days?}`. A received
 * submission whose values of `fields` (trimmed, case-folded) were already received by the form
 * within the window is stored quarantined, reason `duplicate`, naming the first in `duplicate_of`.
 *
 * The first one claims its values in `unique_claims` inside the intake transaction (INSERT … ON
 * CONFLICT on the table's primary key): a second transaction with the same values waits on the
 * first's row and then sees it, in any process, so two firsts are never both stored. An expired
 * claim is taken over by the same statement. Only received submissions claim and are checked:
 * spam and quarantined ones neither block a person nor are blocked. Only forms with `unique` pay
 * anything (a hash and one statement); the others never leave intake's one-statement write.
 */
export interface UniqueClaim {
  key: string;
  /** null: the claim holds for good */
  expiresAt: Date | null;
}

const DAY_MS = 86_400_000;

/** The settings' fields and window, or null when the form has no usable `unique`. */
export function uniqueSettings(v: unknown): { fields: string[]; windowDays: number | null } | null {
  if (!v || typeof v !== 'object') return null;
  const { fields, window_days } = v as { fields?: unknown; window_days?: unknown };
  if (!Array.isArray(fields) || !fields.length || !fields.every((f) => typeof f === 'string' && f)) return null;
  const days = typeof window_days === 'number' && Number.isFinite(window_days) && window_days > 0 ? window_days : null;
  return { fields: fields as string[], windowDays: days };
}

/**
 * A value as compared: strings trimmed and case-folded (NFKC first, so full-width and composed
 * forms agree), numbers and booleans as text (25 and "25" are one person), lists element by element
 * in sorted order, objects with sorted keys.
 */
export function normalised(v: unknown): unknown {
  if (typeof v === 'string') return v.normalize('NFKC').trim().toLowerCase();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map((x) => JSON.stringify(normalised(x))).sort();
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return Object.keys(o)
      .sort()
      .map((k) => [k, normalised(o[k])]);
  }
  return null;
}

const blank = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && !v.length);

/**
 * The claim a submission's data makes: a hash of the form id and the normalised values, or null
 * when a field is missing or empty (nothing identifies the person: not checked).
 */
export function uniqueClaimOf(setting: unknown, formId: string, data: Record<string, unknown>, now: Date) {
  const u = uniqueSettings(setting);
  if (!u) return null;
  const values: unknown[] = [];
  for (const f of u.fields) {
    const v = normalised(data[f]);
    if (blank(v)) return null;
    values.push(v);
  }
  const key = createHash('sha256').update(formId).update('\u0000').update(JSON.stringify(values)).digest('base64url');
  const expiresAt = u.windowDays === null ? null : new Date(now.getTime() + u.windowDays * DAY_MS);
  return { key, expiresAt } satisfies UniqueClaim;
}

/**
 * Takes the claim for `submissionId`, or finds who holds it: the id of the first submission when
 * this one is a duplicate, else null. One statement; it always returns the row (the update keeps
 * an unexpired holder), so a claim committed by a concurrent transaction is seen too.
 */
export async function claimUnique(
  tx: Db,
  formId: string,
  claim: UniqueClaim,
  submissionId: string,
  now: Date,
): Promise<string | null> {
  const expired = sql`unique_claims.expires_at <= ${now.toISOString()}::timestamptz`;
  const [row] = await tx
    .insert(uniqueClaims)
    .values({ formId, key: claim.key, submissionId, expiresAt: claim.expiresAt })
    .onConflictDoUpdate({
      target: [uniqueClaims.formId, uniqueClaims.key],
      set: {
        submissionId: sql`case when ${expired} then excluded.submission_id else unique_claims.submission_id end`,
        expiresAt: sql`case when ${expired} then excluded.expires_at else unique_claims.expires_at end`,
      },
    })
    .returning({ holder: uniqueClaims.submissionId });
  return row && row.holder !== submissionId ? row.holder : null;
}
