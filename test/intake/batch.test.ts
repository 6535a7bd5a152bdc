import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../server/db/client.js';
import { type BatchItem, IntakeBatcher } from '../../server/intake/batch.js';
import { intakeEntry } from '../../server/intake/cache.js';
import { instantPayload } from '../../server/intake/plan.js';
import { newId } from '../../shared/ids.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';

/**
 * Intake groups the writes of requests read together into one statement. Each write must still
 * come out as if it went alone: stored, a repeat of its idempotency key, stale, or failed for its
 * own bad row only.
 */
let t: TestEnv;
let key: string;
let formId: string;
let orgId: string;
let gen: number;
/** the test database, counting the statements the batcher sends */
let counted: Database;
let statements = 0;

const rows = <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => t.deps.database.rows<T>(q);

beforeAll(async () => {
  t = await startTestApp();
  key = (await t.onboard()).key;
  formId = (await t.api('POST', '/v1/forms', key, { json: { name: 'Batched' } })).json.id;
  const entry = await intakeEntry(t.deps.database, formId);
  orgId = entry.org.id;
  gen = entry.gen;
  const db = t.deps.database;
  counted = {
    ...db,
    prepared: (text, params) => {
      statements += 1;
      return db.prepared(text, params);
    },
  };
});
afterAll(() => t.close());

function item(data: Record<string, unknown>, opts: { idem?: string; gen?: number } = {}): BatchItem {
  const id = newId('submission');
  const at = new Date().toISOString();
  return {
    submission: {
      id,
      org_id: orgId,
      form_id: formId,
      status: 'received',
      quarantine_reason: null,
      test: false,
      data,
      form_schema_version: null,
      issues: null,
      spam: { score: 0, reasons: [] },
      meta: {},
      client_ip: '127.0.0.1',
      idempotency_key: opts.idem ?? null,
      subject_hint: null,
      received_at: at,
      gen: opts.gen ?? gen,
    },
    deliveries: [],
    events: [
      {
        id: newId('event'),
        org_id: orgId,
        type: 'submission.received',
        subject: { submission_id: id, form_id: formId },
        data: {},
        created_at: at,
        sid: id,
      },
    ],
    hooks: [],
  };
}

async function stored(items: BatchItem[]) {
  const ids = items.map((i) => i.submission.id as string);
  const found = await rows<{ id: string }>(sql`select id from submissions where id in ${ids}`);
  const events = await rows<{ sid: string }>(
    sql`select subject->>'submission_id' as sid from events where subject->>'submission_id' in ${ids}`,
  );
  return { submissions: new Set(found.map((r) => r.id)), events: new Set(events.map((r) => r.sid)) };
}

