import { and, eq, inArray, notInArray, sql } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { EraseBody, EraseResult } from '../../shared/contracts/submissions.js';
import type { Actor, Deps } from '../core/deps.js';
import { attachments, deliveries, submissions } from '../db/schema.js';
import { getFormRow } from '../domain/form-rows.js';
import { sha256 } from '../domain/secrets.js';
import { appendEvent } from '../events.js';
import { deleteChunks } from '../files/postgres.js';
import { deleteAddressSightings } from '../spam/velocity.js';
import { deleteAttempts } from '../worker/attempts.js';
import { eraseAddressTraces } from './erase-trace.js';
import { addressCondition } from './submission-search.js';

/** Submissions deleted per transaction: one person's data is usually a handful; many go in batches. */
const ERASE_BATCH = 500;

/** Delivery states that are over; the others are ended as `skipped` (erased) so nothing is sent. */
const FINISHED = ['sent', 'dead', 'skipped'];

/** The payload an erased submission's delivery keeps: the row stays for counts, the data goes. */
const ERASED_PAYLOAD = { erased: true };

export type EraseInput = z.output<typeof EraseBody>;

/**
 * A data-subject request: every submission of the organization (or of one form) that holds the
 * address in any field goes, with its attachments (rows and stored bytes). Its deliveries stay as
 * rows, since monthly counts read them, but keep no personal data: payload, last response and
 * last error are replaced, and a delivery still to send is ended as skipped (reason `erased`).
 * A digest delivery that lists one of them keeps only its id in that list, and no last response
 * or last error. The address is also replaced wherever a receiver's words copied it into the
 * organization's event log or system-webhook deliveries (see erase-trace.ts).
 * One `submissions.erased` event records the count and a SHA-256 of the address, never the
 * address. `dry_run` only counts. Files are removed after each batch commits.
 */
export async function eraseSubmissions(
  deps: Deps,
  actor: Actor,
  input: EraseInput,
): Promise<z.output<typeof EraseResult>> {
  const db = deps.database.db;
  const address = input.email.trim().toLowerCase();
  if (input.form_id !== undefined) await getFormRow(db, actor.orgId, input.form_id);
  const match = and(
    eq(submissions.orgId, actor.orgId),
    input.form_id === undefined ? undefined : eq(submissions.formId, input.form_id),
    addressCondition(address),
  );
  const [{ n: matched }] = await db.select({ n: sql<number>`count(*)::int` }).from(submissions).where(match);
  const result = { matched: Number(matched), deleted: 0, files_deleted: 0, dry_run: input.dry_run === true };
  if (result.dry_run) return result;

  for (;;) {
    const batch = await db.transaction(async (tx) => {
      const ids = (
        await tx
          .select({ id: submissions.id })
          .from(submissions)
          .where(match)
          .limit(ERASE_BATCH)
          .for('update', { skipLocked: true })
      ).map((r) => r.id);
      if (!ids.length) return null;
      const mine = and(eq(deliveries.orgId, actor.orgId), inArray(deliveries.submissionId, ids));
      await tx
        .update(deliveries)
        .set({ status: 'skipped', skipReason: 'erased', nextAttemptAt: null, leaseUntil: null })
        .where(and(mine, notInArray(deliveries.status, FINISHED)));
      await tx.update(deliveries).set({ payload: ERASED_PAYLOAD, lastResponse: null, lastError: null }).where(mine);
      // Their attempts go too (an error text may echo what the receiver was sent).
      await deleteAttempts(tx, mine);
      // A digest lists many submissions in its payload: an erased one keeps only its id there, and
      // the receiver's answer to it (which may echo any of them) goes.
      const idList = sql`array[${sql.join(
        ids.map((id) => sql`${id}`),
        sql`, `,
      )}]::text[]`;
      await tx.execute(sql`
        update deliveries d set payload = jsonb_set(d.payload, '{submissions}', (
          select jsonb_agg(case when x->>'id' = any(${idList})
            then jsonb_build_object('id', x->>'id', 'erased', true) else x end order by n)
          from jsonb_array_elements(d.payload->'submissions') with ordinality as e(x, n))),
          last_response = null, last_error = null
        where d.org_id = ${actor.orgId} and d.submission_id is null
          and jsonb_typeof(d.payload->'submissions') = 'array'
          and exists (select 1 from jsonb_array_elements(d.payload->'submissions') x where x->>'id' = any(${idList}))`);
      const files = await tx
        .delete(attachments)
        .where(and(eq(attachments.orgId, actor.orgId), inArray(attachments.submissionId, ids)))
        .returning({ id: attachments.id, key: attachments.storageKey });
      await deleteChunks(
        tx,
        files.map((f) => f.id),
      );
      const gone = await tx
        .delete(submissions)
        .where(and(eq(submissions.orgId, actor.orgId), inArray(submissions.id, ids)))
        .returning({ id: submissions.id });
      return { deleted: gone.length, files: files.map((f) => f.key) };
    });
    if (!batch) break;
    result.deleted += batch.deleted;
    result.files_deleted += batch.files.length;
    await Promise.all(
      batch.files.map((key) =>
        deps.storage
          .remove(key)
          .catch((err) => deps.log.warn({ org_id: actor.orgId, err: String(err) }, 'erase could not remove a file')),
      ),
    );
    if (batch.deleted < ERASE_BATCH) break;
  }
  // The address may also have been copied into the event log and system-webhook deliveries.
  await db.transaction((tx) => eraseAddressTraces(tx, actor.orgId, address));
  // And velocity's shared sightings of it (a hash; gone within the window anyway).
  await deleteAddressSightings(db, actor.orgId, address);
  const { dispatched } = await appendEvent(db, {
    orgId: actor.orgId,
    type: 'submissions.erased',
    subject: input.form_id === undefined ? {} : { form_id: input.form_id },
    data: {
      matched: result.matched,
      deleted: result.deleted,
      files_deleted: result.files_deleted,
      email_sha256: sha256(address),
    },
    now: deps.now(),
  });
  if (dispatched) deps.wake();
  return result;
}
