import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { cachedModel, learnMark, MODEL_CHECK_MS } from '../../server/spam/learn.js';
import { textsOf, tokensOf } from '../../server/spam/tokens.js';
import {
  counterKeysOf,
  deleteOldSightings,
  fingerprintHash,
  flushSightings,
  recentVelocity,
  type Velocity,
  velocityKeys,
} from '../../server/spam/velocity.js';
import { spamFacts, VELOCITY_LIMIT } from '../../server/spam/verdict.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, otherKey, orgId } = await tenantApp();
let ipSeq = 0;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

async function form(apiKey = key) {
  const f = await t.api('POST', '/v1/forms', apiKey, { json: { name: `Velocity ${Math.random()}` } });
  expect(f.status).toBe(201);
  return f.json.id as string;
}
function post(formId: string, json: Record<string, unknown>) {
  ipSeq += 1;
  return t.request('POST', `/s/${formId}`, {
    json,
    headers: { 'x-forwarded-for': `198.51.100.${ipSeq % 250}`, 'user-agent': UA },
  });
}
const reasonsOf = async (apiKey: string, submissionId: string) =>
  (await t.api('GET', `/v1/submissions/${submissionId}`, apiKey)).json.spam.reasons as string[];

describe('velocity across an organization’s forms', () => {
  it('the same text fires on the 5th post across two forms of an org, not across orgs', async () => {
    const [a, b] = [await form(), await form()];
    const other = await form(otherKey);
    const text = `We sell the best backlinks for your site, offer ${Math.random()}`;
    // Other people, the same text differently spaced and capitalized.
    const reasons: string[][] = [];
    for (let i = 0; i < 4; i += 1) {
      const r = await post(i % 2 ? b : a, { name: `Person ${i}`, message: i % 2 ? text.toUpperCase() : ` ${text} ` });
      expect(r.status).toBe(200);
      reasons.push(await reasonsOf(key, r.json.submission_id));
      // The other organization's same posts count only there.
      const o = await post(other, { name: `Person ${i}`, message: text });
      expect(await reasonsOf(otherKey, o.json.submission_id)).not.toContain('velocity_content');
    }
    for (const r of reasons) expect(r).not.toContain('velocity_content');
    const fifth = await post(b, { name: 'Person 5', message: text });
    const s = (await t.api('GET', `/v1/submissions/${fifth.json.submission_id}`, key)).json;
    expect(s.spam.reasons).toContain('velocity_content');
    expect(s.spam.signals.find((x: { code: string }) => x.code === 'velocity_content').text).toContain('5 times');
    // The other organization has seen the text 4 times: still nothing there.
    const o5 = await post(other, { name: 'Person 5', message: `${text} (another text)` });
    expect(await reasonsOf(otherKey, o5.json.submission_id)).not.toContain('velocity_content');
  });

  it('the same address fires on its 5th post, whatever the text; short texts are not fingerprinted', async () => {
    const [a, b] = [await form(), await form()];
    const email = `Repeat.${Math.random().toString(36).slice(2)}@example.com`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push(
        (await post(i % 2 ? b : a, { email: i % 2 ? email.toUpperCase() : email, message: `hi ${i}` })).json
          .submission_id,
      );
    }
    for (const id of ids.slice(0, 4)) expect(await reasonsOf(key, id)).not.toContain('velocity_address');
    const fifth = await reasonsOf(key, ids[4]);
    expect(fifth).toContain('velocity_address');
    expect(fifth).not.toContain('velocity_content');
  });

  it('on PostgreSQL a node adds the sightings other nodes wrote, from its own second sighting: a flood over several nodes is counted whole', async () => {
    const f = await form();
    const text = `Cheap followers for your account, offer ${Math.random()}`;
    for (let i = 0; i < 4; i += 1) await post(f, { name: `P${i}`, message: text });
    // This node writes what it saw twice or more (the timer does it a second later; PGlite, one
    // process, writes nothing).
    const written = await flushSightings(t.deps.database);
    if (t.deps.database.kind === 'pglite') expect(written).toBe(0);
    const keys = velocityKeys(orgId, { message: text });
    const [stored] = await t.deps.database.rows<{ n: number }>(
      sql`select coalesce(sum(n), 0)::int as n from spam_sightings where key = ${keys.fingerprint}`,
    );
    expect(Number(stored.n)).toBe(t.deps.database.kind === 'postgres' ? 4 : 0);
    // Another node: the same database, its own in-process counter (kept per Database object).
    const otherNode = { ...t.deps.database };
    const now = new Date();
    const counted = counterKeysOf(orgId, spamFacts({ message: text }));
    const first = await recentVelocity(otherNode, counted, now, 600);
    const second = await recentVelocity(otherNode, counted, now, 600);
    // Its first sighting costs no read: it knows only itself.
    expect(first?.sameContent).toBe(1);
    // From the second, PostgreSQL's written sightings of the other node count (4 + its own 2,
    // capped at the limit); PGlite, one process per database, keeps to the counter.
    expect(second?.sameContent).toBe(t.deps.database.kind === 'postgres' ? VELOCITY_LIMIT : 2);
  });

  it.runIf(t.deps.database.kind === 'postgres')(
    'writes only hashes, only of keys a node saw twice, none for a test submission; housekeeping, erasure and the organization delete them',
    async () => {
      const f = await form();
      const email = `ada.${Math.random().toString(36).slice(2)}@example.com`;
      const data = { email, message: `A message long enough to be fingerprinted ${Math.random()}.` };
      const keys = velocityKeys(orgId, data);
      expect(keys.fingerprint).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const sightings = async () =>
        t.deps.database.rows<{ key: string; n: number; org_id: string }>(
          sql`select key, n, org_id from spam_sightings where key in (${keys.fingerprint}, ${keys.address}) order by key`,
        );
      const once = await post(f, data);
      await post(f, { ...data, _test: true });
      await flushSightings(t.deps.database);
      expect(await sightings()).toEqual([]); // seen once (the test submission is not counted): nothing written
      await post(f, data);
      await post(f, data);
      await flushSightings(t.deps.database);
      const rows = await sightings();
      expect(rows.map((r) => [r.key, Number(r.n)]).sort()).toEqual(
        [
          [keys.address, 3],
          [keys.fingerprint, 3],
        ].sort(),
      );
      expect(JSON.stringify(rows)).not.toContain('ada');
      // The submission row keeps no hash any more (columns kept for older nodes only).
      const [row] = await t.deps.database.rows<{ spam_fingerprint: string | null; spam_address: string | null }>(
        sql`select spam_fingerprint, spam_address from submissions where id = ${once.json.submission_id}`,
      );
      expect(row).toEqual({ spam_fingerprint: null, spam_address: null });
      // Erasing the address deletes its sightings, not the text's.
      const erase = await t.api('POST', '/v1/submissions/erase', key, { json: { email } });
      expect(erase.status).toBe(200);
      expect((await sightings()).map((r) => r.key)).toEqual([keys.fingerprint]);
      // Housekeeping deletes what is older than the window.
      const later = { ...t.deps, now: () => new Date(Date.now() + 601_000) };
      expect((await deleteOldSightings(later)).deleted).toBeGreaterThanOrEqual(1);
      expect(await sightings()).toEqual([]);
      // And nothing is kept of a deleted organization (cascade).
      const org = await t.onboard();
      const orgKey = org.key;
      const of = (await t.api('POST', '/v1/forms', orgKey, { json: { name: 'Gone' } })).json.id as string;
      for (let i = 0; i < 2; i += 1) await post(of, data);
      await flushSightings(t.deps.database);
      const orgRows = async () =>
        (
          await t.deps.database.rows<{ n: number }>(
            sql`select count(*)::int as n from spam_sightings where org_id = ${org.verify.organization.id}`,
          )
        )[0].n;
      expect(Number(await orgRows())).toBe(2);
      await t.deps.database.rows(sql`delete from organizations where id = ${org.verify.organization.id}`);
      expect(Number(await orgRows())).toBe(0);
    },
  );

  it('nothing worth counting: no long text, no address', () => {
    expect(velocityKeys(orgId, { name: 'Ada', topic: 'sales' })).toEqual({ fingerprint: null, address: null });
  });
});

