import { Readable } from 'node:stream';
import type { StorageKind, StorageSettings } from '../config.js';
import type { Database } from '../db/client.js';
import { type AttachmentStorage, createLocalStorage } from '../storage.js';
import { createPostgresStorage } from './postgres.js';

/**
 * A key names where its file is: `postgres:<org>/<file>`, `s3:<org>/<file>`, or a bare
 * `<org>/<file>` on the local disk (every key before ATTACHMENT_STORAGE existed). So each node reads
 * a file wherever it was written, and a move between kinds is one update of the attachment row.
 */
export function splitKey(key: string): { kind: StorageKind; key: string } {
  const i = key.indexOf(':');
  if (i < 0) return { kind: 'local', key };
  const kind = key.slice(0, i);
  if (kind !== 'postgres' && kind !== 's3') throw new TypeError(`invalid storage key: ${JSON.stringify(key)}`);
  return { kind, key: key.slice(i + 1) };
}

export const joinKey = (kind: StorageKind, key: string) => (kind === 'local' ? key : `${kind}:${key}`);

export interface Storage extends AttachmentStorage {
  /** Where new files go (ATTACHMENT_STORAGE). */
  kind: StorageKind;
  /** One kind's storage, addressed by bare keys (`formsvc storage migrate`). */
  backend(kind: StorageKind): Promise<AttachmentStorage>;
}

/**
 * Every storage kind behind the one interface: writes go to the configured kind, reads and removals
 * to the kind the key names. The S3 SDK is imported the first time a file in S3 is touched.
 */
export function createStorage(settings: StorageSettings, database: Database, filesDir: string): Storage {
  const local = createLocalStorage(filesDir);
  const postgres = createPostgresStorage(database);
  let s3: Promise<AttachmentStorage> | null = null;
  const backend = async (kind: StorageKind): Promise<AttachmentStorage> => {
    if (kind === 'local') return local;
    if (kind === 'postgres') return postgres;
    const conf = settings.s3;
    if (!conf) throw new Error('a file is kept in S3 but S3_BUCKET is not set on this node');
    s3 ??= import('./s3.js').then((m) => m.createS3Storage(conf));
    s3.catch(() => {
      s3 = null; // tried again next time
    });
    return s3;
  };
  const now = (kind: StorageKind) => (kind === 'local' ? local : kind === 'postgres' ? postgres : null);
  return {
    kind: settings.kind,
    backend,
    async write(key, source, maxBytes) {
      const r = await (await backend(settings.kind)).write(key, source, maxBytes);
      return { ...r, key: joinKey(settings.kind, key) };
    },
    read(full) {
      const { kind, key } = splitKey(full);
      const ready = now(kind);
      if (ready) return ready.read(key);
      return Readable.from(
        (async function* () {
          yield* (await backend(kind)).read(key);
        })(),
        { objectMode: false },
      );
    },
    async remove(full) {
      const { kind, key } = splitKey(full);
      await (await backend(kind)).remove(key);
    },
  };
}
