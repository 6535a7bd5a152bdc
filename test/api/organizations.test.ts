import crypto from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberships, organizations, sessions } from '../../server/db/schema.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { type Session, signIn } from '../helpers/session.js';

let t: TestEnv;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const fresh = (tag = 'o') => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;

/** A request with a session cookie. */
const as = (s: Session, method: string, path: string, json?: unknown) =>
  t.request(method, path, { headers: { cookie: s.cookie }, ...(json === undefined ? {} : { json }) });

/** A team organization of `owner`, made active for that session. */
async function teamOf(owner: Session, name = 'Acme Team') {
  const r = await as(owner, 'POST', '/v1/organizations', { name });
  expect(r.status).toBe(201);
  expect((await as(owner, 'POST', `/v1/organizations/${r.json.id}/switch`)).status).toBe(200);
  return r.json as { id: string; slug: string; name: string };
}

/** Invites `email` as `role` with the owner's session, signs them in, accepts and switches; returns their session. */
async function join(owner: Session, orgId: string, role: 'owner' | 'admin' | 'member', email = fresh('m')) {
  const inv = await as(owner, 'POST', '/v1/invitations', { email, role });
  expect(inv.status).toBe(201);
  const s = await signIn(t, email);
  expect((await as(s, 'POST', `/v1/invitations/${inv.json.id}/accept`)).status).toBe(200);
  expect((await as(s, 'POST', `/v1/organizations/${orgId}/switch`)).status).toBe(200);
  const [m] = await t.deps.database.db
    .select()
    .from(memberships)
    .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, s.userId)));
  return { ...s, memberId: m.id };
}

const Plan = {
  plan: 'selfhost',
  plan_source: 'selfhost',
  plan_expires_at: null,
  plan_note: null,
};

describe('GET /v1/organizations', () => {
  it('a key sees its one organization with role null, the plan and the time zone', async () => {
    const a = await t.onboard();
    const r = await t.api('GET', '/v1/organizations', a.key);
    expect(r.status).toBe(200);
    const org = a.verify.organization;
    expect(r.json).toEqual({
      data: [
        {
          id: org.id,
          slug: org.slug,
          name: org.name,
          role: null,
          is_active: true,
          personal: true,
          ...Plan,
          timezone: 'UTC',
          settings: {},
          created_at: expect.stringMatching(/Z$/),
        },
      ],
      next_cursor: null,
    });
  });

  it('a session sees every membership with its role; is_active follows the switch, as does /v1/me', async () => {
    const s = await signIn(t);
    const created = await as(s, 'POST', '/v1/organizations', {
      name: '  Acme Berlin  ',
      timezone: 'europe/berlin',
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      id: expect.stringMatching(/^org_/),
      slug: 'acme-berlin',
      name: 'Acme Berlin',
      role: 'owner',
      is_active: false,
      personal: false,
      ...Plan,
      timezone: 'Europe/Berlin',
    });
    expect(created.json.next[0]).toMatchObject({ method: 'POST', path: `/v1/organizations/${created.json.id}/switch` });

    const before = await as(s, 'GET', '/v1/organizations');
    expect(before.json.data.map((o: any) => [o.id, o.role, o.is_active])).toEqual([
      [created.json.id, 'owner', false],
      [s.personal.id, 'owner', true],
    ]);

    const sw = await as(s, 'POST', `/v1/organizations/${created.json.id}/switch`);
    expect(sw.status).toBe(200);
    expect(sw.json).toMatchObject({ id: created.json.id, role: 'owner', is_active: true });
    const me = await as(s, 'GET', '/v1/me');
    expect(me.json.organization).toMatchObject({ id: created.json.id, timezone: 'Europe/Berlin' });
    expect(me.json.organizations).toEqual([
      { id: created.json.id, slug: 'acme-berlin', name: 'Acme Berlin', role: 'owner', is_active: true },
      expect.objectContaining({ id: s.personal.id, role: 'owner', is_active: false }),
    ]);
    // Resources now land in the new organization.
    const p = await as(s, 'POST', '/v1/projects', { name: 'Team site' });
    expect(p.status).toBe(201);
    const back = await as(s, 'POST', `/v1/organizations/${s.personal.id}/switch`);
    expect(back.json.is_active).toBe(true);
    expect((await as(s, 'GET', `/v1/projects/${p.json.id}`)).status).toBe(404);
  });

  it('paginates and answers 401 without credentials', async () => {
    const s = await signIn(t);
    await as(s, 'POST', '/v1/organizations', { name: 'One' });
    await as(s, 'POST', '/v1/organizations', { name: 'Two' });
    const p1 = await as(s, 'GET', '/v1/organizations?limit=2');
    expect(p1.json.data).toHaveLength(2);
    const p2 = await as(s, 'GET', `/v1/organizations?limit=2&cursor=${p1.json.next_cursor}`);
    expect(p2.json.data).toHaveLength(1);
    expect(p2.json.next_cursor).toBeNull();
    expect(p2.json.data[0].id).toBe(s.personal.id);
    const anon = await t.request('GET', '/v1/organizations');
    expect(anon.status).toBe(401);
    expect(anon.json.error.hint).toBeTruthy();
  });
});

