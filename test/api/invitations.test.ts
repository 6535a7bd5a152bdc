import crypto from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invitations, memberships } from '../../server/db/schema.js';
import { maskEmail } from '../../server/present/invitation.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { type Session, signIn } from '../helpers/session.js';

let t: TestEnv;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const fresh = (tag = 'i') => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;

const as = (s: Session, method: string, path: string, json?: unknown) =>
  t.request(method, path, { headers: { cookie: s.cookie }, ...(json === undefined ? {} : { json }) });

/** An owner's session in a fresh team organization (active). */
async function team(name = 'Acme') {
  const owner = await signIn(t);
  const org = await as(owner, 'POST', '/v1/organizations', { name });
  expect(org.status).toBe(201);
  expect((await as(owner, 'POST', `/v1/organizations/${org.json.id}/switch`)).status).toBe(200);
  return { owner, org: org.json as { id: string; slug: string; name: string } };
}

const inviteMail = (email: string) => t.smtp.waitFor((m) => m.to.includes(email) && /invited/i.test(m.subject));

const membershipsOf = (orgId: string, userId: string) =>
  t.deps.database.db
    .select()
    .from(memberships)
    .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)));

describe('POST /v1/invitations', () => {
  it('creates a pending invitation, mails the link and how to accept, and lists it', async () => {
    const { owner, org } = await team('Mail Test Org');
    const email = fresh('new');
    const r = await as(owner, 'POST', '/v1/invitations', { email: `  ${email.toUpperCase()} `, role: 'admin' });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      id: expect.stringMatching(/^inv_/),
      email,
      role: 'admin',
      invited_by: { id: owner.userId, name: owner.name, email: owner.email },
      accept_url: `http://127.0.0.1:8787/v1/invitations/${r.json.id}`,
      email_sent: true,
    });
    const days = (Date.parse(r.json.expires_at) - Date.parse(r.json.created_at)) / 86_400_000;
    expect(days).toBe(7);
    const mail = await inviteMail(email);
    expect(mail.subject).toContain('Mail Test Org');
    expect(mail.text).toContain(r.json.accept_url);
    expect(mail.text).toContain('/v1/auth/sign-in');
    expect(mail.text).toContain(`${r.json.accept_url}/accept`);
    expect(mail.text).toContain(`/v1/organizations/${org.id}/switch`);
    const list = await as(owner, 'GET', '/v1/invitations');
    expect(list.status).toBe(200);
    expect(list.json).toEqual({
      data: [
        {
          id: r.json.id,
          email,
          role: 'admin',
          expires_at: r.json.expires_at,
          invited_by: r.json.invited_by,
          created_at: r.json.created_at,
        },
      ],
      next_cursor: null,
    });
  });

  it('defaults to member; a manage key invites with invited_by null; 409 on a pending one unless if_exists return', async () => {
    const a = await t.onboard();
    const email = fresh();
    const r = await t.api('POST', '/v1/invitations', a.key, { json: { email } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ role: 'member', invited_by: null, email_sent: true });
    await inviteMail(email);
    const dup = await t.api('POST', '/v1/invitations', a.key, { json: { email, role: 'admin' } });
    expect(dup.status).toBe(409);
    expect(dup.json.error).toMatchObject({
      code: 'conflict',
      hint: expect.stringMatching(/if_exists/),
      details: { existing_id: r.json.id },
    });
    const mails = t.smtp.messages.filter((m) => m.to.includes(email)).length;
    const again = await t.api('POST', '/v1/invitations', a.key, { json: { email, if_exists: 'return' } });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ id: r.json.id, role: 'member', email_sent: false });
    expect(t.smtp.messages.filter((m) => m.to.includes(email)).length).toBe(mails);
    // The same address may be invited by another organization.
    const b = await t.onboard();
    expect((await t.api('POST', '/v1/invitations', b.key, { json: { email } })).status).toBe(201);
  });

  it('answers 409 for a current member', async () => {
    const a = await t.onboard();
    const r = await t.api('POST', '/v1/invitations', a.key, { json: { email: a.email } });
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'conflict', hint: expect.stringMatching(/PATCH \/v1\/members/) });
  });

  it('supersedes an expired invitation with a new one', async () => {
    const a = await t.onboard();
    const email = fresh();
    const first = await t.api('POST', '/v1/invitations', a.key, { json: { email } });
    await t.deps.database.db
      .update(invitations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(invitations.id, first.json.id));
    expect((await t.api('GET', '/v1/invitations', a.key)).json.data).toEqual([]);
    const second = await t.api('POST', '/v1/invitations', a.key, { json: { email } });
    expect(second.status).toBe(201);
    expect(second.json.id).not.toBe(first.json.id);
    expect((await t.api('GET', '/v1/invitations', a.key)).json.data.map((i: any) => i.id)).toEqual([second.json.id]);
  });

  it('owner invitations come from an owner session only', async () => {
    const { owner } = await team();
    const a = await t.onboard();
    const byKey = await t.api('POST', '/v1/invitations', a.key, { json: { email: fresh(), role: 'owner' } });
    expect(byKey.status).toBe(403);
    expect(byKey.json.error.hint).toMatch(/admin/);
    expect((await as(owner, 'POST', '/v1/invitations', { email: fresh(), role: 'owner' })).status).toBe(201);
  });

  it('keeps the invitation when the mail fails, with email_sent false', async () => {
    const a = await t.onboard();
    const send = t.deps.mailer.send;
    t.deps.mailer.send = async () => ({ ok: false, error: 'refused' });
    try {
      const r = await t.api('POST', '/v1/invitations', a.key, { json: { email: fresh() } });
      expect(r.status).toBe(201);
      expect(r.json.email_sent).toBe(false);
      expect(r.json.accept_url).toContain(r.json.id);
    } finally {
      t.deps.mailer.send = send;
    }
  });

  it('validates the body and checks rights: members, read keys and no credentials are refused', async () => {
    const a = await t.onboard();
    for (const json of [{}, { email: 'nope' }, { email: fresh(), role: 'root' }, { email: fresh(), extra: 1 }]) {
      const r = await t.api('POST', '/v1/invitations', a.key, { json });
      expect(r.status, JSON.stringify(json)).toBe(422);
    }
    const read = await t.onboard(a.email, { scopes: ['read'] });
    expect((await t.api('POST', '/v1/invitations', read.key, { json: { email: fresh() } })).status).toBe(403);
    expect((await t.api('GET', '/v1/invitations', read.key)).status).toBe(403);
    expect((await t.api('POST', '/v1/invitations', null, { json: { email: fresh() } })).status).toBe(401);
    expect((await t.api('GET', '/v1/invitations', null)).status).toBe(401);

    const { owner, org } = await team();
    const memberEmail = fresh('m');
    const inv = await as(owner, 'POST', '/v1/invitations', { email: memberEmail });
    const member = await signIn(t, memberEmail);
    await as(member, 'POST', `/v1/invitations/${inv.json.id}/accept`);
    await as(member, 'POST', `/v1/organizations/${org.id}/switch`);
    const denied = await as(member, 'POST', '/v1/invitations', { email: fresh() });
    expect(denied.status).toBe(403);
    expect(denied.json.error.hint).toMatch(/owner or admin/);
    expect((await as(member, 'GET', '/v1/invitations')).status).toBe(403);
  });
});