describe('the learning filter keeps an organization’s most used tokens', () => {
  it('prunes the rarest beyond the cap every 50 marks', async () => {
    const db = t.deps.database.db;
    const org = (await t.onboard()).verify.organization.id as string;
    const count = async () =>
      Number(
        (
          await t.deps.database.rows<{ n: number }>(
            sql`select count(*)::int as n from spam_tokens where org_id = ${org}`,
          )
        )[0].n,
      );
    const cap = 30;
    // Every mark teaches the tokens of "common shared" and those of two words of its own (and their
    // pairs): counted with the tokenizer itself, so a new kind of token does not break the arithmetic.
    const message = (i: number) => `common shared unique${i}a unique${i}b`;
    const tokensOfMark = (i: number) => new Set(tokensOf(textsOf({ message: message(i) })));
    const shared = [...tokensOfMark(0)].filter((tok) => tokensOfMark(1).has(tok)).length;
    const own = tokensOfMark(0).size - shared;
    expect(shared).toBeGreaterThanOrEqual(2);
    expect(own).toBeGreaterThanOrEqual(2);
    const mark = (i: number) =>
      db.transaction((tx) => learnMark(tx, org, `sb_prune_${i}`, { message: message(i) }, 'spam', cap));
    for (let i = 0; i < 49; i += 1) await mark(i);
    expect(await count()).toBe(shared + own * 49); // not pruned yet
    await mark(49); // the 50th mark crosses the multiple of 50: pruned to the cap
    expect(await count()).toBe(cap);
    const kept = await t.deps.database.rows<{ token: string }>(
      sql`select token from spam_tokens where org_id = ${org} and token in ('common', 'shared')`,
    );
    expect(kept.map((k) => k.token).sort()).toEqual(['common', 'shared']);
    for (let i = 50; i < 99; i += 1) await mark(i);
    expect(await count()).toBe(cap + own * 49); // grows again until the next multiple
    await mark(99);
    expect(await count()).toBe(cap);
  });
});

