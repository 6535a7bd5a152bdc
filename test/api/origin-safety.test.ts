import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { forms } from '../../server/db/schema.js';
import { buildVerify } from '../../server/present/embed.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { createForm } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key } = await tenantApp();

/** Hosts `new URL()` accepts that are not plain DNS names: each would break out of a shell quote. */
const HOSTILE = [
  "https://x'$({touch,pwned})'.example",
  'https://a$(id).example',
  'https://a{b,c}.example',
  'https://a`id`.example',
  'https://a!b.example',
  'https://*.example.com',
  'https://a_b.example',
  'ftp://files.example',
  'example.com',
  'nothing valid',
];
const FINE = [
  '*',
  'https://shop.example.com',
  'http://127.0.0.1:3000',
  'http://[::1]:8080',
  'https://xn--bcher-kva.example',
];

/**
 * Runs a generated shell line with bash in an empty folder, `curl` replaced by a function that
 * prints its arguments: what the line would hand to curl, and whether it ran anything else.
 */
function runLine(line: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'curl-line-'));
  try {
    const out = execFileSync('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${line}`], { cwd: dir });
    return { args: out.toString().split('\0').slice(0, -1), files: fs.readdirSync(dir) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('origins must have a plain host (422 naming the field)', () => {
  it('PATCH /v1/forms/{id} refuses each hostile allowed_origins entry and takes plain ones', async () => {
    const id = await createForm(t, key);
    for (const bad of HOSTILE) {
      const r = await t.api('PATCH', `/v1/forms/${id}`, key, { json: { settings: { allowed_origins: [bad] } } });
      expect(r.status, bad).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(JSON.stringify(r.json.error.details.issues), bad).toContain('settings.allowed_origins.0');
    }
    const patch = await t.api('PATCH', `/v1/forms/${id}`, key, {
      json: { settings: { allowed_origins: ['https://ok.example', HOSTILE[0]] } },
    });
    expect(patch.status).toBe(422);
    expect(JSON.stringify(patch.json.error.details.issues)).toContain('settings.allowed_origins.1');
    const ok = await t.api('PATCH', `/v1/forms/${id}`, key, { json: { settings: { allowed_origins: FINE } } });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(ok.json.settings.allowed_origins).toEqual(FINE);
  });

  it('the quickstart’s origin and a sandbox’s origin are refused the same way', async () => {
    const q = await t.api('POST', '/v1/quickstart', key, {
      json: { name: 'Hostile origin', notify_email: 'o@example.com', origin: HOSTILE[0] },
    });
    expect(q.status).toBe(422);
    expect(JSON.stringify(q.json.error.details.issues)).toContain('"origin"');
    const s = await t.request('POST', '/v1/public/sandboxes', {
      json: { name: 'Hostile', origin: HOSTILE[0] },
      headers: { 'idempotency-key': crypto.randomUUID(), 'x-forwarded-for': '198.51.100.77' },
    });
    expect(s.status).toBe(422);
    expect(JSON.stringify(s.json.error.details.issues)).toContain('"origin"');
  });

  it('the dashboard’s settings form refuses one too, next to the field', async () => {
    const s = await dashboardSession(t);
    const id = await createForm(t, s.key);
    const r = await s.post(`/app/forms/${id}/settings`, {
      name: 'Hostile',
      tags: '',
      schema_mode: 'observe',
      allowed_origins: HOSTILE[0],
      rate_max: '',
      rate_window: '',
      honeypot_field: '',
      redirect_url: '',
      reply_to_field: '',
    });
    expect(r.status).toBe(422);
    expect(r.html).toMatch(/id="s-origins-err"><p class="field-error">[^<]+<\/p>/);
    expect((await t.api('GET', `/v1/forms/${id}`, s.key)).json.settings).toEqual({});
  });
});

describe('generated shell lines quote every value', () => {
  it('a stored hostile origin (from before validation) cannot run anything from the verify curl', async () => {
    const name = `Planted ${crypto.randomUUID().slice(0, 8)}`;
    const made = await t.api('POST', '/v1/forms', key, { json: { name } });
    // Planted as an older release could have stored it.
    await t.deps.database.db
      .update(forms)
      .set({ settings: { allowed_origins: [HOSTILE[0]] } })
      .where(eq(forms.id, made.json.id));
    // forms_create answers verify (here for the existing form, as an agent asking again gets it).
    const got = await t.api('POST', '/v1/forms', key, { json: { name, if_exists: 'return' } });
    expect(got.status).toBe(200);
    const line = got.json.verify.curl as string;
    const { args, files } = runLine(line);
    expect(files).toEqual([]);
    expect(args).toContain(`Origin: ${new URL(HOSTILE[0]).origin}`);
    expect(args).toContain(got.json.submit_url);
    const body = JSON.parse(args[args.indexOf('-d') + 1]);
    expect(body).toMatchObject({ _test: true });

    // The dashboard shows the same line with its Copy button.
    const s = await dashboardSession(t);
    const mine = await createForm(t, s.key);
    await t.deps.database.db
      .update(forms)
      .set({ settings: { allowed_origins: [HOSTILE[0]] } })
      .where(eq(forms.id, mine));
    const page = await s.get(`/app/forms/${mine}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('&#39;\\&#39;&#39;$({touch,pwned})&#39;\\&#39;&#39;');
  });

  it('a submit URL or origin with a quote stays one argument', () => {
    const v = buildVerify("http://h.example/s/fm_1'; touch pwned; '", ["https://a'b.example"]);
    const { args, files } = runLine(v.curl);
    expect(files).toEqual([]);
    expect(args).toEqual([
      '-sS',
      '-X',
      'POST',
      "http://h.example/s/fm_1'; touch pwned; '",
      '-H',
      'Content-Type: application/json',
      '-H',
      'Accept: application/json',
      '-H',
      "Origin: https://a'b.example",
      '-d',
      expect.stringContaining('"_test":true'),
    ]);
  });
});

describe('/v1 answers are never cached', () => {
  it('carries Cache-Control: no-store on reads, writes and errors', async () => {
    const id = await createForm(t, key);
    for (const r of [
      await t.api('GET', `/v1/forms/${id}`, key),
      await t.api('GET', '/v1/forms', key),
      await t.api('POST', '/v1/api-keys', key, { json: { name: 'k', scopes: ['read'] } }),
      await t.api('GET', '/v1/forms/fm_nope', key),
      await t.api('GET', '/v1/forms', null as unknown as string),
    ]) {
      expect(r.headers.get('cache-control'), String(r.status)).toBe('no-store');
    }
  });
});
