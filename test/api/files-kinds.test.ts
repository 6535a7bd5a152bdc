import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateFiles } from '../../server/files/migrate.js';
import type { Storage } from '../../server/files/router.js';
import { applyRetention } from '../../server/worker/retention.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startS3 } from '../helpers/s3.js';

let s3: Awaited<ReturnType<typeof startS3>>;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});

const sha = (b: Buffer | Uint8Array) => crypto.createHash('sha256').update(b).digest('hex');

/** A tenant with a form on an app whose new files go to `kind`. */
async function setup(kind: string) {
  const t = await startTestApp({ ATTACHMENT_STORAGE: kind, ...s3.env });
  const { key } = await t.onboard();
  const form = await t.api('POST', '/v1/forms', key, { json: { name: 'Files' } });
  return { t, key, formId: form.json.id as string };
}

async function post(t: TestEnv, formId: string, content: Buffer, email = 'ada@example.com') {
  const body = new FormData();
  body.set('email', email);
  body.set('doc', new Blob([content], { type: 'application/octet-stream' }), 'scan.bin');
  const r = await t.request('POST', `/s/${formId}`, { body, headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  return r.json.submission_id as string;
}

/** The attachment of a submission, its stored key, and its bytes through the API and through a signed link. */
async function download(t: TestEnv, key: string, submissionId: string) {
  const detail = await t.api('GET', `/v1/submissions/${submissionId}`, key);
  const [att] = detail.json.attachments;
  const api = await t.app.request(new URL(att.download_url).pathname, { headers: { authorization: `Bearer ${key}` } });
  const { fileLinker } = await import('../../server/domain/file-links.js');
  const link = new URL((await fileLinker(t.deps)).url(att.id));
  const signed = await t.app.request(link.pathname + link.search);
  const [row] = await t.deps.database.rows<{ storage_key: string }>(
    sql`select storage_key from attachments where id = ${att.id}`,
  );
  return {
    id: att.id as string,
    storageKey: row.storage_key,
    api: { status: api.status, bytes: Buffer.from(await api.arrayBuffer()) },
    signed: { status: signed.status, bytes: Buffer.from(await signed.arrayBuffer()) },
  };
}

const chunkCount = async (t: TestEnv) =>
  Number((await t.deps.database.rows<{ n: number }>(sql`select count(*)::int as n from attachment_chunks`))[0].n);

describe.each(['postgres', 's3'] as const)('ATTACHMENT_STORAGE=%s', (kind) => {
  let t: TestEnv;
  let key: string;
  let formId: string;
  beforeAll(async () => {
    ({ t, key, formId } = await setup(kind));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a posted file is stored there and downloads whole by the API and by a signed link', async () => {
    const content = crypto.randomBytes(600_000);
    const id = await post(t, formId, content);
    const d = await download(t, key, id);
    expect(d.storageKey).toMatch(new RegExp(`^${kind}:org_`));
    expect(d.api.status).toBe(200);
    expect(sha(d.api.bytes)).toBe(sha(content));
    expect(d.signed.status).toBe(200);
    expect(sha(d.signed.bytes)).toBe(sha(content));
    if (kind === 'postgres') expect(await chunkCount(t)).toBeGreaterThanOrEqual(3);
  });

  it('erasing a submission deletes its stored bytes with it', async () => {
    const email = `erase-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const id = await post(t, formId, crypto.randomBytes(300_000), email);
    const before = await download(t, key, id);
    const chunks = await chunkCount(t);
    const objects = s3.objects().length;
    const erased = await t.api('POST', '/v1/submissions/erase', key, { json: { email } });
    expect(erased.json).toMatchObject({ deleted: 1, files_deleted: 1 });
    if (kind === 'postgres') expect(await chunkCount(t)).toBe(chunks - 2);
    else expect(s3.objects().length).toBe(objects - 1);
    await expect(
      (async () => {
        for await (const _ of t.deps.storage.read(before.storageKey)) {
        }
      })(),
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('retention deletes the stored bytes with their submission', async () => {
    const form = await t.api('POST', '/v1/forms', key, { json: { name: 'Kept a day' } });
    await t.api('PATCH', `/v1/forms/${form.json.id}`, key, { json: { settings: { retention_days: 1 } } });
    const id = await post(t, form.json.id, crypto.randomBytes(300_000));
    const d = await download(t, key, id);
    await t.deps.database.rows(sql`update submissions set received_at = now() - interval '3 days' where id = ${id}`);
    expect(await applyRetention(t.deps)).toMatchObject({ submissions: 1, attachments: 1 });
    await expect(
      (async () => {
        for await (const _ of t.deps.storage.read(d.storageKey)) {
        }
      })(),
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('deleting the form deletes the stored bytes of its files', async () => {
    const form = await t.api('POST', '/v1/forms', key, { json: { name: 'Short-lived' } });
    const id = await post(t, form.json.id, crypto.randomBytes(1000));
    const d = await download(t, key, id);
    expect((await t.api('DELETE', `/v1/forms/${form.json.id}`, key)).status).toBe(204);
    await expect(
      (async () => {
        for await (const _ of t.deps.storage.read(d.storageKey)) {
        }
      })(),
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('formsvc storage migrate', () => {
  it('moves every file to another kind, resumably, and a download begun before the move finishes whole', {
    timeout: 120_000,
  }, async () => {
    const { t, key, formId } = await setup('postgres');
    try {
      const contents = [crypto.randomBytes(900_000), crypto.randomBytes(10), Buffer.alloc(0)];
      const ids = [];
      for (const c of contents) ids.push(await post(t, formId, c));
      const first = await download(t, key, ids[0]);
      expect(first.storageKey).toMatch(/^postgres:/);

      // A download of the largest file is under way (its first chunk read) when the move starts.
      const res = await t.app.request(new URL(`http://x/v1/submissions/${ids[0]}/attachments/${first.id}`).pathname, {
        headers: { authorization: `Bearer ${key}` },
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const head = await reader.read();
      const storage = t.deps.storage as Storage;
      let finishedDownload: Buffer | null = null;
      const moved = await migrateFiles(t.deps.database, storage, 's3', {
        graceMs: 0,
        batch: 1,
        onFile: async (e) => {
          if (e.id !== first.id) return;
          // Switched to S3: the rest of the download comes from the old copy, kept until this returns.
          const parts = [Buffer.from(head.value as Uint8Array)];
          for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(Buffer.from(r.value));
          finishedDownload = Buffer.concat(parts);
        },
      });
      expect(moved).toMatchObject({ moved: 3, missing: 0, failed: 0, left: 0 });
      expect(finishedDownload && sha(finishedDownload)).toBe(sha(contents[0]));
      for (const [i, id] of ids.entries()) {
        const d = await download(t, key, id);
        expect(d.storageKey).toMatch(/^s3:org_/);
        expect(sha(d.api.bytes)).toBe(sha(contents[i]));
        expect(sha(d.signed.bytes)).toBe(sha(contents[i]));
      }
      expect(await chunkCount(t)).toBe(0); // the old copies went after the grace
      // Run again: nothing left to move.
      expect(await migrateFiles(t.deps.database, storage, 's3', { graceMs: 0 })).toMatchObject({ moved: 0, left: 0 });
      // And back: to the database, then the local disk.
      expect(await migrateFiles(t.deps.database, storage, 'postgres', { graceMs: 0 })).toMatchObject({ moved: 3 });
      expect(await migrateFiles(t.deps.database, storage, 'local', { graceMs: 0 })).toMatchObject({ moved: 3 });
      for (const [i, id] of ids.entries()) {
        const d = await download(t, key, id);
        expect(d.storageKey).not.toMatch(/:/);
        expect(sha(d.signed.bytes)).toBe(sha(contents[i]));
      }
    } finally {
      await t.close();
    }
  });

  it('counts a file this node cannot find as missing and leaves its row as it was', { timeout: 60_000 }, async () => {
    const { t, key, formId } = await setup('local');
    try {
      const id = await post(t, formId, Buffer.from('only on this disk'));
      const d = await download(t, key, id);
      await t.deps.storage.remove(d.storageKey); // as if it were on another node's disk
      const r = await migrateFiles(t.deps.database, t.deps.storage as Storage, 'postgres', { graceMs: 0 });
      expect(r).toMatchObject({ moved: 0, missing: 1, failed: 0, left: 1 });
      expect((await download(t, key, id)).storageKey).toBe(d.storageKey);
    } finally {
      await t.close();
    }
  });
});