describe("intake's kept spam state", () => {
  it('answers the kept model and an in-process count without a promise, and shares one read between submissions that arrive while the model is checked', async () => {
    const node = { ...t.deps.database }; // a process of its own: nothing kept yet
    const nowMs = Date.now();
    const first = cachedModel(node, orgId, nowMs);
    const meanwhile = cachedModel(node, orgId, nowMs + 5);
    expect(first).toBeInstanceOf(Promise);
    // Both wait on the same version check: one read, however many submissions arrive during it.
    expect(meanwhile).toBe(first);
    const model = await first;
    // Until MODEL_CHECK_MS has passed, the kept model itself: intake awaits nothing for it.
    const kept = cachedModel(node, orgId, nowMs + MODEL_CHECK_MS - 1);
    expect(kept).not.toBeInstanceOf(Promise);
    expect(kept).toBe(model);
    // Then the version is checked again (a promise), and again shared.
    const later = cachedModel(node, orgId, nowMs + MODEL_CHECK_MS + 1);
    expect(later).toBeInstanceOf(Promise);
    expect(cachedModel(node, orgId, nowMs + MODEL_CHECK_MS + 2)).toBe(later);
    expect(await later).toBe(model);

    const keys = counterKeysOf(orgId, spamFacts({ message: `A first sighting of this text ${Math.random()}` }));
    const count = recentVelocity(node, keys, new Date(), 600);
    expect(count).not.toBeInstanceOf(Promise);
    expect(count).toMatchObject({ sameContent: 1 });
  });

  it('counts a key seen once, then twice, within the window only, and a retry once', async () => {
    const node = { ...t.deps.database, kind: 'pglite' as const }; // the in-process count alone
    const data = { message: `Counted in the window ${Math.random()}`, email: 'w@example.com' };
    const keys = counterKeysOf(orgId, spamFacts(data));
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000);
    const count = (s: number, record = true) => recentVelocity(node, keys, at(s), 600, record) as Velocity;
    expect(count(0)).toEqual({ sameContent: 1, sameAddress: 1 });
    expect(count(0, false)).toEqual({ sameContent: 1, sameAddress: 1 }); // the same post decided again
    expect(count(700)).toEqual({ sameContent: 1, sameAddress: 1 }); // the first one left the window
    expect(count(710)).toEqual({ sameContent: 2, sameAddress: 2 });
    expect(count(710, false)).toEqual({ sameContent: 2, sameAddress: 2 });
    for (let s = 720; s < 760; s += 10) count(s);
    expect(count(760)).toEqual({ sameContent: VELOCITY_LIMIT, sameAddress: VELOCITY_LIMIT });
    // Long after: all of them left the window, and it is a first sighting again.
    expect(count(2000)).toEqual({ sameContent: 1, sameAddress: 1 });
    expect(count(2001)).toEqual({ sameContent: 2, sameAddress: 2 });
  });
});

