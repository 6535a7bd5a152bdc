import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destinations } from '../../server/db/schema.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, readKey, otherKey } = await tenantApp();

const webhook = (config: Record<string, unknown> = {}, name = 'Hook') => ({
  type: 'webhook',
  name,
  config: { url: 'https://hooks.example.com/in', ...config },
});

/** The config as stored, secrets included (what the worker will read). */
async function stored(id: string) {
  const [row] = await t.deps.database.db.select().from(destinations).where(eq(destinations.id, id));
  return row.config;
}

function expect422(r: { status: number; json: any }, path?: string) {
  expect(r.status).toBe(422);
  expect(r.json.error.code).toBe('validation_failed');
  expect(r.json.error.details.issues.length).toBeGreaterThan(0);
  if (path) expect(r.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
}

describe('destinations', () => {
  it('creates, reads, lists, updates and deletes a webhook destination', async () => {
    const created = await t.api('POST', '/v1/destinations', key, { json: webhook() });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      type: 'webhook',
      name: 'Hook',
      config: { url: 'https://hooks.example.com/in' },
      health: 'unknown',
      verified: false,
    });
    expect(created.json.id).toMatch(/^ds_/);
    expect(created.json.created_at).toMatch(/Z$/);
    const id = created.json.id;
    expect((await t.api('GET', `/v1/destinations/${id}`, key)).json).toEqual(created.json);
    const list = await t.api('GET', '/v1/destinations', key);
    expect(list.json.data.map((d: { id: string }) => d.id)).toContain(id);
    const patched = await t.api('PATCH', `/v1/destinations/${id}`, key, { json: { name: 'Renamed' } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ id, name: 'Renamed', config: { url: 'https://hooks.example.com/in' } });
    expect((await t.api('DELETE', `/v1/destinations/${id}`, key)).status).toBe(204);
    expect((await t.api('GET', `/v1/destinations/${id}`, key)).status).toBe(404);
  });

  it('accepts every type with its config (telegram chat_id stored as a string, slack/discord URL as url)', async () => {
    const email = await t.api('POST', '/v1/destinations', key, {
      json: {
        type: 'email',
        name: 'Inbox',
        config: { to: ['a@example.com'], cc: ['b@example.com'], subject_template: 'New {{form.name}}', from_name: 'X' },
      },
    });
    expect(email.status).toBe(201);
    expect(email.json.config).toEqual({
      to: ['a@example.com'],
      cc: ['b@example.com'],
      subject_template: 'New {{form.name}}',
      from_name: 'X',
    });
    const tg = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'telegram', name: 'TG', config: { bot_token: '123:abc', chat_id: -100123 } },
    });
    expect(tg.status).toBe(201);
    expect(tg.json.config.chat_id).toBe('-100123');
    const slack = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'slack', name: 'S', config: { url: 'https://hooks.slack.com/services/T/B/X', template: 'hi' } },
    });
    expect(slack.status).toBe(201);
    // The URL is the credential: its host and last 4 characters are shown.
    expect(slack.json.config).toEqual({ url: 'https://hooks.slack.com/[redacted]…/B/X', template: 'hi' });
    const discord = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'discord', name: 'D', config: { webhook_url: 'https://discord.com/api/webhooks/1/x' } },
    });
    expect(discord.status).toBe(201);
    expect(discord.json.config).toEqual({ url: 'https://discord.com/[redacted]…/1/x' });
    const onlyTg = await t.api('GET', '/v1/destinations?type=telegram&limit=200', key);
    expect(onlyTg.json.data.length).toBeGreaterThan(0);
    expect(onlyTg.json.data.every((d: { type: string }) => d.type === 'telegram')).toBe(true);
    expect(onlyTg.text).not.toContain(email.json.id);
  });

  it('redacts Slack and Discord webhook URLs to every reader (read keys too); sent back redacted, the URL is kept', async () => {
    const url = 'https://hooks.slack.com/services/T0001/B0002/SECRETPATHxyz9';
    const made = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'slack', name: 'Redacted', config: { url } },
    });
    expect(made.status).toBe(201);
    const shown = 'https://hooks.slack.com/[redacted]…xyz9';
    expect(made.json.config.url).toBe(shown);
    for (const k of [key, readKey]) {
      const one = await t.api('GET', `/v1/destinations/${made.json.id}`, k);
      expect(one.json.config.url).toBe(shown);
      const list = await t.api('GET', '/v1/destinations?type=slack&limit=200', k);
      expect(list.text).not.toContain('SECRETPATH');
      expect(one.text).not.toContain('SECRETPATH');
    }
    // A config read back and sent again keeps the stored URL (url or its webhook_url alias).
    for (const config of [{ url: shown, template: 'x' }, { webhook_url: shown }]) {
      const patched = await t.api('PATCH', `/v1/destinations/${made.json.id}`, key, { json: { config } });
      expect(patched.status, JSON.stringify(patched.json)).toBe(200);
      expect(patched.json.config.url).toBe(shown);
      const [row] = await t.deps.database.db.select().from(destinations).where(eq(destinations.id, made.json.id));
      expect(row.config.url).toBe(url);
    }
    const discord = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'discord', name: 'D2', config: { url: 'https://discord.com/api/webhooks/123/TOKENabcd' } },
    });
    expect((await t.api('GET', `/v1/destinations/${discord.json.id}`, readKey)).json.config.url).toBe(
      'https://discord.com/[redacted]…abcd',
    );
  });

  it('never returns secrets: create, get, list and patch answer "[redacted]"', async () => {
    const secret = 'whsec_TOPSECRET_0123456789';
    const token = '987654:BOTTOKEN_SECRET_value';
    const headerValue = 'Bearer HEADER_SECRET_value';
    const wh = await t.api('POST', '/v1/destinations', key, {
      json: webhook({ secret, headers: { Authorization: headerValue } }),
    });
    const tg = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'telegram', name: 'TG', config: { bot_token: token, chat_id: '42', template: 'x' } },
    });
    expect(wh.json.config).toEqual({
      url: 'https://hooks.example.com/in',
      secret: '[redacted]',
      headers: { Authorization: '[redacted]' },
    });
    expect(tg.json.config).toEqual({ bot_token: '[redacted]', chat_id: '42', template: 'x' });
    const texts = [
      wh.text,
      tg.text,
      (await t.api('GET', `/v1/destinations/${wh.json.id}`, key)).text,
      (await t.api('GET', `/v1/destinations/${tg.json.id}`, key)).text,
      (await t.api('GET', '/v1/destinations?limit=200', key)).text,
      (await t.api('GET', '/v1/destinations?limit=200', readKey)).text,
      (await t.api('PATCH', `/v1/destinations/${wh.json.id}`, key, { json: { name: 'n' } })).text,
      (await t.api('PATCH', `/v1/destinations/${tg.json.id}`, key, { json: { config: { chat_id: 7 } } })).text,
    ];
    for (const text of texts) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(token);
      expect(text).not.toContain('HEADER_SECRET');
    }
    expect(await stored(wh.json.id)).toMatchObject({ secret, headers: { Authorization: headerValue } });
    expect(await stored(tg.json.id)).toEqual({ bot_token: token, chat_id: '7', template: 'x' });
  });

  it('PATCH merges config over the stored one: secrets kept unless replaced, null removes a key', async () => {
    const d = await t.api('POST', '/v1/destinations', key, {
      json: webhook({ secret: 's1', headers: { 'X-A': 'a', 'X-B': 'b' } }),
    });
    const id = d.json.id;
    const moved = await t.api('PATCH', `/v1/destinations/${id}`, key, {
      json: { config: { url: 'https://hooks.example.com/new' } },
    });
    expect(moved.status).toBe(200);
    expect(moved.json.config).toEqual({
      url: 'https://hooks.example.com/new',
      secret: '[redacted]',
      headers: { 'X-A': '[redacted]', 'X-B': '[redacted]' },
    });
    expect(await stored(id)).toEqual({
      url: 'https://hooks.example.com/new',
      secret: 's1',
      headers: { 'X-A': 'a', 'X-B': 'b' },
    });
    // A read-modify-write round trip sends the redacted placeholders back: nothing changes.
    await t.api('PATCH', `/v1/destinations/${id}`, key, { json: { config: moved.json.config } });
    expect(await stored(id)).toEqual({
      url: 'https://hooks.example.com/new',
      secret: 's1',
      headers: { 'X-A': 'a', 'X-B': 'b' },
    });
    // headers replace as a map; a redacted value keeps the stored one
    await t.api('PATCH', `/v1/destinations/${id}`, key, {
      json: { config: { secret: 's2', headers: { 'X-A': '[redacted]', 'X-C': 'c' } } },
    });
    expect(await stored(id)).toEqual({
      url: 'https://hooks.example.com/new',
      secret: 's2',
      headers: { 'X-A': 'a', 'X-C': 'c' },
    });
    const noSecret = await t.api('PATCH', `/v1/destinations/${id}`, key, { json: { config: { secret: null } } });
    expect(noSecret.json.config).not.toHaveProperty('secret');
    expect(await stored(id)).not.toHaveProperty('secret');
  });

  it('PATCH moving the URL to another host drops the stored secret and headers, saying so', async () => {
    const here = await startReceiver();
    const there = await startReceiver(undefined, '127.0.0.2');
    try {
      const d = await t.api('POST', '/v1/destinations', key, {
        json: webhook({ url: here.url, secret: 'whsec_old_secret', headers: { Authorization: 'Bearer t0ken' } }),
      });
      const id = d.json.id;
      expect((await t.api('POST', `/v1/destinations/${id}/test`, key)).json.ok).toBe(true);
      expect(here.requests[0].headers.authorization).toBe('Bearer t0ken');
      expect(here.requests[0].headers['service-signature']).toBeTruthy();

      // Same origin, another path: nothing is dropped.
      const samePlace = await t.api('PATCH', `/v1/destinations/${id}`, key, {
        json: { config: { url: `${here.url}/v2` } },
      });
      expect(samePlace.json.warnings).toBeUndefined();
      expect(await stored(id)).toMatchObject({
        secret: 'whsec_old_secret',
        headers: { Authorization: 'Bearer t0ken' },
      });

      // Another host; the redacted placeholder a read-modify-write sends back does not count as given.
      const moved = await t.api('PATCH', `/v1/destinations/${id}`, key, {
        json: { config: { url: there.url, secret: '[redacted]', headers: { Authorization: '[redacted]' } } },
      });
      expect(moved.status).toBe(200);
      expect(moved.json.config).toEqual({ url: there.url });
      expect(moved.json.warnings).toHaveLength(1);
      expect(moved.json.warnings[0]).toMatch(/secret and the values of header Authorization were dropped/);
      expect(await stored(id)).toEqual({ url: there.url });
      expect((await t.api('POST', `/v1/destinations/${id}/test`, key)).json.ok).toBe(true);
      const [req] = there.requests;
      expect(req.headers.authorization).toBeUndefined();
      expect(req.headers['service-signature']).toBeUndefined();
      expect(req.raw.toString()).not.toContain('t0ken');

      // Given again in the same request, they follow the URL.
      const back = await t.api('PATCH', `/v1/destinations/${id}`, key, {
        json: { config: { url: here.url, secret: 'whsec_new_secret', headers: { Authorization: 'Bearer n3w' } } },
      });
      expect(back.json.warnings).toBeUndefined();
      expect(await stored(id)).toEqual({
        url: here.url,
        secret: 'whsec_new_secret',
        headers: { Authorization: 'Bearer n3w' },
      });
    } finally {
      await here.close();
      await there.close();
    }
  });

  it('PATCH validates the merged config and refuses unknown fields', async () => {
    const d = await t.api('POST', '/v1/destinations', key, { json: webhook() });
    const id = d.json.id;
    expect422(
      await t.api('PATCH', `/v1/destinations/${id}`, key, { json: { config: { url: 'ftp://x' } } }),
      'config.url',
    );
    expect422(await t.api('PATCH', `/v1/destinations/${id}`, key, { json: { config: { url: null } } }), 'config.url');
    expect422(await t.api('PATCH', `/v1/destinations/${id}`, key, { json: { config: { colour: 'red' } } }));
    expect422(await t.api('PATCH', `/v1/destinations/${id}`, key, { json: { type: 'email' } }));
    expect422(await t.api('PATCH', `/v1/destinations/${id}`, key, { json: { name: '' } }));
    expect((await t.api('GET', `/v1/destinations/${id}`, key)).json).toEqual(d.json);
    const same = await t.api('PATCH', `/v1/destinations/${id}`, key, { json: {} });
    expect(same.status).toBe(200);
    expect(same.json).toEqual(d.json);
  });

  it('answers 422 validation_failed for unknown types and invalid configs', async () => {
    const post = (json: unknown) => t.api('POST', '/v1/destinations', key, { json });
    expect422(await post({ type: 'carrier_pigeon', name: 'nope', config: {} }), 'type');
    expect422(await post({ name: 'no type', config: {} }));
    expect422(await post({ type: 'webhook', config: { url: 'https://example.com' } }), 'name');
    expect422(await post({ ...webhook(), extra: 1 }));
    expect422(await post({ type: 'email', name: 'e', config: { to: [] } }), 'config.to');
    expect422(await post({ type: 'email', name: 'e', config: { to: ['not-an-email'] } }), 'config.to.0');
    expect422(await post({ type: 'email', name: 'e', config: { to: ['a@example.com'], cc: ['nope'] } }));
    expect422(await post({ type: 'email', name: 'e', config: { to: ['a@example.com'], bcc: ['a@example.com'] } }));
    expect422(await post({ type: 'telegram', name: 't', config: { chat_id: '1' } }), 'config.bot_token');
    expect422(await post({ type: 'telegram', name: 't', config: { bot_token: 'x' } }), 'config.chat_id');
    expect422(await post({ type: 'telegram', name: 't', config: { bot_token: 'x', chat_id: true } }));
    expect422(await post(webhook({ url: 'ftp://example.com/x' })), 'config.url');
    expect422(await post(webhook({ url: 'not a url' })), 'config.url');
    expect422(await post(webhook({ headers: { 'X-N': 5 } })));
    expect422(await post(webhook({ retries: 3 })));
    expect422(await post({ type: 'slack', name: 's', config: { template: 'x' } }));
    expect422(
      await post({
        type: 'slack',
        name: 's',
        config: { url: 'https://hooks.slack.com/a', webhook_url: 'https://hooks.slack.com/b' },
      }),
    );
    expect((await t.api('GET', '/v1/destinations?type=carrier_pigeon', key)).json.error.code).toBe('validation_failed');
  });

  it('refuses to delete a destination that routes still use (409), then deletes it', async () => {
    const form = await t.api('POST', '/v1/forms', key, { json: { name: 'Busy form' } });
    const d = await t.api('POST', '/v1/destinations', key, { json: webhook() });
    const rt = await t.api('POST', '/v1/routes', key, { json: { form_id: form.json.id, destination_id: d.json.id } });
    expect(rt.status).toBe(201);
    const del = await t.api('DELETE', `/v1/destinations/${d.json.id}`, key);
    expect(del.status).toBe(409);
    expect(del.json.error.code).toBe('conflict');
    expect(del.json.error.hint).toMatch(/routes/);
    expect(del.json.error.details).toEqual({ routes: 1 });
    expect((await t.api('DELETE', `/v1/routes/${rt.json.id}`, key)).status).toBe(204);
    expect((await t.api('DELETE', `/v1/destinations/${d.json.id}`, key)).status).toBe(204);
  });

  it('lists newest first with stable cursors', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      ids.push((await t.api('POST', '/v1/destinations', key, { json: webhook({}, `Page ${i}`) })).json.id);
    }
    // ids are time-sortable; newest first means descending ids
    const newest = [...ids].sort().reverse();
    const first = await t.api('GET', '/v1/destinations?limit=2', key);
    expect(first.json.data.map((d: { id: string }) => d.id)).toEqual(newest.slice(0, 2));
    const second = await t.api('GET', `/v1/destinations?limit=2&cursor=${first.json.next_cursor}`, key);
    expect(second.json.data[0].id).toBe(newest[2]);
    expect((await t.api('GET', '/v1/destinations?cursor=rt_nonsense', key)).status).toBe(422);
  });

  it('keeps tenants apart and enforces scopes', async () => {
    const d = await t.api('POST', '/v1/destinations', key, { json: webhook() });
    const id = d.json.id;
    expect((await t.api('GET', `/v1/destinations/${id}`, otherKey)).status).toBe(404);
    const patch = await t.api('PATCH', `/v1/destinations/${id}`, otherKey, { json: { name: 'x' } });
    expect(patch.status).toBe(404);
    expect(patch.json.error.code).toBe('not_found');
    expect((await t.api('DELETE', `/v1/destinations/${id}`, otherKey)).status).toBe(404);
    expect((await t.api('GET', '/v1/destinations?limit=200', otherKey)).text).not.toContain(id);
    expect((await t.api('GET', '/v1/destinations', null)).status).toBe(401);
    expect((await t.api('POST', '/v1/destinations', null, { json: webhook() })).status).toBe(401);
    const ro = await t.api('POST', '/v1/destinations', readKey, { json: webhook() });
    expect(ro.status).toBe(403);
    expect(ro.json.error.code).toBe('forbidden');
    expect((await t.api('PATCH', `/v1/destinations/${id}`, readKey, { json: { name: 'x' } })).status).toBe(403);
    expect((await t.api('DELETE', `/v1/destinations/${id}`, readKey)).status).toBe(403);
    expect((await t.api('GET', `/v1/destinations/${id}`, readKey)).status).toBe(200);
    expect((await t.api('GET', '/v1/destinations', readKey)).status).toBe(200);
  });
});

