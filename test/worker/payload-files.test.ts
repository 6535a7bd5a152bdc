import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Claimed } from '../../server/db/rows.js';
import { attachments } from '../../server/db/schema.js';
import { fileLinker, fileLinkKey } from '../../server/domain/file-links.js';
import { payloadsWithFiles } from '../../server/worker/payload-files.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';
import { orgIdOf } from '../helpers/seed.js';

let t: TestEnv;
let key: string;
let hook: Awaited<ReturnType<typeof startReceiver>>;
let formId: string;

beforeAll(async () => {
  t = await startTestApp();
  await t.startWorker();
  key = (await t.onboard()).key;
  hook = await startReceiver();
  const form = await t.api('POST', '/v1/forms', key, { json: { name: 'Files' } });
  formId = form.json.id;
  const dest = await t.api('POST', '/v1/destinations', key, {
    json: { type: 'webhook', name: 'hook', config: { url: hook.url } },
  });
  await t.api('POST', '/v1/routes', key, { json: { form_id: formId, destination_id: dest.json.id } });
});
afterAll(async () => {
  await hook.close();
  await t.close();
});

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

async function postWithFile(content: Buffer) {
  const body = new FormData();
  body.set('name', 'Ada');
  body.set('doc', new Blob([content], { type: 'text/plain' }), 'hello.txt');
  const r = await t.request('POST', `/s/${formId}`, { body, headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  return r.json.submission_id as string;
}

const payloadOf = async (submissionId: string) =>
  (await hook.waitFor((q) => q.some((x) => x.json?.submission?.id === submissionId))).find(
    (x) => x.json?.submission?.id === submissionId,
  )!;

describe('files travel with their submission', () => {
  it('a webhook payload carries each attachment with a signed download_url that works without a key', async () => {
    const content = Buffer.from(`hello ${crypto.randomUUID()}\n`);
    const id = await postWithFile(content);
    const req = await payloadOf(id);
    const [att] = req.json.attachments;
    expect(att).toMatchObject({
      id: expect.stringMatching(/^fl_/),
      field_name: 'doc',
      filename: 'hello.txt',
      content_type: expect.stringMatching(/^text\/plain/),
      size_bytes: content.length,
      sha256: sha(content),
      download_expires_at: expect.stringMatching(/Z$/),
    });
    // ATTACHMENT_URL_TTL_S defaults to 24 hours.
    const ttl = Date.parse(att.download_expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(86_400_000 - 120_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000);
    expect(req.json.data.doc).toBe(att.id);

    const url = new URL(att.download_url);
    expect(url.origin).toBe('http://127.0.0.1:8787');
    const dl = await t.request('GET', url.pathname + url.search);
    expect(dl.status).toBe(200);
    expect(dl.text).toBe(content.toString());
    expect(dl.headers.get('content-disposition')).toContain('hello.txt');

    // The stored snapshot stays as planned; the links are made at each attempt.
    const delivery = (await t.api('GET', `/v1/deliveries?submission_id=${id}`, key)).json.data[0];
    expect(delivery.payload).not.toHaveProperty('attachments');
  });

  it('a tampered or expired link answers 403 with the envelope; a link to a deleted file 404', async () => {
    const id = await postWithFile(Buffer.from('secret bytes'));
    const att = (await payloadOf(id)).json.attachments[0];
    const url = new URL(att.download_url);
    const sig = url.searchParams.get('signature') as string;

    const tampered = new URL(url);
    tampered.searchParams.set('signature', `${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`);
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 86_400));
    const otherFile = new URL(url);
    otherFile.pathname = '/files/fl_someoneelse';
    for (const u of [tampered, longer, otherFile]) {
      const r = await t.request('GET', u.pathname + u.search);
      expect(r.status, u.href).toBe(403);
      expect(r.json.error).toMatchObject({ code: 'forbidden', message: 'This download link is not valid.' });
      expect(r.json.error.hint).toMatch(/download_url/);
    }
    const missing = await t.request('GET', url.pathname);
    expect(missing.status).toBe(422);

    const past = await fileLinker({ ...t.deps, now: () => new Date(Date.now() - 2 * 86_400_000) });
    const expired = new URL(past.url(att.id));
    const r = await t.request('GET', expired.pathname + expired.search);
    expect(r.status).toBe(403);
    expect(r.json.error.message).toMatch(/expired/);

    // The submission went (retention, a deleted form): the genuine link finds nothing.
    await t.deps.database.db.delete(attachments).where(eq(attachments.id, att.id));
    const gone = await t.request('GET', url.pathname + url.search);
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe('not_found');
  });

  it('payloads of submissions without files stay as they were, without reading attachments', async () => {
    const r = await t.request('POST', `/s/${formId}`, {
      json: { name: 'plain' },
      headers: { accept: 'application/json' },
    });
    const req = await payloadOf(r.json.submission_id);
    expect(req.json).not.toHaveProperty('attachments');
    const row = {
      id: 'dl_x',
      org_id: 'org_x',
      submission_id: 'sb_x',
      payload: { meta: { content_type: 'application/json' } },
    };
    // No multipart submission in the batch: not even the key is read.
    const broken = { ...t.deps, database: { ...t.deps.database, db: null as never } };
    expect((await payloadsWithFiles(broken, [row as unknown as Claimed])).size).toBe(0);
  });

  it('a digest payload carries the attachments of each of its submissions', async () => {
    const content = Buffer.from('digest file');
    const id = await postWithFile(content);
    await payloadOf(id);
    const org = await orgIdOf(t, key);
    const row = {
      id: 'dl_digest',
      org_id: org,
      submission_id: null,
      payload: {
        type: 'digest.ready',
        submissions: [
          { id, meta: { content_type: 'multipart/form-data; boundary=x' } },
          { id: 'sb_plain', meta: { content_type: 'application/json' } },
        ],
      },
    } as unknown as Claimed;
    const out = (await payloadsWithFiles(t.deps, [row])).get('dl_digest') as any;
    expect(out.submissions[0].attachments).toEqual([
      expect.objectContaining({ filename: 'hello.txt', size_bytes: content.length, sha256: sha(content) }),
    ]);
    expect(out.submissions[1]).not.toHaveProperty('attachments');
    // Another organization's row never gets these files.
    const foreign = { ...row, org_id: 'org_other' } as Claimed;
    expect((await payloadsWithFiles(t.deps, [foreign])).size).toBe(0);
  });

  it('the link key is made once and shared by every process on the database', async () => {
    const a = await fileLinkKey(t.deps.database);
    const otherProcess = await fileLinkKey({ ...t.deps.database });
    expect(otherProcess.equals(a)).toBe(true);
    expect(a.length).toBe(32);
  });
});
