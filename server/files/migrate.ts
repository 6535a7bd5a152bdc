import { setTimeout as sleep } from 'node:timers/promises';
import { and, asc, eq, gt, like, not, sql } from 'drizzle-orm';
import type { StorageKind } from '../config.js';
import type { Database } from '../db/client.js';
import { attachments } from '../db/schema.js';
import { joinKey, type Storage, splitKey } from './router.js';

export interface MigrateResult {
  /** files now kept in the target kind by this run */
  moved: number;
  bytes: number;
  /** rows whose bytes this node cannot find (a local file on another node's disk, or gone) */
  missing: number;
  /** copies that failed (a store unreachable, a checksum that differs): left where they were */
  failed: number;
  /** files still kept elsewhere after the run (missing and failed ones included) */
  left: number;
}

export interface MigrateOptions {
  batch?: number;
  /** How long an old copy outlives the switch, so a download that began on it finishes (ms). */
  graceMs?: number;
  /** Called after each file (awaited: the old copy of a moved file is still there while it runs). */
  onFile?: (e: {
    id: string;
    from: StorageKind;
    outcome: 'moved' | 'missing' | 'failed';
    error?: string;
  }) => void | Promise<void>;
}

const notIn = (to: StorageKind) =>
  to === 'local' ? like(attachments.storageKey, '%:%') : not(like(attachments.storageKey, `${to}:%`));

/**
 * `formsvc storage migrate --to <kind>`: copies every attachment kept in another kind to `to`,
 * checks the copy's sha256 against the row's, switches the row's key (only if it still names the old
 * copy: a file deleted meanwhile leaves nothing behind), and removes the old copy after `graceMs`.
 * Each file is switched on its own, so a run stopped anywhere is resumed by running it again, and
 * every download meanwhile reads one complete copy or the other.
 */
export async function migrateFiles(
  database: Database,
  storage: Storage,
  to: StorageKind,
  opts: MigrateOptions = {},
): Promise<MigrateResult> {
  const db = database.db;
  const batch = opts.batch ?? 100;
  const graceMs = opts.graceMs ?? 30_000;
  const target = await storage.backend(to);
  const result: MigrateResult = { moved: 0, bytes: 0, missing: 0, failed: 0, left: 0 };
  const retired: { key: string; at: number }[] = [];
  const retire = async (all: boolean) => {
    if (all && retired.length) await sleep(Math.max(0, retired[retired.length - 1].at + graceMs - Date.now()));
    while (retired.length && retired[0].at + graceMs <= Date.now()) {
      const old = retired.shift() as { key: string };
      await storage.remove(old.key).catch(() => {}); // a leftover copy is wasted space, never a wrong answer
    }
  };
  // Chunks of files a stopped run had already moved out of the database.
  if (to !== 'postgres') {
    await database.rows(sql`
      delete from attachment_chunks c using attachments a
      where a.id = c.file_id and a.storage_key not like 'postgres:%'`);
  }
  let after = '';
  for (;;) {
    const rows = await db
      .select({ id: attachments.id, key: attachments.storageKey, sha256: attachments.sha256 })
      .from(attachments)
      .where(and(notIn(to), gt(attachments.id, after)))
      .orderBy(asc(attachments.id))
      .limit(batch);
    if (!rows.length) break;
    after = rows[rows.length - 1].id;
    for (const row of rows) {
      const from = splitKey(row.key);
      const newKey = joinKey(to, from.key);
      try {
        if (to === 'postgres') await target.remove(from.key); // a partial copy of a stopped run
        const written = await target.write(from.key, storage.read(row.key), Number.POSITIVE_INFINITY);
        if (written.sha256 !== row.sha256) {
          await target.remove(from.key);
          throw new Error(`the copy's sha256 ${written.sha256} is not the stored ${row.sha256}`);
        }
        const switched = await db
          .update(attachments)
          .set({ storageKey: newKey })
          .where(and(eq(attachments.id, row.id), eq(attachments.storageKey, row.key)))
          .returning({ id: attachments.id });
        if (!switched.length) {
          await target.remove(from.key); // deleted (or moved by another run) meanwhile
          continue;
        }
        retired.push({ key: row.key, at: Date.now() });
        result.moved += 1;
        result.bytes += written.sizeBytes;
        await opts.onFile?.({ id: row.id, from: from.kind, outcome: 'moved' });
      } catch (err) {
        const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
        if (missing) result.missing += 1;
        else result.failed += 1;
        await opts.onFile?.({
          id: row.id,
          from: from.kind,
          outcome: missing ? 'missing' : 'failed',
          error: String(err),
        });
      }
    }
    await retire(false);
  }
  await retire(true);
  const [left] = await db.select({ n: sql<number>`count(*)::int` }).from(attachments).where(notIn(to));
  result.left = Number(left.n);
  return result;
}
