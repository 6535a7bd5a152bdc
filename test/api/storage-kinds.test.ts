import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type StorageKind } from '../../server/config.js';
import { type Database, openPglite } from '../../server/db/client.js';
import { createStorage, type Storage } from '../../server/files/router.js';
import { startS3 } from '../helpers/s3.js';

let database: Database;
let s3: Awaited<ReturnType<typeof startS3>>;
let filesDir: string;

beforeAll(async () => {
  database = await openPglite(null);
  s3 = await startS3();
  filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-kinds-'));
});
afterAll(async () => {
  await database?.close();
  await s3?.close();
  fs.rmSync(filesDir, { recursive: true, force: true });
});

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const storageOf = (kind: StorageKind): Storage =>
  createStorage(loadConfig({ ATTACHMENT_STORAGE: kind, ...s3.env }).storage, database, filesDir);

async function readAll(r: Readable) {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function chunked(buf: Buffer, size = 10_000) {
  return Readable.from(
    (function* () {
      for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
    })(),
  );
}

const chunkRows = async (fileId: string) =>
  Number(
    (
      await database.rows<{ n: number }>(
        sql`select count(*)::int as n from attachment_chunks where file_id = ${fileId}`,
      )
    )[0].n,
  );

describe.each(['local', 'postgres', 's3'] as const)('%s attachment storage', (kind) => {
  it('writes a file of several chunks, hashing on the way, under a key that names the kind; reads it back', async () => {
    const storage = storageOf(kind);
    const bytes = crypto.randomBytes(700_000); // more than two 256 KiB database chunks
    const r = await storage.write(`org_${kind}/fl_a`, chunked(bytes), 1_000_000);
    expect(r).toEqual({
      sizeBytes: bytes.length,
      sha256: sha(bytes),
      tooLarge: false,
      key: kind === 'local' ? `org_${kind}/fl_a` : `${kind}:org_${kind}/fl_a`,
    });
    expect(sha(await readAll(storage.read(r.key)))).toBe(sha(bytes));
    // Any node reads a key of any kind, whatever its own ATTACHMENT_STORAGE says.
    expect(sha(await readAll(storageOf('local').read(r.key)))).toBe(sha(bytes));
    await storage.remove(r.key);
    await expect(readAll(storage.read(r.key))).rejects.toMatchObject({ code: 'ENOENT' });
    await storage.remove(r.key); // missing is fine
  });

  it('stores an empty file (which differs from a missing one)', async () => {
    const storage = storageOf(kind);
    const r = await storage.write(`org_${kind}/fl_empty`, Readable.from([]), 10);
    expect(r).toMatchObject({ sizeBytes: 0, sha256: sha(Buffer.alloc(0)), tooLarge: false });
    expect((await readAll(storage.read(r.key))).length).toBe(0);
    await expect(readAll(storage.read(`${r.key}x`))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('over maxBytes: keeps nothing, drains the source to its end, answers tooLarge', async () => {
    const storage = storageOf(kind);
    const source = chunked(crypto.randomBytes(600_000));
    const r = await storage.write(`org_${kind}/fl_big`, source, 300_000);
    expect(r.tooLarge).toBe(true);
    await finished(source);
    expect(source.readableEnded).toBe(true);
    await expect(readAll(storage.read(r.key))).rejects.toMatchObject({ code: 'ENOENT' });
    if (kind === 'postgres') expect(await chunkRows('fl_big')).toBe(0);
  });

  it('rejects and keeps nothing when the source fails midway', async () => {
    const storage = storageOf(kind);
    let sent = 0;
    const failing = new Readable({
      read() {
        sent += 1;
        if (sent > 40) this.destroy(new Error('client went away'));
        else this.push(crypto.randomBytes(10_000));
      },
    });
    await expect(storage.write(`org_${kind}/fl_cut`, failing, 10_000_000)).rejects.toThrow('client went away');
    const key = kind === 'local' ? `org_${kind}/fl_cut` : `${kind}:org_${kind}/fl_cut`;
    await expect(readAll(storage.read(key))).rejects.toMatchObject({ code: 'ENOENT' });
    if (kind === 'postgres') expect(await chunkRows('fl_cut')).toBe(0);
  });
});

describe('storage keys and settings', () => {
  it('a key of an unknown kind is refused', () => {
    expect(() => storageOf('local').read('ftp:org/fl_x')).toThrow(/invalid storage key/);
  });

  it('defaults to local on PGlite and postgres with DATABASE_URL; refuses a bad kind or s3 without a bucket', () => {
    expect(loadConfig({}).storage.kind).toBe('local');
    expect(loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db' }).storage.kind).toBe('postgres');
    expect(() => loadConfig({ ATTACHMENT_STORAGE: 'disk' })).toThrow(/ATTACHMENT_STORAGE must be/);
    expect(() => loadConfig({ ATTACHMENT_STORAGE: 's3' })).toThrow(/S3_BUCKET/);
    expect(
      loadConfig({ ATTACHMENT_STORAGE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'http://127.0.0.1:1' }).storage.s3,
    ).toMatchObject({ bucket: 'b', forcePathStyle: true, region: 'us-east-1' });
  });
});
