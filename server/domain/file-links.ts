import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { serverSecrets } from '../db/schema.js';

const KEY_NAME = 'file_links';

/** The keys per database handle and name: read (or made) once, then kept for the life of the process. */
const keys = new WeakMap<Database, Map<string, Promise<Buffer>>>();

/**
 * The HMAC key of signed download URLs. Generated once per deployment and kept in the database
 * (the first process to need it inserts it; every other reads the same row), so every process
 * signs and checks alike and links survive restarts.
 */
export function fileLinkKey(database: Database): Promise<Buffer> {
  return serverKey(database, KEY_NAME);
}

/** A named 32-byte server key (`server_secrets`), made by the first process that needs it. */
export function serverKey(database: Database, name: string): Promise<Buffer> {
  let byName = keys.get(database);
  if (!byName) {
    byName = new Map();
    keys.set(database, byName);
  }
  const known = byName;
  let key = known.get(name);
  if (!key) {
    key = (async () => {
      await database.db
        .insert(serverSecrets)
        .values({ name, value: crypto.randomBytes(32).toString('base64') })
        .onConflictDoNothing();
      const [row] = await database.db
        .select({ value: serverSecrets.value })
        .from(serverSecrets)
        .where(eq(serverSecrets.name, name));
      return Buffer.from(row.value, 'base64');
    })();
    key.catch(() => known.delete(name)); // a failed read is tried again next time
    known.set(name, key);
  }
  return key;
}

const mac = (key: Buffer, fileId: string, expires: number) =>
  crypto.createHmac('sha256', key).update(`${fileId}.${expires}`).digest('base64url');

/** Makes signed download URLs: `{base}/files/{id}?expires=<unix>&signature=<HMAC of "id.expires">`. */
export async function fileLinker(deps: { config: Config; database: Database; now: () => Date }) {
  const key = await fileLinkKey(deps.database);
  const expires = Math.floor(deps.now().getTime() / 1000) + deps.config.attachmentUrlTtlS;
  return {
    expiresAt: new Date(expires * 1000).toISOString(),
    url: (fileId: string) =>
      `${deps.config.publicBaseUrl}/files/${encodeURIComponent(fileId)}?expires=${expires}&signature=${mac(key, fileId, expires)}`,
  };
}

/** Whether a download link is genuine and still valid; compared in constant time. */
export function linkProblem(
  key: Buffer,
  fileId: string,
  expires: string,
  signature: string,
  now: Date,
): 'tampered' | 'expired' | null {
  const exp = /^\d{1,12}$/.test(expires) ? Number(expires) : Number.NaN;
  const want = Buffer.from(Number.isNaN(exp) ? '' : mac(key, fileId, exp));
  const got = Buffer.from(signature);
  if (!want.length || want.length !== got.length || !crypto.timingSafeEqual(want, got)) return 'tampered';
  return exp * 1000 <= now.getTime() ? 'expired' : null;
}
