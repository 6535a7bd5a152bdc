/**
 * Child-process entry point: the reference server the service is compared with. Hono on
 * @hono/node-server; each POST /s/{formId} is parsed as JSON and stored as one submission row
 * (jsonb), one delivery row and one event row in ONE statement (data-modifying CTEs), then answered.
 * postgres.js runs the statement as a named prepared statement (pool of 10, as the service uses);
 * with BASELINE_PGLITE_DIR it runs on PGlite in this process instead (there is no server to reach).
 *
 * Env: BASELINE_PORT, and BASELINE_DATABASE_URL or BASELINE_PGLITE_DIR.
 * GET /count/{formId} answers {"stored": n} so that the bench can check what was stored.
 */
import crypto from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import postgres from 'postgres';

const DDL = `
create table if not exists bl_submissions (
  id text primary key, form_id text not null, status text not null,
  data jsonb not null, meta jsonb not null, received_at timestamptz not null default now());
create index if not exists bl_submissions_form on bl_submissions (form_id, id);
create table if not exists bl_deliveries (
  id text primary key, submission_id text not null, status text not null, payload jsonb not null,
  next_attempt_at timestamptz, created_at timestamptz not null default now());
create index if not exists bl_deliveries_due on bl_deliveries (status, next_attempt_at);
create table if not exists bl_events (
  id text primary key, type text not null, subject jsonb not null, data jsonb not null,
  created_at timestamptz not null default now());
`;

const INSERT = `
with s as (
  insert into bl_submissions (id, form_id, status, data, meta)
  values ($1, $2, 'received', $3::jsonb, $4::jsonb)
  returning id, form_id, data
), d as (
  insert into bl_deliveries (id, submission_id, status, payload, next_attempt_at)
  select $5, s.id, 'pending', s.data, now() from s
), e as (
  insert into bl_events (id, type, subject, data)
  select $6, 'submission.received', jsonb_build_object('submission_id', s.id, 'form_id', s.form_id), '{}'::jsonb
  from s
)
select id from s`;

const COUNT = 'select count(*)::int as n from bl_submissions where form_id = $1';

interface Store {
  write(params: string[]): Promise<void>;
  count(formId: string): Promise<number>;
}

async function openStore(): Promise<Store> {
  const url = process.env.BASELINE_DATABASE_URL;
  if (url) {
    const sql = postgres(url, { max: 10, onnotice: () => {} });
    await sql.unsafe(DDL).simple();
    return {
      async write(params) {
        await sql.unsafe(INSERT, params, { prepare: true });
      },
      async count(formId) {
        const rows = await sql.unsafe(COUNT, [formId], { prepare: true });
        return Number(rows[0].n);
      },
    };
  }
  const dir = process.env.BASELINE_PGLITE_DIR;
  if (!dir) throw new Error('set BASELINE_DATABASE_URL or BASELINE_PGLITE_DIR');
  const pg = await PGlite.create(dir);
  await pg.exec(DDL);
  return {
    async write(params) {
      await pg.query(INSERT, params);
    },
    async count(formId) {
      const r = await pg.query<{ n: number }>(COUNT, [formId]);
      return Number(r.rows[0].n);
    },
  };
}

async function main() {
  const store = await openStore();
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/count/:formId', async (c) => c.json({ stored: await store.count(c.req.param('formId')) }));
  app.post('/s/:formId', async (c) => {
    let data: unknown;
    try {
      data = await c.req.json();
    } catch {
      return c.json({ error: { code: 'invalid_json' } }, 400);
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) {
      return c.json({ error: { code: 'validation_failed' } }, 422);
    }
    const id = crypto.randomUUID();
    const meta = JSON.stringify({ user_agent: c.req.header('user-agent') ?? null, content_type: 'application/json' });
    await store.write([
      id,
      c.req.param('formId'),
      JSON.stringify(data),
      meta,
      crypto.randomUUID(),
      crypto.randomUUID(),
    ]);
    return c.json({ ok: true, submission_id: id, status: 'received' }, 200);
  });
  const port = Number(process.env.BASELINE_PORT);
  serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => {
    process.stdout.write(`baseline listening on 127.0.0.1:${port}\n`);
  });
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  process.stderr.write(`baseline: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