describe('POST /v1/organizations', () => {
  it('takes an explicit slug once (409 with a hint after), and derives a free one when left out', async () => {
    const s = await signIn(t);
    const slug = `team-${crypto.randomUUID().slice(0, 8)}`;
    const a = await as(s, 'POST', '/v1/organizations', { name: 'Slugged', slug });
    expect(a.status).toBe(201);
    expect(a.json.slug).toBe(slug);
    const dup = await as(s, 'POST', '/v1/organizations', { name: 'Other', slug });
    expect(dup.status).toBe(409);
    expect(dup.json.error).toMatchObject({ code: 'conflict', hint: expect.stringMatching(/slug/) });
    const derived1 = await as(s, 'POST', '/v1/organizations', { name: 'Same Name' });
    const derived2 = await as(s, 'POST', '/v1/organizations', { name: 'Same Name' });
    expect(derived2.status).toBe(201);
    expect(derived2.json.slug).not.toBe(derived1.json.slug);
    expect(derived2.json.slug).toMatch(/^same-name/);
  });

  it('validates name, slug and time zone (IANA names only)', async () => {
    const s = await signIn(t);
    for (const json of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { name: 'Bad\nname' },
      { name: 'Ok', slug: 'Not A Slug' },
      { name: 'Ok', timezone: 'Mars/Olympus' },
      { name: 'Ok', timezone: '+01:00' },
      { name: 'Ok', plan: 'team' },
    ]) {
      const r = await as(s, 'POST', '/v1/organizations', json);
      expect(r.status, JSON.stringify(json)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
    }
  });

  it("a key creates one owned by the key's user, who reaches it by signing in", async () => {
    const a = await t.onboard();
    const r = await t.api('POST', '/v1/organizations', a.key, { json: { name: 'Agent Made' } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ role: null, is_active: false, personal: false });
    expect(r.json.next[0]).toMatchObject({ method: 'POST', path: '/v1/auth/sign-in' });
    // The key still belongs to its own organization only.
    const keyList = await t.api('GET', '/v1/organizations', a.key);
    expect(keyList.json.data.map((o: any) => o.id)).toEqual([a.verify.organization.id]);
    const s = await signIn(t, a.email);
    const list = await as(s, 'GET', '/v1/organizations');
    expect(list.json.data.find((o: any) => o.id === r.json.id)).toMatchObject({ role: 'owner' });
  });

  it("refuses a key whose user is no longer a member of the key's organization (403 with a hint)", async () => {
    const owner = await signIn(t);
    const team = await teamOf(owner);
    const admin = await join(owner, team.id, 'admin');
    const minted = await as(admin, 'POST', '/v1/api-keys', { name: 'admin key' });
    expect(minted.status).toBe(201);
    expect((await as(owner, 'DELETE', `/v1/members/${admin.memberId}`)).status).toBe(204);
    // The key belongs to the organization and keeps working there...
    expect((await t.api('GET', '/v1/me', minted.json.api_key)).status).toBe(200);
    // ...but cannot act for the person who left.
    const r = await t.api('POST', '/v1/organizations', minted.json.api_key, { json: { name: 'Nope' } });
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ code: 'forbidden', hint: expect.stringMatching(/sign-in/) });
  });

  it('needs a manage scope', async () => {
    const a = await t.onboard();
    const read = await t.onboard(a.email, { scopes: ['read'] });
    const r = await t.api('POST', '/v1/organizations', read.key, { json: { name: 'x' } });
    expect(r.status).toBe(403);
    expect((await t.api('POST', '/v1/organizations', null, { json: { name: 'x' } })).status).toBe(401);
  });
});