describe('destinations under a plan limit', () => {
  let p: TestEnv;
  beforeAll(async () => {
    p = await startTestApp({ DEFAULT_PLAN: 'free', PLAN_LIMITS: JSON.stringify({ free: { destinations: 1 } }) });
  });
  afterAll(() => p.close());

  it('answers 402 plan_limit_reached past the limit, and allows a new one after a delete', async () => {
    const k = (await p.onboard()).key;
    const first = await p.api('POST', '/v1/destinations', k, { json: webhook() });
    expect(first.status).toBe(201);
    const second = await p.api('POST', '/v1/destinations', k, { json: webhook() });
    expect(second.status).toBe(402);
    expect(second.json.error.code).toBe('plan_limit_reached');
    expect(second.json.error.details).toMatchObject({ limit: 'destinations', max: 1, used: 1 });
    expect(second.json.error.hint).toMatch(/plan/);
    // the limit is per organization
    expect((await p.api('POST', '/v1/destinations', (await p.onboard()).key, { json: webhook() })).status).toBe(201);
    expect((await p.api('DELETE', `/v1/destinations/${first.json.id}`, k)).status).toBe(204);
    expect((await p.api('POST', '/v1/destinations', k, { json: webhook() })).status).toBe(201);
  });
});

describe('destinations in production (outbound guard)', () => {
  let p: TestEnv;
  beforeAll(async () => {
    p = await startTestApp({ NODE_ENV: 'production' });
  });
  afterAll(() => p.close());

  it('refuses webhook URLs on private, loopback and link-local hosts with a hint', async () => {
    const k = (await p.onboard()).key;
    for (const url of [
      'http://127.0.0.1:9000/hook',
      'http://localhost/hook',
      'http://api.localhost/hook',
      'http://10.1.2.3/hook',
      'http://192.168.1.1/hook',
      'http://172.16.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://0x7f000001/hook',
      'http://[::1]/hook',
      'http://[fd00::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
    ]) {
      const r = await p.api('POST', '/v1/destinations', k, { json: webhook({ url }) });
      expect(r.status, url).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(r.json.error.hint).toMatch(/OUTBOUND_ALLOW_PRIVATE/);
      expect(r.json.error.details.issues[0].path).toBe('config.url');
    }
    const ok = await p.api('POST', '/v1/destinations', k, { json: webhook({ url: 'http://hooks.example.com/x' }) });
    expect(ok.status).toBe(201);
    const moved = await p.api('PATCH', `/v1/destinations/${ok.json.id}`, k, {
      json: { config: { url: 'http://127.0.0.1/x' } },
    });
    expect(moved.status).toBe(422);
    const slack = await p.api('POST', '/v1/destinations', k, {
      json: { type: 'slack', name: 's', config: { url: 'http://hooks.slack.com/services/x' } },
    });
    expect(slack.status).toBe(422);
  });
});

