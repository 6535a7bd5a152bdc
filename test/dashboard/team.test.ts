import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';

const HOSTILE = '<script>alert(1)</script>';
const fresh = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}@example.com`;

let t: TestEnv;
let owner: Awaited<ReturnType<typeof dashboardSession>>;
let other: Awaited<ReturnType<typeof dashboardSession>>;
beforeAll(async () => {
  t = await startTestApp();
  owner = await dashboardSession(t);
  other = await dashboardSession(t);
  // A hostile organization name, set through the API.
  const me = await t.api('GET', '/v1/me', owner.key);
  const r = await t.api('PATCH', `/v1/organizations/${me.json.organization.id}`, owner.key, {
    json: { name: `Team ${HOSTILE}` },
  });
  expect(r.status).toBe(200);
});
afterAll(() => t.close());

/** Invites `email` from the owner's team page and returns the invitation id from the mail's dashboard link. */
async function invite(email: string, role = 'member') {
  const before = t.smtp.messages.length;
  const r = await owner.post('/app/team/invitations', { email, role });
  expect(r.status).toBe(303);
  expect(decodeURIComponent(r.location ?? '')).toContain(`Invitation sent to ${email}`);
  const mail = await t.smtp.waitFor((m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(email));
  const id = /\/app\/invitations\/(\S+)/.exec(mail.text)?.[1];
  expect(id).toBeTruthy();
  return id as string;
}

describe('team page', () => {
  it('shows members with roles, plan and usage against limits, the organization name escaped', async () => {
    const r = await owner.get('/app/team');
    expect(r.status).toBe(200);
    expect(r.html).toContain(owner.email);
    expect(r.html).toContain('Team &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(r.html).not.toContain(HOSTILE);
    expect(r.html).toContain('Plan and usage');
    expect(r.html).toMatch(/Submissions this month<\/dt><dd>0 (of|\(no limit)/);
    expect(r.html).toContain('Send invitation');
  });

  it('keeps the address and shows the field error for an invalid invitation', async () => {
    const r = await owner.post('/app/team/invitations', { email: `nope${HOSTILE}`, role: 'member' });
    expect(r.status).toBe(422);
    expect(r.html).toContain('value="nope&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(r.html).toContain('class="field-error"');
  });

  it('refuses an invitation without the page token', async () => {
    const before = t.smtp.messages.length;
    const r = await owner.post('/app/team/invitations', { email: fresh('nocsrf') }, { csrf: false });
    expect(r.status).toBe(403);
    expect(t.smtp.messages.length).toBe(before);
  });

  it('invites, and the invited address accepts on the accept page; then a member cannot manage the team', async () => {
    const email = fresh('joiner');
    const id = await invite(email);
    const listed = await owner.get('/app/team');
    expect(listed.html).toContain(email);

    // Signed out: what it is for, and a sign-in link that comes back here.
    const out = await t.app.request(`/app/invitations/${id}`);
    expect(out.status).toBe(200);
    const outHtml = await out.text();
    expect(outHtml).toContain('Team &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(outHtml).toContain(`href="/app/sign-in?next=${encodeURIComponent(`/app/invitations/${id}`)}"`);
    expect(outHtml).not.toContain(email); // the address is masked

    // Someone else signed in is refused, as the API refuses.
    const wrong = await other.post(`/app/invitations/${id}/accept`, {});
    expect(wrong.status).toBe(403);
    expect(wrong.html).toContain('another address');

    const joiner = await dashboardSession(t, email);
    const page = await joiner.get(`/app/invitations/${id}`);
    expect(page.html).toContain('Accept the invitation');
    const noToken = await joiner.post(`/app/invitations/${id}/accept`, {}, { csrf: false });
    expect(noToken.status).toBe(403);
    const ok = await joiner.post(`/app/invitations/${id}/accept`, {});
    expect(ok.status).toBe(303);
    expect(decodeURIComponent(ok.location ?? '')).toContain('You joined Team');

    // The session now works in the owner's organization, as a member.
    const team = await joiner.get('/app/team');
    expect(team.html).toContain('Team &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(team.html).toContain('You are member here');
    expect(team.html).not.toContain('Send invitation');
    expect(team.html).not.toContain('/role"');

    const members = await t.api('GET', '/v1/members', owner.key);
    const ownerMember = members.json.data.find((m: { user: { email: string } }) => m.user.email === owner.email);
    const joinerMember = members.json.data.find((m: { user: { email: string } }) => m.user.email === email);
    expect(joinerMember.role).toBe('member');

    // A member is refused team changes, as the API refuses them.
    const promote = await joiner.post(`/app/team/members/${joinerMember.id}/role`, { role: 'admin' });
    expect(promote.status).toBe(403);
    const remove = await joiner.post(`/app/team/members/${ownerMember.id}/remove`, {});
    expect(remove.status).toBe(403);
    const inviteAsMember = await joiner.post('/app/team/invitations', { email: fresh('x') });
    expect(inviteAsMember.status).toBe(403);
    const mint = await joiner.post('/app/keys', { name: 'ci', scopes: 'read' });
    expect(mint.status).toBe(403);
    const after = await t.api('GET', '/v1/members', owner.key);
    expect(after.json.data.length).toBe(members.json.data.length);

    // The owner changes the role, then removes the member.
    const role = await owner.post(`/app/team/members/${joinerMember.id}/role`, { role: 'admin' });
    expect(role.status).toBe(303);
    expect(decodeURIComponent(role.location ?? '')).toContain(`${email} is now admin`);
    const badRole = await owner.post(`/app/team/members/${joinerMember.id}/role`, { role: 'king' });
    expect(badRole.status).toBe(422);
    const gone = await owner.post(`/app/team/members/${joinerMember.id}/remove`, {});
    expect(gone.status).toBe(303);
    const final = await t.api('GET', '/v1/members', owner.key);
    expect(final.json.data.some((m: { user: { email: string } }) => m.user.email === email)).toBe(false);

    // The accepted invitation's page says so.
    const used = await t.app.request(`/app/invitations/${id}`);
    expect(await used.text()).toContain('accepted already');
  });

  it('lets a member leave the organization from the team page', async () => {
    const email = fresh('leaver');
    const id = await invite(email);
    const leaver = await dashboardSession(t, email);
    expect((await leaver.post(`/app/invitations/${id}/accept`, {})).status).toBe(303);
    const page = await leaver.get('/app/team');
    const action = /action="(\/app\/team\/members\/[^"]+\/remove)"/.exec(page.html)?.[1] as string;
    expect(page.html).toContain('Leave this organization');
    const r = await leaver.post(action, {});
    expect(r.status).toBe(303);
    expect(decodeURIComponent(r.location ?? '')).toContain('You left the organization');
    const members = await t.api('GET', '/v1/members', owner.key);
    expect(members.json.data.some((m: { user: { email: string } }) => m.user.email === email)).toBe(false);
    // Back in their own organization, signed in.
    expect((await leaver.get('/app/team')).html).not.toContain('Team &lt;script&gt;');
  });

  it('revokes an invitation; its accept page is then a 404', async () => {
    const email = fresh('revoked');
    const id = await invite(email);
    expect((await other.post(`/app/team/invitations/${id}/revoke`, {})).status).toBe(404);
    const r = await owner.post(`/app/team/invitations/${id}/revoke`, {});
    expect(r.status).toBe(303);
    expect((await owner.get('/app/team')).html).not.toContain(email);
    const page = await t.app.request(`/app/invitations/${id}`);
    expect(page.status).toBe(404);
  });

  it('answers a second invitation of the same address with the conflict next to the form', async () => {
    const email = fresh('twice');
    await invite(email);
    const again = await owner.post('/app/team/invitations', { email, role: 'member' });
    expect(again.status).toBe(409);
    expect(again.html).toContain('has a pending invitation already');
    expect(again.html).toContain(`value="${email}"`);
  });

  it("answers another organization's member with a 404", async () => {
    const members = await t.api('GET', '/v1/members', owner.key);
    const mine = members.json.data[0].id;
    expect((await other.post(`/app/team/members/${mine}/role`, { role: 'admin' })).status).toBe(404);
    expect((await other.post(`/app/team/members/${mine}/remove`, {})).status).toBe(404);
  });
});

describe('API keys page', () => {
  it('creates a key with scopes, shows it once with a Copy button, never again', async () => {
    const r = await owner.post('/app/keys', { name: `ci${HOSTILE}`.slice(0, 32), scopes: ['read', 'submit'] });
    expect(r.status).toBe(200);
    const key = /id="new-api-key">([^<]+)</.exec(r.html)?.[1] as string;
    expect(key).toMatch(/^svc_live_/);
    expect(r.html).toContain('data-copy="new-api-key"');
    expect(r.html).not.toContain(HOSTILE);
    const me = await t.api('GET', '/v1/me', key);
    expect(me.status).toBe(200);
    expect(me.json.key.scopes.sort()).toEqual(['read', 'submit']);

    const list = await owner.get('/app/keys');
    expect(list.status).toBe(200);
    expect(list.html).not.toContain(key);
    expect(list.html).toContain(`${me.json.key.prefix}…`);
    expect(list.html).toContain('ci&lt;script&gt;');

    const keys = await t.api('GET', '/v1/api-keys', owner.key);
    const id = keys.json.data.find((k: { prefix: string }) => k.prefix === me.json.key.prefix).id;
    expect((await other.post(`/app/keys/${id}/revoke`, {})).status).toBe(404);
    expect((await owner.post(`/app/keys/${id}/revoke`, {}, { csrf: false })).status).toBe(403);
    expect((await t.api('GET', '/v1/me', key)).status).toBe(200);
    const revoked = await owner.post(`/app/keys/${id}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect((await t.api('GET', '/v1/me', key)).status).toBe(401);
    expect((await owner.get('/app/keys')).html).not.toContain(`${me.json.key.prefix}…`);
  });

  it('refuses a key without a name or without a scope, keeping the values', async () => {
    const noScope = await owner.post('/app/keys', { name: 'deploy' });
    expect(noScope.status).toBe(422);
    expect(noScope.html).toContain('value="deploy"');
    expect(noScope.html).toContain('<p class="field-error">Tick at least one scope.</p>');
    expect(noScope.html).not.toMatch(/svc_live_[A-Za-z0-9_-]{20,}/);
    const noName = await owner.post('/app/keys', { name: '', scopes: 'manage' });
    expect(noName.status).toBe(422);
    expect(noName.html).toMatch(/<input type="checkbox" name="scopes" value="manage" checked=""/);
  });
});
