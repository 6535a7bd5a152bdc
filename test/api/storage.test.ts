import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import busboy from 'busboy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttachmentStorage, createLocalStorage } from '../../server/storage.js';

let root: string;
let storage: AttachmentStorage;

beforeAll(() => {
  root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-storage-')), 'files');
  storage = createLocalStorage(root);
});
afterAll(() => fs.rmSync(path.dirname(root), { recursive: true, force: true }));

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

async function readAll(r: Readable) {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Chunks pushed slowly, as a network upload would arrive. */
function chunked(buf: Buffer, size = 1000) {
  return Readable.from(
    (function* () {
      for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
    })(),
  );
}

const files = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);

describe('local attachment storage', () => {
  it('writes under root (creating folders lazily), hashes on the fly, reads back and removes', async () => {
    const bytes = crypto.randomBytes(200_000);
    expect(fs.existsSync(root)).toBe(false);
    const r = await storage.write('org_a/fl_1', chunked(bytes), 1_000_000);
    expect(r).toEqual({ sizeBytes: bytes.length, sha256: sha(bytes), tooLarge: false, key: 'org_a/fl_1' });
    expect(files(path.join(root, 'org_a'))).toEqual(['fl_1']);
    expect((await readAll(storage.read('org_a/fl_1'))).equals(bytes)).toBe(true);
    await storage.remove('org_a/fl_1');
    expect(files(path.join(root, 'org_a'))).toEqual([]);
    await storage.remove('org_a/fl_1'); // missing is fine
  });

  it('stores an empty file and a file of exactly maxBytes', async () => {
    expect(await storage.write('org_a/empty', Readable.from([]), 10)).toEqual({
      sizeBytes: 0,
      sha256: sha(Buffer.alloc(0)),
      tooLarge: false,
      key: 'org_a/empty',
    });
    const ten = Buffer.from('0123456789');
    expect((await storage.write('org_a/ten', Readable.from([ten]), 10)).tooLarge).toBe(false);
    expect((await readAll(storage.read('org_a/ten'))).toString()).toBe('0123456789');
  });

  it('over maxBytes: keeps nothing (no partial or temp file), drains the source, answers tooLarge', async () => {
    const source = chunked(crypto.randomBytes(50_000));
    const r = await storage.write('org_b/big', source, 10_000);
    expect(r.tooLarge).toBe(true);
    expect(r.sizeBytes).toBeGreaterThan(10_000);
    expect(files(path.join(root, 'org_b'))).toEqual([]);
    await finished(source); // rejects on a premature close: the source was drained to its end, not destroyed
    expect(source.readableEnded).toBe(true);
  });

  it('over maxBytes on the first chunk: leaves no temp file, though the file was still being opened', async () => {
    // The write stream opens its file asynchronously; removing the temp file before it has closed
    // once let the open create it afterwards (a .part left behind, seen in CI).
    for (let i = 0; i < 20; i++) {
      const r = await storage.write(`org_d/fl_${i}`, Readable.from([Buffer.alloc(20_000)]), 10);
      expect(r.tooLarge).toBe(true);
    }
    await new Promise((resolve) => setTimeout(resolve, 100)); // an open still queued would land by now
    expect(files(path.join(root, 'org_d'))).toEqual([]);
  });

  it('drains a busboy file stream so the rest of the multipart body is still parsed', async () => {
    const boundary = 'XyZ';
    const big = Buffer.alloc(300_000, 'a');
    const bodyBuf = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="a.bin"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      ),
      big,
      Buffer.from(
        `\r\n--${boundary}\r\nContent-Disposition: form-data; name="after"\r\n\r\nstill here\r\n--${boundary}--\r\n`,
      ),
    ]);
    const bb = busboy({ headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
    const fields: Record<string, string> = {};
    let write: Promise<{ tooLarge: boolean }> | undefined;
    bb.on('file', (_name, stream) => {
      write = storage.write('org_c/fl_big', stream, 1024);
    });
    bb.on('field', (name, value) => {
      fields[name] = value;
    });
    const done = new Promise((resolve, reject) => {
      bb.on('close', resolve);
      bb.on('error', reject);
    });
    chunked(bodyBuf, 16_384).pipe(bb);
    await done;
    expect((await write)?.tooLarge).toBe(true);
    expect(fields).toEqual({ after: 'still here' });
    expect(files(path.join(root, 'org_c'))).toEqual([]);
  });

  it('rejects and leaves no file when the source fails midway', async () => {
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(100));
        this.destroy(new Error('client went away'));
      },
    });
    await expect(storage.write('org_d/x', failing, 1000)).rejects.toThrow('client went away');
    expect(files(path.join(root, 'org_d'))).toEqual([]);
  });

  it('reports a missing key as an ENOENT error on the read stream', async () => {
    await expect(readAll(storage.read('org_a/nothing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses keys that could leave root', async () => {
    for (const bad of ['../x', 'org/../../x', '/etc/passwd', 'a//b', 'a/./b', '.hidden', 'a\\b', '', 'a/b\u0000']) {
      await expect(storage.write(bad, Readable.from([]), 10), bad).rejects.toThrow(/invalid storage key/);
      expect(() => storage.read(bad), bad).toThrow(/invalid storage key/);
      await expect(storage.remove(bad), bad).rejects.toThrow(/invalid storage key/);
    }
    expect(files(path.dirname(root)).sort()).toEqual(['files']);
  });
});
