/**
 * The data part of the bench: submission search (`q`) and the CSV export over one organization
 * seeded with BENCH_DATA_ROWS submissions (default 1,000,000 on PostgreSQL, 100,000 on PGlite,
 * whose WASM engine seeds and scans several times slower). Seeding is one INSERT … SELECT
 * generate_series straight into the database (the service stopped on PGlite, which is one
 * process's); the queries and the export go through the running service's HTTP API.
 *
 * In `npm run bench` unless BENCH_DATA=false; alone: `npx tsx bench/data.ts` (DATABASE_URL as usual).
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { openPglite } from '../server/db/client.js';
import { http, onboardOver } from '../test/helpers/process.js';
import { startSmtpSink } from '../test/helpers/smtp.js';
import { type BenchConfig, loadBenchConfig } from './config.js';
import { type Cleanups, cleanups, nowMs, progress, rssOf, rssSampler } from './proc.js';
import { openRoot, openStore, type Root, Service } from './service.js';
import { fmt, median, percentile, table } from './stats.js';

type Smtp = Awaited<ReturnType<typeof startSmtpSink>>;

export interface DataResult {
  rows: number;
  seedS: number;
  search: { label: string; q: string; hits: number; p50: number; p95: number }[];
  searchP50: number;
  export: { rows: number; bytes: number; seconds: number; rowsPerS: number; rssBeforeMb: number; rssMaxMb: number };
}

/** Whether `npm run bench` runs the data part (BENCH_DATA=false leaves it out). */
export const dataPartWanted = (env: NodeJS.ProcessEnv = process.env) =>
  env.BENCH_DATA !== undefined ? env.BENCH_DATA !== 'false' : !env.BENCH_ONLY;

const COMPANIES = 100;
const SEARCH_RUNS = 25;

/**
 * One statement: ids in time order (the newest has the largest g), a contact form's fields with
 * one unique address each, a company out of 100 (1 % of rows each) and a message with a unique
 * token (md5 of g), written with their search text as the worker's indexer leaves it. Parameters:
 * $1 organization, $2 form, $3 rows.
 */
const SEED = `
  insert into submissions (id, org_id, form_id, status, test, data, spam, meta, client_ip, received_at, search_text)
  select id, $1, $2, 'received', false, data, '{"score":0,"reasons":[]}', '{"ip":"127.0.0.1"}', '127.0.0.1', received_at,
    formsvc_search_text(id, data)
  from (select 'sb_bench' || lpad(g::text, 10, '0') as id,
    jsonb_build_object(
      'name', 'Person ' || g,
      'email', 'user' || g || '@example.com',
      'company', 'Company' || (g % ${COMPANIES}),
      'topic', (array['pricing', 'support', 'sales', 'press'])[1 + g % 4],
      'message', 'Hello, we would like to hear more about the team plan. Ref ' || md5(g::text),
      'consent', true) as data,
    now() - make_interval(secs => $3::int - g) as received_at
  from generate_series(1, $3::int) g) s`;

/** Seeds the rows; on PGlite with the service stopped (the files are one process's at a time). */
async function seed(store: Awaited<ReturnType<typeof openStore>>, svc: Service, ids: Ids, rows: number) {
  const started = nowMs();
  const params = [ids.orgId, ids.formId, String(rows)];
  if (store.sql) {
    await store.sql.unsafe(SEED, params);
    await store.sql.unsafe('analyze submissions');
  } else {
    await svc.stop();
    const db = await openPglite(store.serviceEnv.DATA_DIR);
    try {
      await db.prepared(SEED, params);
      await db.prepared('analyze submissions', []);
    } finally {
      await db.close();
    }
    await svc.start(false);
  }
  return (nowMs() - started) / 1000;
}

interface Ids {
  key: string;
  orgId: string;
  formId: string;
}

async function timed(base: string, key: string, p: string) {
  const t0 = nowMs();
  const r = await http(base, 'GET', p, key);
  const ms = nowMs() - t0;
  if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${JSON.stringify(r.json)}`);
  return { ms, hits: (r.json.data as unknown[]).length };
}

/** Search latency through the API (limit 50, newest first), each query SEARCH_RUNS times after one warm-up. */
async function searchPhase(svc: Service, ids: Ids, rows: number) {
  const pick = (i: number) => Math.max(1, Math.floor((rows * i) / 7));
  const queries = [
    { label: 'one address (1 row)', q: `user${pick(3)}@example.com` },
    {
      label: 'unique token (1 row)',
      q: crypto
        .createHash('md5')
        .update(String(pick(5)))
        .digest('hex')
        .slice(0, 12),
    },
    { label: 'two words (name + number, as substrings)', q: `person ${pick(2)}` },
    { label: 'a company (1 % of rows)', q: 'company42' },
    { label: 'company + topic (1 %)', q: 'company43 press' },
    { label: 'no match', q: 'zzqqxxnothing' },
  ];
  const out: DataResult['search'] = [];
  const all: number[] = [];
  for (const { label, q } of queries) {
    const p = `/v1/submissions?q=${encodeURIComponent(q)}&limit=50`;
    const first = await timed(svc.base, ids.key, p);
    const ms: number[] = [];
    for (let i = 0; i < SEARCH_RUNS; i += 1) ms.push((await timed(svc.base, ids.key, p)).ms);
    all.push(...ms);
    out.push({ label, q, hits: first.hits, p50: median(ms), p95: percentile(ms, 95) });
  }
  return { search: out, searchP50: median(all) };
}

/** The whole CSV export, read as fast as this process takes it; the server's RSS sampled throughout. */
async function exportPhase(svc: Service, ids: Ids): Promise<DataResult['export']> {
  const rssBeforeMb = rssOf(svc.pids()) ?? Number.NaN;
  const sampler = rssSampler(() => svc.pids(), 50);
  const t0 = nowMs();
  const res = await fetch(`${svc.base}/v1/forms/${ids.formId}/submissions/export?format=csv`, {
    headers: { authorization: `Bearer ${ids.key}` },
  });
  if (res.status !== 200 || !res.body) throw new Error(`export: ${res.status} ${await res.text()}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
  }
  const seconds = (nowMs() - t0) / 1000;
  const rssMaxMb = sampler.stop() ?? Number.NaN;
  const rows = lines - 1; // the header; no seeded cell holds a line break
  return { rows, bytes, seconds, rowsPerS: rows / seconds, rssBeforeMb, rssMaxMb };
}