describe('PATCH /v1/organizations/{id}', () => {
  it('an owner or admin renames it and sets the time zone; the slug stays', async () => {
    const owner = await signIn(t);
    const team = await teamOf(owner, 'Before');
    const r = await as(owner, 'PATCH', `/v1/organizations/${team.id}`, { name: 'After', timezone: 'Asia/Tokyo' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      id: team.id,
      slug: team.slug,
      name: 'After',
      timezone: 'Asia/Tokyo',
      role: 'owner',
    });
    const admin = await join(owner, team.id, 'admin');
    expect((await as(admin, 'PATCH', `/v1/organizations/${team.id}`, { timezone: 'UTC' })).json.timezone).toBe('UTC');
    const member = await join(owner, team.id, 'member');
    const denied = await as(member, 'PATCH', `/v1/organizations/${team.id}`, { name: 'Mine' });
    expect(denied.status).toBe(403);
    expect(denied.json.error.hint).toMatch(/owner or admin/);
    const bad = await as(owner, 'PATCH', `/v1/organizations/${team.id}`, { timezone: 'Nowhere/Land' });
    expect(bad.status).toBe(422);
    expect(bad.json.error.details.issues[0].path).toBe('timezone');
    expect((await as(owner, 'PATCH', `/v1/organizations/${team.id}`, { slug: 'moved' })).status).toBe(422);
  });

  it('a manage key changes its own organization; another organization is 404', async () => {
    const a = await t.onboard();
    const b = await t.onboard();
    const own = await t.api('PATCH', `/v1/organizations/${a.verify.organization.id}`, a.key, {
      json: { timezone: 'America/New_York' },
    });
    expect(own.status).toBe(200);
    expect(own.json).toMatchObject({ timezone: 'America/New_York', role: null, is_active: true });
    expect((await t.api('GET', '/v1/me', a.key)).json.organization.timezone).toBe('America/New_York');
    const other = await t.api('PATCH', `/v1/organizations/${b.verify.organization.id}`, a.key, {
      json: { name: 'Hijack' },
    });
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('not_found');
    const s = await signIn(t);
    expect((await as(s, 'PATCH', `/v1/organizations/${a.verify.organization.id}`, { name: 'x' })).status).toBe(404);
    const [row] = await t.deps.database.db
      .select()
      .from(organizations)
      .where(eq(organizations.id, b.verify.organization.id));
    expect(row.name).not.toBe('Hijack');
    const read = await t.onboard(a.email, { scopes: ['read'] });
    expect(
      (await t.api('PATCH', `/v1/organizations/${a.verify.organization.id}`, read.key, { json: { name: 'x' } })).status,
    ).toBe(403);
  });
});

describe('POST /v1/organizations/{id}/switch', () => {
  it('refuses API keys with a hint that keys belong to one organization', async () => {
    const a = await t.onboard();
    for (const key of [a.key, (await t.onboard(a.email, { scopes: ['submit'] })).key]) {
      const r = await t.api('POST', `/v1/organizations/${a.verify.organization.id}/switch`, key);
      expect(r.status).toBe(403);
      expect(r.json.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/one organization/) });
      expect(r.json.error.hint).toMatch(/api-keys/);
    }
  });

  it('answers 404 for an organization the user is not a member of, and keeps the session where it was', async () => {
    const s = await signIn(t);
    const other = await t.onboard();
    const r = await as(s, 'POST', `/v1/organizations/${other.verify.organization.id}/switch`);
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('not_found');
    expect((await as(s, 'POST', '/v1/organizations/org_nothing/switch')).status).toBe(404);
    expect((await as(s, 'GET', '/v1/me')).json.organization.id).toBe(s.personal.id);
    expect((await t.request('POST', `/v1/organizations/${s.personal.id}/switch`)).status).toBe(401);
  });
});

