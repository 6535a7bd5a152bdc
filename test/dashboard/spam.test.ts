import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

let t: TestEnv;
let owner: Awaited<ReturnType<typeof dashboardSession>>;
let other: Awaited<ReturnType<typeof dashboardSession>>;
let formId: string;
let ipSeq = 0;

/** A visitor's JSON post to the owner's form (its own IP, a browser's User-Agent unless `ua` is ''). */
async function send(data: Record<string, unknown>, ua = UA) {
  ipSeq += 1;
  const r = await t.request('POST', `/s/${formId}`, {
    json: data,
    headers: {
      accept: 'application/json',
      'x-forwarded-for': `198.51.100.${ipSeq}`,
      ...(ua ? { 'user-agent': ua } : {}),
    },
  });
  expect(r.status).toBe(200);
  return r.json.submission_id as string;
}

/** The organization's lists as GET /v1/spam shows them. */
const orgSpam = async () => (await t.api('GET', '/v1/spam', owner.key)).json.lists;

beforeAll(async () => {
  t = await startTestApp();
  owner = await dashboardSession(t);
  other = await dashboardSession(t);
  formId = (await t.api('POST', '/v1/forms', owner.key, { json: { name: 'Contact' } })).json.id;
});
afterAll(() => t.close());

describe('the Spam page', () => {
  it('is in the navigation and starts empty', async () => {
    const r = await owner.get('/app/spam');
    expect(r.status).toBe(200);
    expect(r.html).toContain('<a href="/app/spam" aria-current="page">Spam</a>');
    expect(r.html).toContain('action="/app/spam/lists"');
    expect(r.html).toContain('No marks yet.');
    expect(r.html).toMatch(/<dd id="spam-learned">0<\/dd>/);
  });

  it('saves the lists through PATCH /v1/organizations/{id}, shows them, and intake applies them', async () => {
    const r = await owner.post('/app/spam/lists', {
      block_keywords: 'zorblax casino\n  \nfree <b>money</b>\n',
      block_ips: '203.0.113.0/24',
      block_emails: '',
      allow_emails: 'friend@example.com',
    });
    expect(r.status).toBe(303);
    expect(decodeURIComponent(r.location ?? '')).toContain('Lists saved.');
    expect(await orgSpam()).toEqual({
      block: { emails: [], domains: [], ips: ['203.0.113.0/24'], keywords: ['zorblax casino', 'free <b>money</b>'] },
      allow: { emails: ['friend@example.com'], domains: [], ips: [], keywords: [] },
    });
    const page = await owner.get('/app/spam');
    expect(page.html).toContain('zorblax casino\nfree &lt;b&gt;money&lt;/b&gt;</textarea>');
    expect(page.html).not.toContain('<b>money</b>');
    expect(page.html).toContain('>203.0.113.0/24</textarea>');
    expect(page.html).toContain('>friend@example.com</textarea>');
    // The policy is refreshed with the organization: the next post that holds the phrase is spam.
    const id = await send({ message: 'Join the Zorblax Casino today' });
    const s = (await t.api('GET', `/v1/submissions/${id}`, owner.key)).json;
    expect(s.status).toBe('spam');
    expect(s.spam.reasons).toContain('block_list');
  });

  it('shows a bad CIDR under its list, keeps what was typed and saves nothing', async () => {
    const before = await orgSpam();
    const r = await owner.post('/app/spam/lists', {
      block_keywords: 'zorblax casino',
      block_ips: '203.0.113.0/24\n10.0.0.0/33',
    });
    expect(r.status).toBe(422);
    expect(r.html).toContain('ips take addresses or CIDRs');
    expect(r.html).toMatch(/id="spam-block-ips"[^>]*aria-invalid="true"/);
    expect(r.html).toContain(
      '<p class="field-error" id="spam-block-ips-error">&quot;10.0.0.0/33&quot; is not an IP address or CIDR</p>',
    );
    expect(r.html).toContain('203.0.113.0/24\n10.0.0.0/33</textarea>');
    expect(await orgSpam()).toEqual(before);
  });

  it('refuses a save without the page’s CSRF token', async () => {
    const before = await orgSpam();
    const r = await owner.post('/app/spam/lists', { block_keywords: 'csrf' }, { csrf: false });
    expect(r.status).toBe(403);
    expect(await orgSpam()).toEqual(before);
  });

  it('shows the marks and what the filter learned, and forgets it after a confirmation', async () => {
    const spamId = await send({ message: 'Quantum profits guaranteed, zzyzx club' });
    const hamId = await send({ message: 'Please book a table for Friday' });
    expect((await owner.post(`/app/submissions/${spamId}/status`, { status: 'spam' })).status).toBe(303);
    expect((await owner.post(`/app/submissions/${hamId}/status`, { status: 'received' })).status).toBe(303);
    const r = await owner.get('/app/spam');
    expect(r.html).toMatch(/<dd id="spam-learned">1<\/dd>/);
    expect(r.html).toMatch(/<dd id="ham-learned">1<\/dd>/);
    expect(r.html).toContain('<td class="mono">zzyzx</td>');
    expect(r.html).toContain(`href="/app/submissions/${hamId}"`);
    expect(r.html).toContain(`href="/app/submissions/${spamId}"`);
    // Newest first: the not-spam mark was the later one.
    expect(r.html.indexOf(hamId)).toBeLessThan(r.html.indexOf(spamId));
    expect(r.html).toContain('<td>not spam</td>');
    expect(r.html).toContain('href="/app/spam/forget"');

    const confirm = await owner.get('/app/spam/forget');
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('Yes, forget it all');
    expect((await owner.post('/app/spam/forget', {}, { csrf: false })).status).toBe(403);
    expect((await t.api('GET', '/v1/spam', owner.key)).json.model.spam).toBe(1);
    const gone = await owner.post('/app/spam/forget', {});
    expect(gone.status).toBe(303);
    expect(decodeURIComponent(gone.location ?? '')).toContain('forgot what it learned');
    const after = (await t.api('GET', '/v1/spam', owner.key)).json;
    expect(after.model).toMatchObject({ spam: 0, ham: 0 });
    expect(after.recent_marks).toEqual([]);
    // The lists stay.
    expect(after.lists.block.keywords).toContain('zorblax casino');
  });

  it('is read-only for a member, who is refused every change', async () => {
    const email = `member-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const inv = await t.api('POST', '/v1/invitations', owner.key, { json: { email, role: 'member' } });
    expect(inv.status).toBe(201);
    const member = await dashboardSession(t, email);
    expect((await member.post(`/app/invitations/${inv.json.id}/accept`, {})).status).toBe(303);
    const id = await send({ message: 'Teach me' });
    expect((await owner.post(`/app/submissions/${id}/status`, { status: 'spam' })).status).toBe(303);

    const r = await member.get('/app/spam');
    expect(r.status).toBe(200);
    expect(r.html).toContain('<li>zorblax casino</li>');
    expect(r.html).not.toContain('action="/app/spam/lists"');
    expect(r.html).not.toContain('href="/app/spam/forget"');
    expect(r.html).toContain('Only an owner or admin can change the lists.');
    const before = await orgSpam();
    expect((await member.post('/app/spam/lists', { block_keywords: 'member was here' })).status).toBe(403);
    expect(await orgSpam()).toEqual(before);
    expect((await member.get('/app/spam/forget')).status).toBe(403);
    const refused = await member.post('/app/spam/forget', {});
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('Only an owner or admin');
    expect((await t.api('GET', '/v1/spam', owner.key)).json.model.spam).toBe(1);
  });

  it('shows another organization nothing of this one', async () => {
    const r = await other.get('/app/spam');
    expect(r.status).toBe(200);
    expect(r.html).not.toContain('zorblax');
    expect(r.html).toContain('No marks yet.');
    expect(r.html).toMatch(/<dd id="spam-learned">0<\/dd>/);
    const { json } = await t.api('GET', `/v1/submissions?spam_reason=block_list`, owner.key);
    const theirs = await other.get(`/app/submissions/${json.data[0].id}`);
    expect(theirs.status).toBe(404);
    const inbox = await other.get('/app?spam_reason=block_list');
    expect(inbox.html).toContain('No submission matches these filters.');
  });
});

describe('spam signals on a submission', () => {
  it('lists each signal with its text escaped, its weight and the score, also on a received one', async () => {
    const id = await send({ email: '<img/src=x>@localhost', message: 'hello' }, '');
    const s = (await t.api('GET', `/v1/submissions/${id}`, owner.key)).json;
    expect(s.status).toBe('received');
    expect(s.spam.reasons).toEqual(expect.arrayContaining(['email_no_dot', 'no_user_agent']));
    const r = await owner.get(`/app/submissions/${id}`);
    expect(r.html).toContain('<h2 id="spam-signals-h">Spam signals</h2>');
    expect(r.html).toContain('the address &lt;img/src=x&gt;@localhost has no dot in its domain');
    expect(r.html).not.toContain('<img/src=x>');
    expect(r.html).toContain('<code>email_no_dot</code>');
    expect(r.html).toContain('href="/app?spam_reason=email_no_dot"');
    expect(r.html).toContain('<td>0.40</td>');
    expect(r.html).toContain(`<span class="spam-score">${s.spam.score.toFixed(2)}</span>`);
    // A received one has both buttons: Not spam teaches the filter without changing the status.
    expect(r.html).toContain('Mark as spam');
    expect(r.html).toContain('>Not spam</button>');
    const ok = await owner.post(`/app/submissions/${id}/status`, { status: 'received' });
    expect(ok.status).toBe(303);
    const marks = (await t.api('GET', '/v1/spam', owner.key)).json.recent_marks;
    expect(marks[0]).toMatchObject({ submission_id: id, mark: 'ham', status: 'received', form_id: formId });
  });

  it('shows no panel when nothing fired', async () => {
    const id = await send({ message: 'Hello there, a normal message' });
    const r = await owner.get(`/app/submissions/${id}`);
    expect((await t.api('GET', `/v1/submissions/${id}`, owner.key)).json.spam.reasons).toEqual([]);
    expect(r.html).not.toContain('Spam signals');
  });
});

describe('the inbox’s spam signal filter', () => {
  it('narrows the list to the submissions with that reason, as GET /v1/submissions?spam_reason does', async () => {
    const all = await owner.get('/app');
    expect(all.html).toContain('<option value="block_list">block_list</option>');
    const r = await owner.get('/app?spam_reason=block_list');
    expect(r.status).toBe(200);
    expect(r.html).toContain('<option value="block_list" selected="">block_list</option>');
    expect(r.html).toContain('Join the Zorblax Casino today');
    // A spam row says why, under its status.
    expect(r.html).toContain('<div class="muted mono">block_list</div>');
    expect(r.html).not.toContain('Please book a table for Friday');
    expect(r.html).toContain('data-poll="/app/inbox/rows?spam_reason=block_list"');
    const rows = await owner.get('/app/inbox/rows?spam_reason=email_no_dot');
    expect(rows.html).toContain('hello');
    expect(rows.html).not.toContain('Zorblax');

    const api = await t.api('GET', '/v1/submissions?spam_reason=block_list', owner.key);
    expect(api.status).toBe(200);
    expect(api.json.data.length).toBe(1);
    expect(api.json.data.every((s: { spam: { reasons: string[] } }) => s.spam.reasons.includes('block_list'))).toBe(
      true,
    );
    const none = await t.api('GET', '/v1/submissions?spam_reason=stale_page', owner.key);
    expect(none.json.data).toEqual([]);
    const bad = await t.api('GET', '/v1/submissions?spam_reason=Not%20a%20code', owner.key);
    expect(bad.status).toBe(422);
    expect(bad.json.error.hint).toBeTruthy();
    const page = await owner.get('/app?spam_reason=%3Cb%3E');
    expect(page.status).toBe(422);
    expect(page.html).not.toContain('<b>');
  });
});
