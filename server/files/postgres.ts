import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { and, asc, eq, gte, inArray, sql } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';
import { attachmentChunks } from '../db/schema.js';
import { type AttachmentStorage, drain, SEGMENT } from '../storage.js';

/**
 * Bytes per row. 256 KiB keeps a row's value well inside one TOAST write and a download's memory
 * small; docs/storage.md has the measurements behind it.
 */
export const CHUNK_BYTES = 256 * 1024;

/** The chunks' file id: the last segment of `<orgId>/<fileId>`. */
export function chunkFileId(key: string): string {
  const id = key.split('/').pop() ?? '';
  if (key.length > 512 || !SEGMENT.test(id)) throw new TypeError(`invalid storage key: ${JSON.stringify(key)}`);
  return id;
}

/**
 * Deletes the stored bytes of these attachments, inside the caller's transaction: retention, erase
 * and form deletion call it in the batch that deletes the attachment rows, so the bytes go with them.
 * With another storage kind the table has no rows of theirs and this is one index probe.
 */
export async function deleteChunks(tx: Db, fileIds: string[]): Promise<void> {
  if (fileIds.length) await tx.delete(attachmentChunks).where(inArray(attachmentChunks.fileId, fileIds));
}

/**
 * Attachments in the database (ATTACHMENT_STORAGE=postgres), so every node that shares it serves
 * every file. A write inserts one row per chunk as the upload arrives (one statement each: no
 * connection is held for a slow upload); a read fetches one chunk per query as the client pulls.
 */
export function createPostgresStorage(database: Database): AttachmentStorage {
  const db = database.db;
  const removeId = (id: string) => db.delete(attachmentChunks).where(eq(attachmentChunks.fileId, id));
  // PGlite moves a bytea value through a JavaScript loop a byte at a time (a 256 KiB chunk took about
  // 250 ms each way); as base64 text, encoded and decoded inside the database, 3 to 10 times less.
  const text = database.kind === 'pglite';
  const insert = async (fileId: string, seq: number, bytes: Buffer) => {
    if (!text) await db.insert(attachmentChunks).values({ fileId, seq, bytes });
    else {
      await database.rows(sql`insert into attachment_chunks (file_id, seq, bytes)
        values (${fileId}, ${seq}, decode(${bytes.toString('base64')}, 'base64'))`);
    }
  };
  const chunkFrom = async (fileId: string, seq: number): Promise<{ seq: number; bytes: Buffer } | undefined> => {
    if (!text) {
      const [row] = await db
        .select({ seq: attachmentChunks.seq, bytes: attachmentChunks.bytes })
        .from(attachmentChunks)
        .where(and(eq(attachmentChunks.fileId, fileId), gte(attachmentChunks.seq, seq)))
        .orderBy(asc(attachmentChunks.seq))
        .limit(1);
      return row;
    }
    const [row] = await database.rows<{ seq: number; b: string }>(sql`
      select seq, encode(bytes, 'base64') as b from attachment_chunks
      where file_id = ${fileId} and seq >= ${seq} order by seq limit 1`);
    return row && { seq: Number(row.seq), bytes: Buffer.from(row.b, 'base64') };
  };
  return {
    async write(key, source, maxBytes) {
      const fileId = chunkFileId(key);
      const hash = crypto.createHash('sha256');
      let size = 0;
      let seq = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async (all: boolean) => {
        let joined = Buffer.concat(pending, pendingBytes);
        while (joined.length >= CHUNK_BYTES || (all && (joined.length > 0 || seq === 0))) {
          const bytes = joined.subarray(0, CHUNK_BYTES);
          await insert(fileId, seq, bytes);
          seq += 1;
          joined = joined.subarray(bytes.length);
        }
        pending = joined.length ? [joined] : [];
        pendingBytes = joined.length;
      };
      try {
        // destroyOnReturn false: leaving the loop early must not destroy the caller's stream (see write()).
        for await (const chunk of source.iterator({ destroyOnReturn: false })) {
          const buf: Buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk);
          size += buf.length;
          if (size > maxBytes) {
            drain(source);
            if (seq > 0) await removeId(fileId);
            return { sizeBytes: size, sha256: '', tooLarge: true, key };
          }
          hash.update(buf);
          pending.push(buf);
          pendingBytes += buf.length;
          if (pendingBytes >= CHUNK_BYTES) await flush(false);
        }
        await flush(true); // an empty file is one empty chunk, so that it differs from a missing one
        return { sizeBytes: size, sha256: hash.digest('hex'), tooLarge: false, key };
      } catch (err) {
        await removeId(fileId).catch(() => {});
        throw err;
      }
    },
    read(key) {
      const fileId = chunkFileId(key);
      let seq = 0;
      return new Readable({
        highWaterMark: 1, // bytes are fetched as the reader asks: at most a chunk or two in memory
        async read() {
          try {
            const row = await chunkFrom(fileId, seq);
            if (!row) {
              if (seq === 0) this.destroy(Object.assign(new Error(`no stored file ${key}`), { code: 'ENOENT' }));
              else this.push(null);
              return;
            }
            seq = row.seq + 1;
            if (row.bytes.length) this.push(row.bytes);
            else this.push(null); // an empty file: its one chunk is empty
          } catch (err) {
            this.destroy(err as Error);
          }
        },
      });
    },
    async remove(key) {
      await removeId(chunkFileId(key));
    },
  };
}