describe('GET /v1/invitations/{id} (public)', () => {
  it('shows organization name, inviter, role, expiry and a masked address without credentials', async () => {
    const { owner, org } = await team('Public Org');
    const email = `alice-${crypto.randomUUID().slice(0, 6)}@example.com`;
    const inv = await as(owner, 'POST', '/v1/invitations', { email, role: 'member' });
    const r = await t.request('GET', `/v1/invitations/${inv.json.id}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      organization: { name: org.name },
      invited_by_name: owner.name,
      role: 'member',
      expires_at: inv.json.expires_at,
      email_hint: 'a***@e***.com',
      next: expect.any(Array),
    });
    expect(r.text).not.toContain(email);
    expect(r.text).not.toContain(org.id);
    expect(r.json.next.map((n: any) => n.path)).toEqual(['/v1/auth/sign-in', `/v1/invitations/${inv.json.id}/accept`]);
  });

  it('masks addresses', () => {
    expect(maskEmail('alice@example.com')).toBe('a***@e***.com');
    expect(maskEmail('b@mail.example.co.uk')).toBe('b***@m***.uk');
    expect(maskEmail('x@localhost')).toBe('x***@l***');
  });

  it('answers 404 for unknown and revoked, 410 for expired and accepted', async () => {
    const a = await t.onboard();
    expect((await t.request('GET', '/v1/invitations/inv_01h455vb4pex5vsknk084sn02q')).status).toBe(404);
    const unknown = await t.request('GET', '/v1/invitations/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.hint).toBeTruthy();

    const revoked = await t.api('POST', '/v1/invitations', a.key, { json: { email: fresh() } });
    expect((await t.api('DELETE', `/v1/invitations/${revoked.json.id}`, a.key)).status).toBe(204);
    expect((await t.request('GET', `/v1/invitations/${revoked.json.id}`)).status).toBe(404);

    const expired = await t.api('POST', '/v1/invitations', a.key, { json: { email: fresh() } });
    await t.deps.database.db
      .update(invitations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(invitations.id, expired.json.id));
    const gone = await t.request('GET', `/v1/invitations/${expired.json.id}`);
    expect(gone.status).toBe(410);
    expect(gone.json.error).toMatchObject({ code: 'gone', hint: expect.stringMatching(/invite you again/) });

    const email = fresh();
    const accepted = await t.api('POST', '/v1/invitations', a.key, { json: { email } });
    const s = await signIn(t, email);
    expect((await as(s, 'POST', `/v1/invitations/${accepted.json.id}/accept`)).status).toBe(200);
    const used = await t.request('GET', `/v1/invitations/${accepted.json.id}`);
    expect(used.status).toBe(410);
    expect(used.json.error.code).toBe('gone');
  });
});

describe('POST /v1/invitations/{id}/accept', () => {
  it('adds the membership for a session of the invited address; the organization can then be switched to', async () => {
    const { owner, org } = await team('Join Me');
    const email = fresh('join');
    const inv = await as(owner, 'POST', '/v1/invitations', { email, role: 'admin' });
    const s = await signIn(t, email);
    const r = await as(s, 'POST', `/v1/invitations/${inv.json.id}/accept`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      organization: { id: org.id, slug: org.slug, name: 'Join Me' },
      role: 'admin',
      next: expect.any(Array),
    });
    expect(r.json.next[0]).toMatchObject({ method: 'POST', path: `/v1/organizations/${org.id}/switch` });
    // Accepting does not move the session.
    expect((await as(s, 'GET', '/v1/me')).json.organization.id).toBe(s.personal.id);
    const orgs = await as(s, 'GET', '/v1/organizations');
    expect(orgs.json.data.find((o: any) => o.id === org.id)).toMatchObject({ role: 'admin', is_active: false });
    expect((await as(s, 'POST', `/v1/organizations/${org.id}/switch`)).status).toBe(200);
    const members = await as(owner, 'GET', '/v1/members');
    expect(members.json.data.find((m: any) => m.user.email === email)).toMatchObject({ role: 'admin' });
    expect((await as(owner, 'GET', '/v1/invitations')).json.data).toEqual([]);
    // Accepting again answers the same, with one membership.
    const again = await as(s, 'POST', `/v1/invitations/${inv.json.id}/accept`);
    expect(again.status).toBe(200);
    expect(again.json.organization.id).toBe(org.id);
    expect(await membershipsOf(org.id, s.userId)).toHaveLength(1);
  });

  it('accepting twice at once makes one membership', async () => {
    const a = await t.onboard();
    const email = fresh('race');
    const inv = await t.api('POST', '/v1/invitations', a.key, { json: { email } });
    const s = await signIn(t, email);
    const both = await Promise.all([
      as(s, 'POST', `/v1/invitations/${inv.json.id}/accept`),
      as(s, 'POST', `/v1/invitations/${inv.json.id}/accept`),
    ]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(both[0].json).toEqual(both[1].json);
    expect(await membershipsOf(a.verify.organization.id, s.userId)).toHaveLength(1);
    const rows = await t.deps.database.rows<{ n: number }>(
      sql`select count(*)::int as n from memberships where org_id = ${a.verify.organization.id}`,
    );
    expect(rows[0].n).toBe(2);
  });

  it('refuses another address (403 with a hint), API keys (403) and no credentials (401)', async () => {
    const a = await t.onboard();
    const email = fresh('right');
    const inv = await t.api('POST', '/v1/invitations', a.key, { json: { email } });
    const other = await signIn(t, fresh('wrong'));
    const wrong = await as(other, 'POST', `/v1/invitations/${inv.json.id}/accept`);
    expect(wrong.status).toBe(403);
    expect(wrong.json.error).toMatchObject({ code: 'forbidden', hint: expect.stringMatching(/sign-in/) });
    expect(wrong.json.error.message).not.toContain(email);
    const byKey = await t.api('POST', `/v1/invitations/${inv.json.id}/accept`, a.key);
    expect(byKey.status).toBe(403);
    expect(byKey.json.error.hint).toMatch(/session cookie/);
    expect((await t.request('POST', `/v1/invitations/${inv.json.id}/accept`)).status).toBe(401);
    // The invitation is still open for the right person.
    const right = await signIn(t, email);
    expect((await as(right, 'POST', `/v1/invitations/${inv.json.id}/accept`)).status).toBe(200);
    expect(await membershipsOf(a.verify.organization.id, other.userId)).toHaveLength(0);
  });

  it('answers 404 for unknown and revoked, 410 for expired', async () => {
    const a = await t.onboard();
    const email = fresh();
    const s = await signIn(t, email);
    expect((await as(s, 'POST', '/v1/invitations/inv_01h455vb4pex5vsknk084sn02q/accept')).status).toBe(404);
    const inv = await t.api('POST', '/v1/invitations', a.key, { json: { email } });
    await t.deps.database.db
      .update(invitations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(invitations.id, inv.json.id));
    const expired = await as(s, 'POST', `/v1/invitations/${inv.json.id}/accept`);
    expect(expired.status).toBe(410);
    expect(expired.json.error.code).toBe('gone');
    const next = await t.api('POST', '/v1/invitations', a.key, { json: { email } });
    await t.api('DELETE', `/v1/invitations/${next.json.id}`, a.key);
    expect((await as(s, 'POST', `/v1/invitations/${next.json.id}/accept`)).status).toBe(404);
    expect(await membershipsOf(a.verify.organization.id, s.userId)).toHaveLength(0);
  });
});

describe('DELETE /v1/invitations/{id}', () => {
  it('revokes a pending invitation (204); again is 404; another organization is 404; accepted is 409', async () => {
    const a = await t.onboard();
    const b = await t.onboard();
    const inv = await t.api('POST', '/v1/invitations', a.key, { json: { email: fresh() } });
    const cross = await t.api('DELETE', `/v1/invitations/${inv.json.id}`, b.key);
    expect(cross.status).toBe(404);
    expect(cross.json.error.code).toBe('not_found');
    const del = await t.api('DELETE', `/v1/invitations/${inv.json.id}`, a.key);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await t.api('DELETE', `/v1/invitations/${inv.json.id}`, a.key)).status).toBe(404);
    expect((await t.api('GET', '/v1/invitations', a.key)).json.data).toEqual([]);

    const email = fresh();
    const acc = await t.api('POST', '/v1/invitations', a.key, { json: { email } });
    const s = await signIn(t, email);
    await as(s, 'POST', `/v1/invitations/${acc.json.id}/accept`);
    const late = await t.api('DELETE', `/v1/invitations/${acc.json.id}`, a.key);
    expect(late.status).toBe(409);
    expect(late.json.error.hint).toMatch(/DELETE \/v1\/members/);
  });

  it('an admin cannot revoke an owner invitation; an owner can', async () => {
    const { owner, org } = await team();
    const ownerInv = await as(owner, 'POST', '/v1/invitations', { email: fresh(), role: 'owner' });
    const adminEmail = fresh('adm');
    const adminInv = await as(owner, 'POST', '/v1/invitations', { email: adminEmail, role: 'admin' });
    const admin = await signIn(t, adminEmail);
    await as(admin, 'POST', `/v1/invitations/${adminInv.json.id}/accept`);
    await as(admin, 'POST', `/v1/organizations/${org.id}/switch`);
    expect((await as(admin, 'GET', '/v1/invitations')).json.data.map((i: any) => i.id)).toEqual([ownerInv.json.id]);
    expect((await as(admin, 'DELETE', `/v1/invitations/${ownerInv.json.id}`)).status).toBe(403);
    const memberInv = await as(admin, 'POST', '/v1/invitations', { email: fresh() });
    expect(memberInv.status).toBe(201);
    expect((await as(admin, 'DELETE', `/v1/invitations/${memberInv.json.id}`)).status).toBe(204);
    expect((await as(owner, 'DELETE', `/v1/invitations/${ownerInv.json.id}`)).status).toBe(204);
  });
});
