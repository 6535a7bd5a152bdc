import { and, asc, eq, inArray, lt } from 'drizzle-orm';
import type { Deps } from '../core/deps.js';
import { forms, sandboxes, submissions } from '../db/schema.js';

/**
 * Housekeeping: every sandbox past expires_at is deleted (claimed ones too); an unclaimed one takes
 * its form and submissions with it. Bounded per run.
 */
export async function deleteExpiredSandboxes(deps: Deps, batch = 200): Promise<number> {
  const db = deps.database.db;
  const due = await db
    .select()
    .from(sandboxes)
    .where(lt(sandboxes.expiresAt, deps.now()))
    .orderBy(asc(sandboxes.expiresAt))
    .limit(batch);
  if (!due.length) return 0;
  const unclaimedForms = due.filter((s) => s.status !== 'claimed').map((s) => s.formId);
  await db.transaction(async (tx) => {
    if (unclaimedForms.length) {
      const orgIds = [...new Set(due.filter((s) => s.status !== 'claimed').map((s) => s.orgId))];
      const owned = and(inArray(forms.orgId, orgIds), inArray(forms.id, unclaimedForms), eq(forms.sandbox, true));
      const still = (await tx.select({ id: forms.id }).from(forms).where(owned)).map((f) => f.id);
      if (still.length) {
        // The conditions repeat in the deletes: a claim committing meanwhile moves the form and its
        // submissions out of the sandbox organization, and then nothing of it is deleted.
        await tx.delete(submissions).where(and(inArray(submissions.formId, still), inArray(submissions.orgId, orgIds)));
        await tx.delete(forms).where(and(inArray(forms.id, still), eq(forms.sandbox, true)));
      }
    }
    await tx.delete(sandboxes).where(
      inArray(
        sandboxes.id,
        due.map((s) => s.id),
      ),
    );
  });
  return due.length;
}
