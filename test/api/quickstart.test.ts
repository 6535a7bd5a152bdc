import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { startReceiver, until } from '../helpers/receiver.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, email, readKey } = await tenantApp();

const routesOf = async (formId: string) => (await t.api('GET', `/v1/routes?form_id=${formId}`, key)).json.data;

describe('POST /v1/quickstart', () => {
  it('creates the project, the form, an email destination and a direct route in one call', async () => {
    const r = await t.api('POST', '/v1/quickstart', key, {
      json: {
        name: 'Contact',
        project: 'site',
        notify_email: 'Owner@Example.com',
        origin: 'https://www.example.com/contact',
      },
    });
    expect(r.status).toBe(201);
    const j = r.json;
    expect(j.form.id).toMatch(/^fm_/);
    expect(j.form.submit_url).toBe(`http://127.0.0.1:8787/s/${j.form.id}`);
    expect(Object.keys(j.embed).sort()).toEqual(['astro', 'fetch', 'html', 'nextjs_action', 'react']);
    expect(j.verify.curl).toContain(j.form.submit_url);
    expect(j.next[0]).toMatchObject({ method: 'POST', path: `/s/${j.form.id}` });
    expect(j.form.settings.allowed_origins).toEqual(['https://www.example.com']);
    expect(j.destinations).toHaveLength(1);
    expect(j.destinations[0]).toMatchObject({ type: 'email', config: { to: ['owner@example.com'] } });
    const routes = await routesOf(j.form.id);
    expect(routes).toHaveLength(1);
    expect(routes[0]).toMatchObject({ destination_id: j.destinations[0].id, enabled: true, mode: { type: 'instant' } });
    const projects = (await t.api('GET', '/v1/projects', key)).json.data;
    expect(projects.some((p: any) => p.slug === 'site' && p.id === j.form.project_id)).toBe(true);
  });

  it("answers a verify.curl that satisfies the form's allowed origin: the post it makes is stored as received", async () => {
    /** The request a curl line makes: its URL, -H headers and -d body (the lines are single-quoted). */
    const parseCurl = (line: string) => {
      const url = /-X POST '([^']+)'/.exec(line)?.[1] as string;
      const headers = Object.fromEntries(
        [...line.matchAll(/-H '([^:']+): ([^']*)'/g)].map((m) => [m[1].toLowerCase(), m[2]]),
      );
      return { path: new URL(url).pathname, headers, body: /-d '([^']*)'/.exec(line)?.[1] };
    };
    const made = await t.api('POST', '/v1/quickstart', key, {
      json: { name: 'Origin check', notify_email: 'o@example.com', origin: 'https://Shop.Example.com/buy' },
    });
    expect(made.status).toBe(201);
    const { path, headers, body } = parseCurl(made.json.verify.curl);
    expect(headers.origin).toBe('https://shop.example.com');
    const sent = await t.api('POST', path, null, { headers, body });
    expect(sent.status).toBe(200);
    expect(sent.json).toMatchObject({ ok: true, status: 'received' });

    // The same form asked for again through POST /v1/forms: its verify.curl carries the origin too.
    const again = await t.api('POST', '/v1/forms', key, { json: { name: 'Origin check', if_exists: 'return' } });
    expect(again.json.id).toBe(made.json.form.id);
    expect(parseCurl(again.json.verify.curl).headers.origin).toBe('https://shop.example.com');

    // Without an origin the line sends none (any origin, or none, may post).
    const open = await t.api('POST', '/v1/quickstart', key, { json: { name: 'Open', notify_email: 'o@example.com' } });
    expect(parseCurl(open.json.verify.curl).headers.origin).toBeUndefined();
  });

  it('is idempotent by (project, name): a repeat returns the same form and creates nothing', async () => {
    const body = { name: 'Again', notify_email: 'again@example.com' };
    const first = await t.api('POST', '/v1/quickstart', key, { json: body });
    const second = await t.api('POST', '/v1/quickstart', key, { json: body });
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.json.form.id).toBe(first.json.form.id);
    expect(second.json.destinations.map((d: any) => d.id)).toEqual(first.json.destinations.map((d: any) => d.id));
    expect(await routesOf(first.json.form.id)).toHaveLength(1);
  });

  it('notifies the owner when no address is given, and adds webhook and telegram routes without echoing secrets', async () => {
    const r = await t.api('POST', '/v1/quickstart', key, {
      json: {
        name: 'Full',
        webhook: { url: 'https://hooks.example.com/x', secret: 'whsec_supersecret' },
        telegram: { bot_token: '123:ABCDEF', chat_id: 42 },
      },
    });
    expect(r.status).toBe(201);
    expect(r.text).not.toContain('whsec_supersecret');
    expect(r.text).not.toContain('123:ABCDEF');
    const types = r.json.destinations.map((d: any) => d.type).sort();
    expect(types).toEqual(['email', 'telegram', 'webhook']);
    expect(r.json.destinations.find((d: any) => d.type === 'email').config.to).toEqual([email]);
    expect(await routesOf(r.json.form.id)).toHaveLength(3);
  });

  it('proves delivery: a _test submission returns delivery ids that reach sent', async () => {
    const hook = await startReceiver();
    try {
      await t.startWorker();
      const r = await t.api('POST', '/v1/quickstart', key, {
        json: { name: 'Proof', notify_email: 'proof@example.com', webhook: { url: hook.url } },
      });
      const s = await t.request('POST', `/s/${r.json.form.id}`, {
        json: { email: 'visitor@example.com', message: 'hi', _test: true },
        headers: { accept: 'application/json' },
      });
      expect(s.json.deliveries).toHaveLength(2);
      for (const id of s.json.deliveries) {
        await until(
          `delivery ${id} sent`,
          async () => (await t.api('GET', `/v1/deliveries/${id}`, key)).json.status === 'sent',
        );
      }
      await t.smtp.waitFor((m) => m.to.includes('proof@example.com'), 10_000);
    } finally {
      await hook.close();
    }
  });

  it('signs every quickstart webhook: a generated whsec_ secret, returned once, verifies both signatures', async () => {
    const hook = await startReceiver();
    try {
      await t.startWorker();
      const body = { name: 'Signed', notify_email: 'signed@example.com', webhook: { url: hook.url } };
      const r = await t.api('POST', '/v1/quickstart', key, { json: body });
      expect(r.status).toBe(201);
      const secret: string = r.json.webhook_signing.secret;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(r.json.webhook_signing.verify).toMatch(/Service-Signature.*webhook-signature/);
      const dest = r.json.destinations.find((d: any) => d.type === 'webhook');
      expect(dest.config.secret).toBe('[redacted]');

      const s = await t.request('POST', `/s/${r.json.form.id}`, {
        json: { email: 'visitor@example.com', _test: true },
        headers: { accept: 'application/json' },
      });
      const [req] = await hook.waitFor((q) => q.length >= 1);
      expect(s.json.deliveries).toContain(req.headers['service-delivery']);
      const raw = req.raw.toString('utf8');
      const [, t0, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['service-signature'])) ?? [];
      expect(v1).toBe(crypto.createHmac('sha256', secret).update(`${t0}.${raw}`).digest('hex'));
      // The standardwebhooks package, exactly as llms.txt documents for a whsec_ secret.
      const verified = new Webhook(secret).verify(raw, req.headers as Record<string, string>);
      expect(verified).toMatchObject({ submission: { test: true } });

      // A repeat converges on the same destination and never shows the secret again.
      const again = await t.api('POST', '/v1/quickstart', key, { json: body });
      expect(again.status).toBe(200);
      expect(again.json.webhook_signing).toBeUndefined();
      expect(again.text).not.toContain(secret);
      expect(again.json.destinations.map((d: any) => d.id)).toEqual(r.json.destinations.map((d: any) => d.id));
      const read = await t.api('GET', `/v1/destinations/${dest.id}`, key);
      expect(read.text).not.toContain(secret);
    } finally {
      await hook.close();
    }
  });

  it('a plain secret (the docs example) verifies with standardwebhooks as raw bytes, as llms.txt says', async () => {
    const hook = await startReceiver();
    try {
      const secret = 'whsec_change_me';
      const d = await t.api('POST', '/v1/destinations', key, {
        json: { type: 'webhook', name: 'plain', config: { url: hook.url, secret } },
      });
      expect(d.status).toBe(201);
      const test = await t.api('POST', `/v1/destinations/${d.json.id}/test`, key);
      expect(test.json.ok).toBe(true);
      const [req] = hook.requests;
      const headers = req.headers as Record<string, string>;
      const raw = req.raw.toString('utf8');
      const verified = new Webhook(new TextEncoder().encode(secret), { format: 'raw' }).verify(raw, headers);
      expect(verified).toMatchObject({ type: 'destination.test' });
      // Read as whsec_<base64>, the plain secret is not a valid key: the documented split matters.
      expect(() => new Webhook(secret).verify(raw, headers)).toThrow();
    } finally {
      await hook.close();
    }
  });

  it('routes to slack and discord when given: a _test submission reaches both as chat messages', async () => {
    const slack = await startReceiver(() => ({ status: 200, body: 'ok' }));
    const discord = await startReceiver(() => ({ status: 204, body: '' }));
    try {
      const body = {
        name: 'Chat quickstart',
        slack: { url: slack.url },
        discord: { url: discord.url, template: 'New: {{ data.message }}' },
      };
      const r = await t.api('POST', '/v1/quickstart', key, { json: body });
      expect(r.status).toBe(201);
      expect(r.json.destinations.map((d: { type: string }) => d.type)).toEqual(['email', 'slack', 'discord']);
      expect(r.json.destinations.every((d: Record<string, unknown>) => d.warnings === undefined)).toBe(true);
      // Local receivers are not the providers' hosts: each is accepted with a warning.
      expect(r.json.warnings).toEqual([
        expect.stringContaining('hooks.slack.com'),
        expect.stringContaining('discord.com'),
      ]);
      const again = await t.api('POST', '/v1/quickstart', key, { json: body });
      expect(again.status).toBe(200);
      const sub = await t.request('POST', `/s/${r.json.form.id}`, {
        json: { message: 'hi <!channel>', _test: true },
        headers: { accept: 'application/json' },
      });
      await slack.waitFor((q) => q.length === 1);
      await discord.waitFor((q) => q.length === 1);
      expect(slack.requests[0].json.text).toBe('New submission: Chat quickstart\nmessage: hi &lt;!channel&gt;');
      expect(discord.requests[0].json.content).toBe('New: hi \\<!channel\\>');
      await until('deliveries sent', async () => {
        const list = await t.api('GET', `/v1/deliveries?submission_id=${sub.json.submission_id}`, key);
        return list.json.data.length === 3 && list.json.data.every((d: { status: string }) => d.status === 'sent');
      });
    } finally {
      await slack.close();
      await discord.close();
    }
  });

  it('answers 401 without a key, 403 with a read key and 422 for a bad body', async () => {
    expect((await t.api('POST', '/v1/quickstart', null, { json: { name: 'x' } })).status).toBe(401);
    expect((await t.api('POST', '/v1/quickstart', readKey, { json: { name: 'x' } })).status).toBe(403);
    const bad = await t.api('POST', '/v1/quickstart', key, { json: { name: '', notify_email: 'nope', extra: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.json.error.details.issues.length).toBeGreaterThan(0);
  });
});
