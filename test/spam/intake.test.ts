import { describe, expect, it } from 'vitest';
import { tenantApp } from '../helpers/tenant.js';

const { t, key } = await tenantApp();
let ipSeq = 0;
const freshIp = () => {
  ipSeq += 1;
  return `198.51.100.${ipSeq}`;
};
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

async function form(settings?: Record<string, unknown>) {
  const f = await t.api('POST', '/v1/forms', key, { json: { name: `Spam ${Math.random()}` } });
  expect(f.status).toBe(201);
  if (settings) expect((await t.api('PATCH', `/v1/forms/${f.json.id}`, key, { json: { settings } })).status).toBe(200);
  return f.json as { id: string };
}

const post = (formId: string, json: unknown, ip = freshIp()) =>
  t.request('POST', `/s/${formId}`, { json, headers: { 'x-forwarded-for': ip, 'user-agent': UA } });
const detail = async (id: string) => (await t.api('GET', `/v1/submissions/${id}`, key)).json;

const SPAMMY = {
  email: 'bot@mailinator.com',
  message:
    'BUY CHEAP VIAGRA NOW!!! <a href="https://bit.ly/x1">click</a> https://bit.ly/x2 https://tinyurl.com/x3 https://spam.example/x4',
};

describe('the spam verdict at intake', () => {
  it('records score, reasons and signals with texts on an ordinary received submission', async () => {
    const f = await form();
    const r = await post(f.id, { name: 'Ada', email: 'ada@example.com', message: 'Hello, could you call me back?' });
    expect(r.json.status).toBe('received');
    const s = await detail(r.json.submission_id);
    expect(s.spam.score).toBeLessThan(0.8);
    expect(Array.isArray(s.spam.signals)).toBe(true);
    expect(s.spam.reasons).toEqual(s.spam.signals.map((x: { code: string }) => x.code));
  });

  it('stores a high score as spam by default, and quarantined with spam_suspected when the form asks', async () => {
    const f = await form();
    const r = await post(f.id, SPAMMY);
    expect(r.status).toBe(200);
    const s = await detail(r.json.submission_id);
    expect(s.status).toBe('spam');
    expect(s.spam.score).toBeGreaterThanOrEqual(0.8);
    expect(s.spam.reasons).toContain('disposable_email');
    expect(s.spam.signals.find((x: { code: string }) => x.code === 'disposable_email').text).toContain('mailinator');
    const q = await form({ spam: { action: 'quarantine' } });
    const rq = await post(q.id, SPAMMY);
    const sq = await detail(rq.json.submission_id);
    expect(sq).toMatchObject({ status: 'quarantined', quarantine_reason: 'spam_suspected' });
    const lenient = await form({ spam: { threshold: 1 } });
    expect((await post(lenient.id, SPAMMY)).json.status).toBe('received');
  });

  it('block and allow lists decide; allow wins over everything but the honeypot', async () => {
    const f = await form({
      spam: { block: { keywords: ['crypto offer'] }, allow: { emails: ['bot@mailinator.com'] } },
    });
    const blocked = await post(f.id, { message: 'A great Crypto Offer for you', email: 'a@example.com' });
    const sb = await detail(blocked.json.submission_id);
    expect(sb.status).toBe('spam');
    expect(sb.spam.reasons).toContain('block_list');
    const allowed = await post(f.id, SPAMMY);
    const sa = await detail(allowed.json.submission_id);
    expect(sa).toMatchObject({ status: 'received', spam: { score: 0, reasons: ['allow_list'] } });
    const honey = await post(f.id, { ...SPAMMY, _gotcha: 'x' });
    expect((await detail(honey.json.submission_id)).spam.reasons).toEqual(['honeypot_filled']);
    const ip = await form({ spam: { block: { ips: ['203.0.113.0/24'] } } });
    const fromIp = await post(ip.id, { message: 'hello' }, '203.0.113.7');
    expect((await detail(fromIp.json.submission_id)).status).toBe('spam');
  });

  it('refuses a bad list entry with 422 naming it', async () => {
    const f = await form();
    const r = await t.api('PATCH', `/v1/forms/${f.id}`, key, {
      json: { settings: { spam: { block: { ips: ['10.0.0.0/8', 'not-an-ip'] } } } },
    });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe('validation_failed');
    expect(r.json.error.message).toContain('settings.spam.block.ips.1');
    expect(r.json.error.hint).toBeTruthy();
  });

  it('merges the organization’s lists (PATCH /v1/organizations/{id} settings.spam) into every form’s', async () => {
    const me = await t.api('GET', '/v1/organizations', key);
    const orgId = me.json.data[0].id;
    const bad = await t.api('PATCH', `/v1/organizations/${orgId}`, key, {
      json: { settings: { spam: { allow: { emails: ['nope'] } } } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.error.message).toContain('settings.spam.allow.emails.0');
    const r = await t.api('PATCH', `/v1/organizations/${orgId}`, key, {
      json: { settings: { spam: { block: { domains: ['junk.example'] } } } },
    });
    expect(r.status).toBe(200);
    expect(r.json.settings).toEqual({ spam: { block: { domains: ['junk.example'] } } });
    const f = await form({ spam: { block: { keywords: ['other'] } } });
    const s = await detail((await post(f.id, { email: 'x@mail.junk.example', message: 'hi' })).json.submission_id);
    expect(s.status).toBe('spam');
    expect(s.spam.signals[0].text).toContain('junk.example');
    const view = await t.api('GET', '/v1/spam', key);
    expect(view.json.lists.block.domains).toEqual(['junk.example']);
    expect(
      (await t.api('PATCH', `/v1/organizations/${orgId}`, key, { json: { settings: { spam: null } } })).json.settings,
    ).toEqual({});
  });
});