describe('intake batcher', () => {
  it('writes the requests of one turn in one statement, each with its event', async () => {
    const b = new IntakeBatcher(counted, 1);
    const items = Array.from({ length: 30 }, (_, i) => item({ n: i }));
    statements = 0;
    const results = await Promise.all(items.map((i) => b.write(i)));
    expect(results).toEqual(items.map(() => 'stored'));
    expect(statements).toBe(1);
    const s = await stored(items);
    expect(s.submissions.size).toBe(30);
    expect(s.events.size).toBe(30);
  });

  it('groups what comes while a statement is under way, and goes alone when nothing waits', async () => {
    const b = new IntakeBatcher(counted, 1);
    statements = 0;
    const first = b.write(item({ alone: true }));
    await new Promise((r) => setImmediate(r)); // the first is under way now
    const later = Array.from({ length: 10 }, (_, i) => item({ later: i }));
    const results = await Promise.all([first, ...later.map((i) => b.write(i))]);
    expect(results.every((r) => r === 'stored')).toBe(true);
    expect(statements).toBe(2);
  });

  it('puts two writes of one idempotency key in different statements: the second is a repeat', async () => {
    const b = new IntakeBatcher(counted, 1);
    statements = 0;
    const one = item({ k: 1 }, { idem: 'batch-key' });
    const two = item({ k: 2 }, { idem: 'batch-key' });
    const other = item({ k: 3 });
    expect(await Promise.all([b.write(one), b.write(two), b.write(other)])).toEqual(['stored', 'repeat', 'stored']);
    expect(statements).toBe(2);
    const s = await stored([one, two, other]);
    expect([...s.submissions].sort()).toEqual([one.submission.id, other.submission.id].sort());
    expect(s.events.has(two.submission.id as string)).toBe(false);
  });

  it('answers stale for a write decided with an old gen, and stores the rest of its group', async () => {
    const b = new IntakeBatcher(counted, 1);
    const old = item({ old: true }, { gen: gen - 1 });
    const fresh = item({ fresh: true });
    expect(await Promise.all([b.write(old), b.write(fresh)])).toEqual(['stale', 'stored']);
    const s = await stored([old, fresh]);
    expect(s.submissions.has(old.submission.id as string)).toBe(false);
    expect(s.events.has(old.submission.id as string)).toBe(false);
    expect(s.submissions.has(fresh.submission.id as string)).toBe(true);
  });

  it('fails only the write whose row the database refuses; the others of its group are stored', async () => {
    const b = new IntakeBatcher(counted, 1);
    const good = [item({ g: 1 }), item({ g: 2 })];
    const bad = item({ text: 'nul \u0000 inside' }); // jsonb cannot hold U+0000
    const settled = await Promise.allSettled([b.write(good[0]), b.write(bad), b.write(good[1])]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const s = await stored([...good, bad]);
    expect(s.submissions.size).toBe(2);
    expect(s.submissions.has(bad.submission.id as string)).toBe(false);
  });

  it('fails a whole group, and the writes waiting behind it, at once when the database is out of reach', async () => {
    let calls = 0;
    const down: Database = {
      ...t.deps.database,
      prepared: async () => {
        calls += 1;
        await new Promise((r) => setTimeout(r, 50)); // a connection attempt that fails
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      },
    };
    const b = new IntakeBatcher(down, 1);
    const group = [b.write(item({ d: 1 })), b.write(item({ d: 2 })), b.write(item({ d: 3 }))];
    await new Promise((r) => setTimeout(r, 10)); // the group is under way
    const behind = [b.write(item({ d: 4 })), b.write(item({ d: 5 }))];
    const settled = await Promise.allSettled([...group, ...behind]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected', 'rejected']);
    expect(calls).toBe(1);
  });

  it('stores concurrent submissions over HTTP, each once with its own answer', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => t.request('POST', `/s/${formId}`, { json: { seq: i } })),
    );
    expect(answers.every((r) => r.status === 200 && r.json.ok === true)).toBe(true);
    const ids = answers.map((r) => r.json.submission_id as string);
    expect(new Set(ids).size).toBe(40);
    const back = await rows<{ id: string; seq: number }>(
      sql`select id, (data->>'seq')::int as seq from submissions where id in ${ids}`,
    );
    expect(new Map(back.map((r) => [r.id, r.seq]))).toEqual(new Map(ids.map((id, i) => [id, i])));
  });

  it('stores the instant payload it builds from the submission row exactly as planned', async () => {
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'payload check', config: { url: 'https://example.com/hook' } },
    });
    const form = await t.api('POST', '/v1/forms', key, { json: { name: 'Payload check' } });
    await t.api('POST', '/v1/routes', key, { json: { form_id: form.json.id, destination_id: dest.json.id } });
    const data = { name: 'Zoë "Q" <z@example.com>', n: 1.5, ok: false, tags: ['a', 'b'], nested: { x: null } };
    const r = await t.request('POST', `/s/${form.json.id}`, { json: data });
    expect(r.status).toBe(200);
    const [sub] = await rows<{ id: string; status: string; test: boolean; data: unknown; meta: unknown; at: Date }>(
      sql`select id, status, test, data, meta, received_at as at from submissions where id = ${r.json.submission_id}`,
    );
    const [d] = await rows<{ id: string; payload: unknown }>(
      sql`select id, payload from deliveries where submission_id = ${sub.id}`,
    );
    const slug = (await t.api('GET', `/v1/forms/${form.json.id}`, key)).json.slug;
    expect(d.payload).toEqual(
      instantPayload(d.id, {
        orgId,
        form: { id: form.json.id, slug, tags: [], projectId: '' },
        submission: {
          id: sub.id,
          status: sub.status,
          test: sub.test,
          data: sub.data as Record<string, unknown>,
          meta: sub.meta as Record<string, unknown>,
          receivedAt: new Date(sub.at),
        },
        now: new Date(sub.at),
      }),
    );
    expect((d.payload as { data: unknown }).data).toEqual(data);
  });
});