describe('the velocity keys', () => {
  const reference = (orgId: string, kind: string, value: string) =>
    crypto.createHash('sha256').update(`${orgId}\n${kind}\n${value}`).digest().subarray(0, 16).toString('base64url');

  it('are the first 16 bytes of the SHA-256, base64url, as stored before (any text, any org)', () => {
    for (let i = 0; i < 2000; i += 1) {
      const value = crypto.randomBytes(1 + (i % 97)).toString(i % 2 ? 'latin1' : 'base64');
      expect(fingerprintHash(`org_${i}`, i % 3 ? 'text' : 'address', value)).toBe(
        reference(`org_${i}`, i % 3 ? 'text' : 'address', value),
      );
    }
  });

  it('hash the same text however it is spaced or capitalized', () => {
    const base = velocityKeys(orgId, { message: 'Buy cheap followers now for your account today' });
    for (const spaced of [
      'BUY cheap followers now for your account today',
      '  Buy  cheap\tfollowers\nnow for your account today ',
      'Buy\u00a0cheap followers now for\u3000your account today',
    ]) {
      expect(velocityKeys(orgId, { message: spaced })).toEqual(base);
    }
    expect(base.fingerprint).toBe(reference(orgId, 'text', 'buy cheap followers now for your account today'));
    expect(velocityKeys(orgId, { message: 'Buy cheap followers later for your account today' })).not.toEqual(base);
  });

  it('counted in the process by hashes of their own: equal exactly when the stored keys are, however the texts are written', () => {
    // Variants of a few texts (spacing, capitals, non-ASCII, an address, several texts in either
    // order): two submissions share a counter key exactly when they share the stored (SHA-256) key.
    const bases = [
      'Buy cheap followers now for your account today',
      'Buy cheap followers later for your account today',
      'Buy cheap followers now for your account',
      'Café Ünïcode followers for your account',
      'Write to x@y.io about your account today',
      'someone.long@example.com',
      'too short to count',
    ];
    const spaces = [' ', ' ', ' ', '  ', '\t', '\n ', '\u00a0', '\u3000'];
    let seed = 7;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const variant = (base: string) =>
      (rnd(4) === 0 ? ' ' : '') +
      base
        .split(' ')
        .map((w) => (rnd(3) === 0 ? w.toUpperCase() : rnd(3) === 0 ? w.toLowerCase() : w))
        .map((w, i, all) => w + (i < all.length - 1 ? spaces[rnd(spaces.length)] : ''))
        .join('') +
      (rnd(4) === 0 ? '\n' : '');
    const samples: Record<string, unknown>[] = [];
    for (let i = 0; i < 3000; i += 1) {
      const data: Record<string, unknown> = { message: variant(bases[rnd(bases.length)]) };
      if (rnd(3) === 0) data[rnd(2) ? 'other' : 'another'] = variant(bases[rnd(bases.length)]);
      if (rnd(4) === 0) data.email = rnd(2) ? 'SomeOne.Long@Example.com' : 'bob@example.org';
      samples.push(data);
    }
    const stored = new Map<string, string>();
    const counted = new Map<string, string>();
    for (const data of samples) {
      const facts = spamFacts(data);
      const s = velocityKeys(orgId, data);
      const c = counterKeysOf(orgId, facts);
      expect(c.fingerprint === null).toBe(s.fingerprint === null);
      expect(c.address === null).toBe(s.address === null);
      for (const [mine, theirs] of [
        [`f${c.fingerprint}`, `f${s.fingerprint}`],
        [`a${c.address}`, `a${s.address}`],
      ]) {
        // one stored key per counter key, and one counter key per stored key
        expect(counted.get(mine) ?? theirs).toBe(theirs);
        expect(stored.get(theirs) ?? mine).toBe(mine);
        counted.set(mine, theirs);
        stored.set(theirs, mine);
      }
    }
    // The same text in another organization is another key.
    const data = { message: 'Buy cheap followers now for your account today' };
    expect(counterKeysOf('org_other', spamFacts(data)).fingerprint).not.toBe(
      counterKeysOf(orgId, spamFacts(data)).fingerprint,
    );
    // Many variants of each text, and texts with and without a stored key (fingerprints and addresses).
    expect(counted.size).toBeGreaterThan(20);
    expect(counted.size).toBeLessThan(100);
  });
});