/** The data part on its own store and service (WORKER=false: nothing to deliver). */
export async function dataPhase(cfg: BenchConfig, root: Root, smtp: Smtp, clean: Cleanups): Promise<DataResult> {
  const rows = Number(process.env.BENCH_DATA_ROWS ?? (root.kind === 'postgres' ? 1_000_000 : 100_000));
  const store = await openStore(root, 'data', clean);
  const svc = await Service.create(store, smtp);
  clean.add('kill service (data)', () => svc.kill());
  await svc.start(false);
  const key = await onboardOver(svc.base, smtp, `bench-data-${crypto.randomBytes(4).toString('hex')}@example.com`);
  const me = await http(svc.base, 'GET', '/v1/me', key);
  const form = await http(svc.base, 'POST', '/v1/forms', key, { name: 'Bench data' });
  if (form.status !== 201) throw new Error(`create form: ${form.status}`);
  const ids: Ids = { key, orgId: me.json.organization.id, formId: form.json.id };
  progress(`data: seeding ${rows.toLocaleString('en-US')} submissions (one INSERT … SELECT generate_series)`);
  const seedS = await seed(store, svc, ids, rows);
  progress(`data: seeded in ${seedS.toFixed(1)} s; searching`);
  const s = await searchPhase(svc, ids, rows);
  progress('data: exporting the whole form as CSV');
  const exp = await exportPhase(svc, ids);
  await svc.stop();
  void cfg;
  return { rows, seedS, ...s, export: exp };
}

/** The part's report lines and its figures. */
export function dataReport(d: DataResult) {
  const e = d.export;
  const lines = [
    '',
    `Search (GET /v1/submissions?q=…&limit=50 over one organization of ${d.rows.toLocaleString('en-US')} ` +
      `submissions seeded in ${fmt(d.seedS, 1)} s; ${SEARCH_RUNS} runs per query after one warm-up)`,
    table(
      ['query', 'q', 'hits', 'p50 ms', 'p95 ms'],
      d.search.map((x) => [x.label, x.q, x.hits, fmt(x.p50), fmt(x.p95)]),
    ),
    '',
    'CSV export of the whole form (GET /v1/forms/{id}/submissions/export?format=csv, read as fast as possible)',
    table(
      ['rows', 'MB', 'seconds', 'rows/s', 'server RSS before MB', 'RSS max MB', 'RSS growth MB'],
      [
        [
          e.rows,
          fmt(e.bytes / 1e6, 1),
          fmt(e.seconds, 1),
          fmt(e.rowsPerS, 0),
          fmt(e.rssBeforeMb, 0),
          fmt(e.rssMaxMb, 0),
          fmt(e.rssMaxMb - e.rssBeforeMb, 0),
        ],
      ],
    ),
  ];
  const figures: [string, number | null][] = [
    ['search_p50_ms', d.searchP50],
    ['export_rows_per_s', e.rowsPerS],
    ['export_rss_growth_mb', e.rssMaxMb - e.rssBeforeMb],
  ];
  return { lines, figures };
}

/** `npx tsx bench/data.ts`: the data part alone. */
async function main() {
  const cfg = loadBenchConfig();
  const clean = cleanups();
  try {
    const root = await openRoot(cfg, clean);
    process.stdout.write(`formsvc bench (data part)\ndatabase: ${root.kind} — ${root.describe}\n`);
    const smtp = await startSmtpSink();
    clean.add('close SMTP sink', () => smtp.close());
    const { lines, figures } = dataReport(await dataPhase(cfg, root, smtp, clean));
    process.stdout.write(`${lines.join('\n')}\n\n`);
    for (const [n, v] of figures) process.stdout.write(`${n}=${v === null ? 'NaN' : fmt(v, 2)}\n`);
  } catch (err) {
    process.exitCode = 1;
    process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  } finally {
    await clean.run();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) void main();