describe('slack and discord URLs at create', () => {
  it('answers warnings[] (origin only, never the path) for a URL off the provider webhook host, none on it', async () => {
    const post = (type: string, url: string) =>
      t.api('POST', '/v1/destinations', key, { json: { type, name: 'chat', config: { url } } });
    for (const [type, url] of [
      ['slack', 'https://hooks.slack.com/services/T1/B1/secretpart'],
      ['discord', 'https://discord.com/api/webhooks/1/secretpart'],
      ['discord', 'https://discordapp.com/api/webhooks/1/secretpart'],
    ]) {
      const r = await post(type, url);
      expect(r.status, url).toBe(201);
      expect(r.json.warnings, url).toBeUndefined();
    }
    const off = [
      ['slack', 'https://relay.example.com/services/T1/B1/secretpart', 'hooks.slack.com'],
      ['discord', 'https://discord.com/channels/secretpart', 'discord.com/api/webhooks/'],
      ['discord', 'https://chat.example.org/api/webhooks/1/secretpart', 'discord.com/api/webhooks/'],
    ];
    for (const [type, url, usual] of off) {
      const r = await post(type, url);
      expect(r.status, url).toBe(201);
      expect(r.json.warnings, url).toHaveLength(1);
      expect(r.json.warnings[0]).toContain(new URL(url).origin);
      expect(r.json.warnings[0]).toContain(usual);
      expect(r.json.warnings[0]).not.toContain('secretpart');
      expect((await t.api('GET', `/v1/destinations/${r.json.id}`, key)).json.warnings).toBeUndefined();
    }
    const webhook = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'w', config: { url: 'https://relay.example.com/x' } },
    });
    expect(webhook.json.warnings).toBeUndefined();
  });

  it('warns on a PATCH that moves the URL off the provider host', async () => {
    const d = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'slack', name: 's', config: { url: 'https://hooks.slack.com/services/T/B/X' } },
    });
    const r = await t.api('PATCH', `/v1/destinations/${d.json.id}`, key, {
      json: { config: { url: 'https://relay.example.com/hook' } },
    });
    expect(r.status).toBe(200);
    expect(r.json.warnings).toEqual([expect.stringContaining('https://relay.example.com')]);
    const renamed = await t.api('PATCH', `/v1/destinations/${d.json.id}`, key, { json: { name: 'renamed' } });
    expect(renamed.json.warnings).toBeUndefined();
  });
});

describe('slack and discord URLs in production with private targets allowed', () => {
  let p: TestEnv;
  beforeAll(async () => {
    p = await startTestApp({ NODE_ENV: 'production', OUTBOUND_ALLOW_PRIVATE: 'true' });
  });
  afterAll(() => p.close());

  it('still require https (the URL is the credential); webhooks keep accepting http', async () => {
    const k = (await p.onboard()).key;
    for (const type of ['slack', 'discord']) {
      const r = await p.api('POST', '/v1/destinations', k, {
        json: { type, name: 'c', config: { url: 'http://10.0.0.5/hook' } },
      });
      expect(r.status, type).toBe(422);
      expect(r.json.error.details.issues[0]).toEqual({ path: 'config.url', message: 'must start with https://' });
      expect(r.json.error.hint).toMatch(/https:\/\//);
    }
    const hook = await p.api('POST', '/v1/destinations', k, { json: webhook({ url: 'http://10.0.0.5/hook' }) });
    expect(hook.status).toBe(201);
  });
});
