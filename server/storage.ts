import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** What a write kept: `key` is the locator to store on the attachment row (it names the storage kind). */
export interface WriteResult {
  sizeBytes: number;
  sha256: string;
  tooLarge: boolean;
  key: string;
}

/** Private file storage for submission attachments, addressed by keys like `<orgId>/<fileId>`. */
export interface AttachmentStorage {
  /**
   * Streams `source` into `key`, hashing on the way. More than `maxBytes` → nothing is kept, the rest
   * of the source is drained (not destroyed: a busboy file stream that is destroyed stalls the whole
   * multipart parse), and the result says `tooLarge: true`. Rejects when the source or the store fails.
   */
  write(key: string, source: Readable, maxBytes: number): Promise<WriteResult>;
  /** The stored bytes; a missing key surfaces as an `error` event with code ENOENT. */
  read(key: string): Readable;
  /** Deletes the file; a missing key is not an error. */
  remove(key: string): Promise<void>;
}

export const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/;

/** Key → absolute path under root. Keys are server-made, so a bad one is a programming error. */
function resolveKey(root: string, key: string): string {
  const segments = key.split('/');
  // A leading character other than a dot rules out '.', '..' and hidden names; '/' first is an empty segment.
  if (key.length > 512 || !segments.every((s) => SEGMENT.test(s))) {
    throw new TypeError(`invalid storage key: ${JSON.stringify(key)}`);
  }
  const file = path.resolve(root, ...segments);
  if (!file.startsWith(root + path.sep)) throw new TypeError(`invalid storage key: ${JSON.stringify(key)}`);
  return file;
}

/**
 * Reads and discards the rest of a stream. Paused-mode reads work whatever state the stream was left
 * in (a bare resume() right after an async iterator lets go can leave it paused for good).
 */
export function drain(source: Readable) {
  const discard = () => {
    while (source.read() !== null) {}
  };
  source.on('readable', discard);
  source.on('error', () => {}); // the caller stopped listening; a late error must not crash the process
}

/** Attachments as files under `root` (created lazily); writes land under a temporary name, then rename. */
export function createLocalStorage(root: string): AttachmentStorage {
  const base = path.resolve(root);
  return {
    async write(key, source, maxBytes) {
      const file = resolveKey(base, key);
      await fsp.mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.${crypto.randomUUID()}.part`;
      const out = fs.createWriteStream(tmp, { flags: 'wx', mode: 0o600 });
      const closed = finished(out);
      closed.catch(() => {}); // observed below; an early disk error must not be an unhandled rejection
      const hash = crypto.createHash('sha256');
      let size = 0;
      let tooLarge = false;
      // The file is opened asynchronously: removing it before the stream has closed could run before
      // the open creates it, and leave a .part behind. So close first, then remove.
      const discard = async () => {
        out.destroy();
        await closed.catch(() => {});
        await fsp.rm(tmp, { force: true });
      };
      try {
        // destroyOnReturn false: leaving the loop early must not destroy the caller's stream (see write()).
        for await (const chunk of source.iterator({ destroyOnReturn: false })) {
          const buf: Uint8Array = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          size += buf.length;
          if (size > maxBytes) {
            tooLarge = true;
            break;
          }
          hash.update(buf);
          if (!out.write(buf)) await Promise.race([once(out, 'drain'), closed]);
        }
        if (tooLarge) {
          drain(source);
          await discard();
          return { sizeBytes: size, sha256: '', tooLarge: true, key };
        }
        out.end();
        await closed;
        await fsp.rename(tmp, file);
        return { sizeBytes: size, sha256: hash.digest('hex'), tooLarge: false, key };
      } catch (err) {
        await discard().catch(() => {});
        throw err;
      }
    },
    read(key) {
      return fs.createReadStream(resolveKey(base, key));
    },
    async remove(key) {
      await fsp.rm(resolveKey(base, key), { force: true });
    },
  };
}

/**
 * A stored file as a response body. The first chunk is read before any header is sent, so a missing
 * or unreadable file still gets a proper error answer; the rest is pulled as the client reads.
 */
export async function responseBody(source: Readable): Promise<ReadableStream<Uint8Array>> {
  const it = source[Symbol.asyncIterator]() as AsyncIterator<Uint8Array | string>;
  let pending: IteratorResult<Uint8Array | string> | null = await it.next();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const r = pending ?? (await it.next());
      pending = null;
      if (r.done) controller.close();
      else controller.enqueue(typeof r.value === 'string' ? Buffer.from(r.value) : r.value);
    },
    async cancel() {
      await it.return?.();
    },
  });
}
