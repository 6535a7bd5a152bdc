import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { systemWebhooks } from '../../server/db/schema.js';
import { claim } from '../../server/worker/claim.js';
import { IntakeLoad } from '../../server/worker/intake-load.js';
import { releaseClaims } from '../../server/worker/release.js';
import { settleSent } from '../../server/worker/settle-sent.js';
import { Worker } from '../../server/worker/worker.js';
import { newId } from '../../shared/ids.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { submitMany, tenant } from '../helpers/quota.js';
import { until } from '../helpers/receiver.js';

/**
 * The batched pipeline (claims of many rows, a queue per destination, successes recorded together)
 * against real PGlite (or TEST_DATABASE_URL) and a real receiver on loopback.
 */

type Answer = { status: number; hold?: boolean };

/** A receiver that counts the requests it holds at once; `hold` leaves a request unanswered. */
async function receiver(answer: (id: string, n: number) => Answer = () => ({ status: 200 })) {
  const hits: { id: string; body: any }[] = [];
  let inFlight = 0;
  let most = 0;
  const server = http.createServer((req, res) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const id = String(req.headers['service-delivery']);
      hits.push({ id, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const a = answer(id, hits.length);
      if (a.hold) return;
      // Answered a moment later, so that sends overlap and the limit per destination is exercised.
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(a.status, { 'content-type': 'text/plain' });
        res.end(a.status < 300 ? 'ok' : 'no');
      }, 1);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits,
    get most() {
      return most;
    },
    ids: () => hits.map((h) => h.id),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

type Rx = Awaited<ReturnType<typeof receiver>>;

let t: TestEnv | null = null;
const rxs: Rx[] = [];
afterEach(async () => {
  // Receivers first: a request one of them holds open would otherwise keep the app's close waiting.
  for (const r of rxs.splice(0)) await r.close();
  await t?.close();
  t = null;
});

async function setup(answer?: (id: string, n: number) => Answer, env: Record<string, string> = {}) {
  t = await startTestApp({ WORKER_PER_DESTINATION: '4', ...env });
  const rx = await receiver(answer);
  rxs.push(rx);
  const a = await tenant(t, [{ url: rx.url }]);
  return { t, rx, ...a };
}

interface Row {
  id: string;
  status: string;
  attempts: number;
  submission_id: string;
  destination_id: string;
  last_response: any;
  sent_at: string | null;
}

const rowsOf = (env: TestEnv, orgId: string) =>
  env.deps.database.rows<Row>(
    sql`select id, status, attempts, submission_id, destination_id, last_response, sent_at
        from deliveries where org_id = ${orgId} order by id`,
  );

const allSent = (env: TestEnv, orgId: string, n: number, ms = 60_000) =>
  until(
    `${n} deliveries sent`,
    async () => {
      const rows = await rowsOf(env, orgId);
      return rows.length === n && rows.every((r) => r.status === 'sent') && rows;
    },
    ms,
  );

const count = (xs: string[]) => {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
};

describe('the batched delivery pipeline', () => {
  it('drains a backlog to one destination: each delivery once, within the limit per destination, each recorded with its own event', {
    timeout: 120_000,
  }, async () => {
    const { t, rx, orgId, formId } = await setup();
    const N = 300;
    await submitMany(t, formId, N);
    await t.startWorker();
    const rows = await allSent(t, orgId, N);

    const seen = count(rx.ids());
    expect(seen.size).toBe(N);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(rx.most).toBeLessThanOrEqual(4);
    for (const r of rows) {
      expect(r.attempts).toBe(1);
      expect(r.last_response).toMatchObject({ ok: true, status_code: 200, error: null });
      expect(r.sent_at).not.toBeNull();
    }
    // The body each delivery was sent with is its own snapshot.
    for (const h of rx.hits) expect(h.body.id).toBe(h.id);

    const events = await t.deps.database.rows<{ subject: any; data: any }>(
      sql`select subject, data from events where org_id = ${orgId} and type = 'delivery.sent'`,
    );
    expect(events).toHaveLength(N);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const e of events) {
      const r = byId.get(e.subject.delivery_id);
      expect(r).toBeDefined();
      expect(e.subject).toMatchObject({
        submission_id: r?.submission_id,
        destination_id: r?.destination_id,
        form_id: formId,
      });
      expect(e.data).toMatchObject({ attempts: 1, status_code: 200, error: null });
    }
    const [dest] = await t.deps.database.rows<{ health: string; verified: boolean }>(
      sql`select health, verified from destinations where org_id = ${orgId}`,
    );
    expect(dest).toMatchObject({ health: 'ok', verified: true });
    // The first backlog of a fresh database had the outbox analyzed (OutboxStats).
    await until(
      'deliveries analyzed',
      async () => {
        const [s] = await t.deps.database.rows<{ analyzed: boolean }>(
          sql`select (last_analyze is not null or last_autoanalyze is not null) as analyzed
              from pg_stat_user_tables where relname = 'deliveries'`,
        );
        return s?.analyzed === true;
      },
      30_000,
    );
  });

  it('records successes and failures finishing together: failures retry, successes are sent once', {
    timeout: 120_000,
  }, async () => {
    // Every third delivery fails its first attempt.
    const tries = new Map<string, number>();
    const { t, rx, orgId, formId } = await setup((id, n) => {
      tries.set(id, (tries.get(id) ?? 0) + 1);
      return { status: n % 3 === 0 && tries.get(id) === 1 ? 500 : 200 };
    });
    const N = 150;
    await submitMany(t, formId, N);
    await t.startWorker();
    const rows = await allSent(t, orgId, N);

    const failedOnce = [...tries].filter(([, n]) => n === 2).map(([id]) => id);
    expect(failedOnce.length).toBeGreaterThan(0);
    expect([...tries.values()].every((n) => n === 1 || n === 2)).toBe(true);
    for (const r of rows) expect(r.attempts).toBe(tries.get(r.id));
    expect(rx.hits).toHaveLength(N + failedOnce.length);
    const [dest] = await t.deps.database.rows<{ health: string; consecutive_failures: number }>(
      sql`select health, consecutive_failures from destinations where org_id = ${orgId}`,
    );
    expect(dest).toMatchObject({ health: 'ok', consecutive_failures: 0 });
  });

  it('fans every delivery.sent of a batch out to a subscribed system webhook', { timeout: 120_000 }, async () => {
    const { t, orgId, formId } = await setup();
    const hook = await receiver();
    rxs.push(hook);
    const whId = newId('webhook');
    await t.deps.database.db
      .insert(systemWebhooks)
      .values({ id: whId, orgId, url: hook.url, events: ['delivery.sent'], secret: 'sys_secret' });
    const N = 60;
    await submitMany(t, formId, N);
    await t.startWorker();
    await allSent(t, orgId, N);
    await until(
      'every system-webhook delivery sent',
      async () => {
        const r = await t.deps.database.rows<{ status: string }>(
          sql`select status from system_webhook_deliveries where webhook_id = ${whId}`,
        );
        return r.length === N && r.every((x) => x.status === 'sent');
      },
      60_000,
    );
    const events = await t.deps.database.rows<{ id: string; subject: any }>(
      sql`select id, subject from events where org_id = ${orgId} and type = 'delivery.sent'`,
    );
    expect(events).toHaveLength(N);
    // Each event reached the hook once, as the event log has it.
    const got = new Map(hook.hits.map((h) => [h.body.id, h.body]));
    expect(hook.hits).toHaveLength(N);
    for (const e of events) {
      expect(got.get(e.id)).toMatchObject({ id: e.id, type: 'delivery.sent', subject: e.subject });
    }
  });

  it('a long backlog for one destination does not hold up a new delivery to another', {
    timeout: 60_000,
  }, async () => {
    // Destination A has far more due rows than one claim looks at.
    const { t, rx, orgId } = await setup();
    const [destA] = await t.deps.database.rows<{ id: string; route_id: string }>(
      sql`select d.id, r.id as route_id from destinations d join routes r on r.destination_id = d.id where d.org_id = ${orgId}`,
    );
    const N = 3000; // more than a claim's window (at most 4 × 512 rows)
    const rows = Array.from({ length: N }, (_, i) => ({
      id: newId('delivery'),
      sub: newId('submission'),
      at: new Date(Date.now() - 60_000 + i).toISOString(),
    }));
    await t.deps.database.rows(sql`
      insert into deliveries (id, org_id, submission_id, route_id, destination_id, status, max_attempts, next_attempt_at, payload)
      select r.id, ${orgId}, r.sub, ${destA.route_id}, ${destA.id}, 'pending', 10, r.at, jsonb_build_object('id', r.id)
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(id text, sub text, at timestamptz)`);
    const other = await receiver();
    rxs.push(other);
    const b = await tenant(t, [{ url: other.url }]);
    await t.startWorker();
    await until('destination A under way', async () => rx.hits.length >= 50, 30_000);
    await submitMany(t, b.formId, 1);
    await until('the delivery to B', async () => other.hits.length === 1, 30_000);
    // B did not wait until A's backlog was (nearly) drained.
    expect(rx.hits.length).toBeLessThan(N / 2);
    // What A received meanwhile, each once (draining a backlog whole, each once, is the test above).
    expect(Math.max(...count(rx.ids()).values())).toBe(1);
  });

  it('does not claim on every wake while the backlog holds only rows of a full queue', {
    timeout: 60_000,
  }, async () => {
    // The receiver answers nothing: A's four send slots stay taken and its queue stays full.
    const { t, rx, orgId } = await setup(() => ({ status: 200, hold: true }));
    const [dest] = await t.deps.database.rows<{ id: string; route_id: string }>(
      sql`select d.id, r.id as route_id from destinations d join routes r on r.destination_id = d.id where d.org_id = ${orgId}`,
    );
    const rows = Array.from({ length: 200 }, () => ({ id: newId('delivery'), sub: newId('submission') }));
    await t.deps.database.rows(sql`
      insert into deliveries (id, org_id, submission_id, route_id, destination_id, status, max_attempts, next_attempt_at, payload)
      select r.id, ${orgId}, r.sub, ${dest.route_id}, ${dest.id}, 'pending', 10, now() - interval '1 minute', jsonb_build_object('id', r.id)
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(id text, sub text)`);
    const worker = await t.startWorker();
    await until('A’s slots taken', async () => rx.hits.length >= 4, 30_000);
    // Claims now find only A's rows while A has no room: each pauses the wakes that follow it (200
    // ms), and a wake in the pause is kept for its end. Forty wakes, each one more than the claim gap
    // (20 ms) after the last: without the pause every one of them would run a claim.
    const from = worker.claimsRun.delivery;
    const WAKES = 40;
    for (let i = 0; i < WAKES; i++) {
      worker.wake();
      await new Promise((r) => setTimeout(r, 25));
    }
    const during = worker.claimsRun.delivery - from;
    expect(during).toBeGreaterThan(0);
    expect(during).toBeLessThanOrEqual(WAKES / 2);
    // And nothing more was sent: the claims that ran took no row of A's full queue.
    expect(rx.hits.length).toBe(4);
  });

  it('takes deliveries intake hands over already claimed, and sends each once', { timeout: 120_000 }, async () => {
    const { t, rx, orgId, formId } = await setup(undefined, { WORKER_TICK_MS: '60000' });
    const worker = await t.startWorker();
    t.deps.handoff = worker.handoff;
    // The first one is handed over: written `sending`, its attempt counted, never `pending` (with
    // no wake and no tick, a claim could not have taken it).
    const wake = t.deps.wake;
    t.deps.wake = () => {};
    const [first] = await submitMany(t, formId, 1);
    t.deps.wake = wake;
    const [row] = await t.deps.database.rows<{ status: string; attempts: number }>(
      sql`select status, attempts from deliveries where submission_id = ${first.id}`,
    );
    expect(['sending', 'sent']).toContain(row.status);
    expect(row.attempts).toBe(1);
    // A burst: more than the destination's queue takes at once, so some go through a claim.
    const N = 200;
    await submitMany(t, formId, N - 1);
    const rows = await allSent(t, orgId, N);
    for (const r of rows) expect(r.attempts).toBe(1);
    const seen = count(rx.ids());
    expect(seen.size).toBe(N);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(rx.most).toBeLessThanOrEqual(4);
  });

  it('yields to intake while requests queue: a send per ten answered, claims deferred, then the rest at once', {
    timeout: 120_000,
  }, async () => {
    const { t, rx, orgId, formId } = await setup(undefined, { WORKER_TICK_MS: '60000' });
    // Intake's load judged on a clock of the test's own: stopped, the windows never pass.
    let now = 0;
    const load = new IntakeLoad({ clock: () => now });
    const worker = await t.startWorker(load);
    const claims = () => worker.claimsRun.delivery + worker.claimsRun.hook;
    // A burst under way: twenty requests in flight, eight of them answered.
    for (let i = 0; i < 20; i++) load.started();
    for (let i = 0; i < 8; i++) load.finished();
    expect(load.busy()).toBe(true);
    const claimsBefore = claims();
    // 30 more answered requests (these submissions): three sends may start.
    const N = 30;
    await submitMany(t, formId, N);
    await until('three sends', async () => rx.hits.length >= 3, 30_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.hits.length).toBe(3);
    // Intake's wakes wait for the burst to end; a queue running low after a send may claim.
    expect(claims() - claimsBefore).toBeLessThanOrEqual(3);
    // Every submission is stored all the same, its delivery waiting.
    const rows = await rowsOf(t, orgId);
    expect(rows).toHaveLength(N);
    // The burst is over: the rest go at once, each once.
    now += 1000;
    await allSent(t, orgId, N);
    const seen = count(rx.ids());
    expect(seen.size).toBe(N);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });

  it('records a success at once while another destination still holds a send open', { timeout: 60_000 }, async () => {
    // The held send would time out only after a minute.
    const { t, formId } = await setup(() => ({ status: 200, hold: true }), { WEBHOOK_TIMEOUT_MS: '60000' });
    const fast = await receiver();
    rxs.push(fast);
    const b = await tenant(t, [{ url: fast.url }]);
    await t.startWorker();
    await submitMany(t, formId, 1);
    const [sub] = await submitMany(t, b.formId, 1);
    await until(
      'the delivery to the answering destination recorded as sent',
      async () => {
        const [r] = await t.deps.database.rows<{ status: string }>(
          sql`select status from deliveries where submission_id = ${sub.id}`,
        );
        return r?.status === 'sent';
      },
      20_000,
    );
  });

  it('keeps every send slot of a slow destination busy', { timeout: 60_000 }, async () => {
    // Nothing is answered (sends would time out only after a minute).
    const { t, rx, formId } = await setup(() => ({ status: 200, hold: true }), { WEBHOOK_TIMEOUT_MS: '60000' });
    await t.startWorker();
    await submitMany(t, formId, 3);
    await until('three sends out', async () => rx.hits.length === 3, 20_000);
    await submitMany(t, formId, 3);
    await until('the fourth send out', async () => rx.hits.length === 4, 20_000);
    expect(rx.most).toBe(4);
  });

  it('two workers on one database send each delivery once', { timeout: 120_000 }, async () => {
    const { t, rx, orgId, formId } = await setup();
    const N = 200;
    await submitMany(t, formId, N);
    const second = new Worker(t.deps, { config: t.deps.config, mailer: t.deps.mailer, outbound: t.deps.outbound });
    await Promise.all([t.startWorker(), second.start()]);
    try {
      await allSent(t, orgId, N);
    } finally {
      await second.stop(2000);
    }
    const seen = count(rx.ids());
    expect(seen.size).toBe(N);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });

  it('on stop hands back what it claimed but did not finish: nothing is left sending', {
    timeout: 120_000,
  }, async () => {
    // The first answers come at once (the destination looks fast, so its queue grows), then the
    // receiver holds every request open.
    const { t, rx, orgId, formId } = await setup((_id, n) => (n <= 20 ? { status: 200 } : { status: 200, hold: true }));
    const N = 200;
    await submitMany(t, formId, N);
    const worker = await t.startWorker();
    await until('requests held open', async () => rx.hits.length >= 24, 30_000);
    await worker.stop(300);

    const rows = await rowsOf(t, orgId);
    const sent = rows.filter((r) => r.status === 'sent');
    const pending = rows.filter((r) => r.status === 'pending');
    expect(sent.length + pending.length).toBe(N);
    expect(sent.length).toBe(20);
    for (const r of sent) expect(r.attempts).toBe(1);
    // Handed back: the attempt their claim counted is taken back, and they are due at once.
    for (const r of pending) expect(r.attempts).toBe(0);
  });
});

describe('recording and handing back claimed rows', () => {
  it('a batch records only rows still claimed by its attempt; another worker’s rows and their events are left alone', async () => {
    const { t, orgId, formId } = await setup();
    const whId = newId('webhook');
    await t.deps.database.db
      .insert(systemWebhooks)
      .values({ id: whId, orgId, url: 'http://127.0.0.1:9/hook', events: ['delivery.sent'] });
    await submitMany(t, formId, 6);
    const now = new Date();
    const claimed = await claim(t.deps.database, 'delivery', {
      now: new Date(now.getTime() + 1000),
      limit: 100,
      perTarget: 100,
      busy: [],
      leaseMs: 60_000,
    });
    expect(claimed).toHaveLength(6);
    // Another worker took the last two over (their lease ran out, it claimed them again).
    const taken = claimed.slice(4).map((c) => c.id);
    await t.deps.database.rows(
      sql`update deliveries set attempts = attempts + 1 where id in (${sql.join(
        taken.map((id) => sql`${id}`),
        sql`, `,
      )})`,
    );
    const ok = { ok: true, status_code: 200, latency_ms: 1, response_excerpt: 'ok', error: null, retryable: true };
    const r = await settleSent(
      t.deps,
      'delivery',
      claimed.map((row) => ({ kind: 'delivery' as const, row, result: ok, at: now })),
    );
    expect(r).toEqual({ settled: 4, dispatched: 4 });
    const rows = await rowsOf(t, orgId);
    for (const row of rows) expect(row.status).toBe(taken.includes(row.id) ? 'sending' : 'sent');
    const events = await t.deps.database.rows<{ id: string; subject: any }>(
      sql`select id, subject from events where org_id = ${orgId} and type = 'delivery.sent'`,
    );
    expect(events.map((e) => e.subject.delivery_id).sort()).toEqual(
      claimed
        .slice(0, 4)
        .map((c) => c.id)
        .sort(),
    );
    const fanned = await t.deps.database.rows<{ event_id: string; payload: any }>(
      sql`select event_id, payload from system_webhook_deliveries where webhook_id = ${whId}`,
    );
    expect(fanned.map((f) => f.event_id).sort()).toEqual(events.map((e) => e.id).sort());
    for (const f of fanned) expect(f.payload).toMatchObject({ id: f.event_id, type: 'delivery.sent' });
  });

  it('handing back makes rows due at once with the attempt taken back, and leaves rows claimed again alone', async () => {
    const { t, orgId, formId } = await setup();
    await submitMany(t, formId, 3);
    const now = new Date(Date.now() + 1000);
    const claimed = await claim(t.deps.database, 'delivery', {
      now,
      limit: 10,
      perTarget: 10,
      busy: [],
      leaseMs: 60_000,
    });
    expect(claimed.map((c) => c.attempts)).toEqual([1, 1, 1]);
    const [a, b, c] = claimed;
    // c was meanwhile claimed again elsewhere: its attempt count moved on.
    await t.deps.database.rows(sql`update deliveries set attempts = 2 where id = ${c.id}`);
    await releaseClaims(
      t.deps,
      [a, b, c].map((x) => ({ id: x.id, kind: 'delivery' as const, attempts: x.attempts })),
      now,
    );
    const rows = new Map((await rowsOf(t, orgId)).map((r) => [r.id, r]));
    expect(rows.get(a.id)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(rows.get(b.id)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(rows.get(c.id)).toMatchObject({ status: 'sending', attempts: 2 });
    const again = await claim(t.deps.database, 'delivery', {
      now,
      limit: 10,
      perTarget: 10,
      busy: [],
      leaseMs: 60_000,
    });
    expect(again.map((x) => x.id).sort()).toEqual([a.id, b.id].sort());
  });
});