describe('members', () => {
  it('lists members with user and role to any member and to a manage key, not to a read key', async () => {
    const owner = await signIn(t);
    const team = await teamOf(owner);
    const member = await join(owner, team.id, 'member');
    const list = await as(member, 'GET', '/v1/members');
    expect(list.status).toBe(200);
    expect(list.json.data).toEqual([
      {
        id: member.memberId,
        user: { id: member.userId, name: member.email.split('@')[0], email: member.email },
        role: 'member',
        joined_at: expect.stringMatching(/Z$/),
      },
      expect.objectContaining({ user: expect.objectContaining({ email: owner.email }), role: 'owner' }),
    ]);
    const a = await t.onboard();
    const keyList = await t.api('GET', '/v1/members', a.key);
    expect(keyList.json.data).toEqual([
      expect.objectContaining({ role: 'owner', user: expect.objectContaining({ email: a.email }) }),
    ]);
    expect(keyList.text).not.toContain(owner.email);
    const read = await t.onboard(a.email, { scopes: ['read'] });
    expect((await t.api('GET', '/v1/members', read.key)).status).toBe(403);
  });

  it('owners change any role; admins move people between member and admin only; members nothing', async () => {
    const owner = await signIn(t);
    const team = await teamOf(owner);
    const admin = await join(owner, team.id, 'admin');
    const m1 = await join(owner, team.id, 'member');
    const up = await as(admin, 'PATCH', `/v1/members/${m1.memberId}`, { role: 'admin' });
    expect(up.status).toBe(200);
    expect(up.json).toMatchObject({ id: m1.memberId, role: 'admin' });
    expect((await as(admin, 'PATCH', `/v1/members/${m1.memberId}`, { role: 'member' })).json.role).toBe('member');
    const toOwner = await as(admin, 'PATCH', `/v1/members/${m1.memberId}`, { role: 'owner' });
    expect(toOwner.status).toBe(403);
    expect(toOwner.json.error.hint).toBeTruthy();
    const ownerRow = (await as(owner, 'GET', '/v1/members')).json.data.find((m: any) => m.role === 'owner');
    expect((await as(admin, 'PATCH', `/v1/members/${ownerRow.id}`, { role: 'member' })).status).toBe(403);
    const byMember = await as(m1, 'PATCH', `/v1/members/${admin.memberId}`, { role: 'member' });
    expect(byMember.status).toBe(403);
    expect(byMember.json.error.hint).toMatch(/owner or admin/);
    // An owner may make another owner, then step down.
    expect((await as(owner, 'PATCH', `/v1/members/${admin.memberId}`, { role: 'owner' })).json.role).toBe('owner');
    expect((await as(owner, 'PATCH', `/v1/members/${ownerRow.id}`, { role: 'admin' })).json.role).toBe('admin');
    // The session sees its new role at once.
    expect((await as(owner, 'GET', '/v1/organizations')).json.data.find((o: any) => o.id === team.id).role).toBe(
      'admin',
    );
    expect((await as(owner, 'PATCH', `/v1/members/${ownerRow.id}`, { role: 'owner' })).status).toBe(403);
    expect((await as(owner, 'PATCH', `/v1/members/${m1.memberId}`, { role: 'root' })).status).toBe(422);
  });

  it('never leaves the organization without an owner (409 with a hint)', async () => {
    const owner = await signIn(t);
    const team = await teamOf(owner);
    const me = (await as(owner, 'GET', '/v1/members')).json.data[0];
    const demote = await as(owner, 'PATCH', `/v1/members/${me.id}`, { role: 'admin' });
    expect(demote.status).toBe(409);
    expect(demote.json.error).toMatchObject({ code: 'conflict', hint: expect.stringMatching(/owner/) });
    const leave = await as(owner, 'DELETE', `/v1/members/${me.id}`);
    expect(leave.status).toBe(409);
    expect(leave.json.error.hint).toMatch(/owner/);
    // Two owners demoting each other at once: one of them stays owner.
    const second = await join(owner, team.id, 'owner');
    const both = await Promise.all([
      as(owner, 'PATCH', `/v1/members/${second.memberId}`, { role: 'member' }),
      as(second, 'PATCH', `/v1/members/${me.id}`, { role: 'member' }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 403].sort());
    const owners = (await as(owner, 'GET', '/v1/members')).json.data.filter((m: any) => m.role === 'owner');
    expect(owners).toHaveLength(1);
  });

  it("keeps the personal organization's owner its owner", async () => {
    const owner = await signIn(t);
    const co = await join(owner, owner.personal.id, 'owner');
    const mine = (await as(co, 'GET', '/v1/members')).json.data.find((m: any) => m.user.id === owner.userId);
    const r = await as(co, 'PATCH', `/v1/members/${mine.id}`, { role: 'member' });
    expect(r.status).toBe(409);
    expect(r.json.error.hint).toMatch(/POST \/v1\/organizations/);
    expect((await as(co, 'DELETE', `/v1/members/${mine.id}`)).status).toBe(409);
    // The co-owner can leave.
    expect((await as(co, 'DELETE', `/v1/members/${co.memberId}`)).status).toBe(204);
  });

  it('removes members: anyone may leave and stays signed in; admins cannot remove owners', async () => {
    const owner = await signIn(t);
    const team = await teamOf(owner);
    const admin = await join(owner, team.id, 'admin');
    const member = await join(owner, team.id, 'member');
    const ownerRow = (await as(owner, 'GET', '/v1/members')).json.data.find((m: any) => m.role === 'owner');
    const denied = await as(admin, 'DELETE', `/v1/members/${ownerRow.id}`);
    expect(denied.status).toBe(403);
    expect((await as(member, 'DELETE', `/v1/members/${admin.memberId}`)).status).toBe(403);
    // A member leaves: the session moves back to their personal organization.
    expect((await as(member, 'DELETE', `/v1/members/${member.memberId}`)).status).toBe(204);
    const after = await as(member, 'GET', '/v1/me');
    expect(after.status).toBe(200);
    expect(after.json.organization.id).toBe(member.personal.id);
    expect(after.json.organizations.map((o: any) => o.id)).toEqual([member.personal.id]);
    // An owner removes an admin; the admin's session survives in their personal organization.
    expect((await as(owner, 'DELETE', `/v1/members/${admin.memberId}`)).status).toBe(204);
    const [s] = await t.deps.database.db.select().from(sessions).where(eq(sessions.userId, admin.userId));
    expect(s.activeOrgId).toBe(admin.personal.id);
    expect((await as(admin, 'GET', '/v1/members')).json.data).toHaveLength(1);
    expect((await as(owner, 'DELETE', `/v1/members/${admin.memberId}`)).status).toBe(404);
    expect((await as(owner, 'GET', '/v1/members')).json.data).toHaveLength(1);
  });

  it('role changes and removals need a session (403 with a hint for keys); other organizations are 404', async () => {
    const a = await t.onboard();
    const mine = (await t.api('GET', '/v1/members', a.key)).json.data[0];
    const patch = await t.api('PATCH', `/v1/members/${mine.id}`, a.key, { json: { role: 'admin' } });
    expect(patch.status).toBe(403);
    expect(patch.json.error.hint).toMatch(/sign-in/);
    const del = await t.api('DELETE', `/v1/members/${mine.id}`, a.key);
    expect(del.status).toBe(403);
    expect(del.json.error.hint).toMatch(/sign-in/);
    const s = await signIn(t);
    const other = await as(s, 'PATCH', `/v1/members/${mine.id}`, { role: 'member' });
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('not_found');
    expect((await as(s, 'DELETE', `/v1/members/${mine.id}`)).status).toBe(404);
    expect((await t.api('GET', '/v1/members', a.key)).json.data[0]).toEqual(mine);
    expect((await t.request('GET', '/v1/members')).status).toBe(401);
  });
});
