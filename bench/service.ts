import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { freePort, healthy, http, loopbackServerEnv, onboardOver } from '../test/helpers/process.js';
import type { startSmtpSink } from '../test/helpers/smtp.js';
import type { BenchConfig } from './config.js';
import { type Child, type Cleanups, descendants, killChild, nowMs, progress, spawnNpmStart, stopTree } from './proc.js';

type Smtp = Awaited<ReturnType<typeof startSmtpSink>>;

/** Where a bench run keeps its data: databases on the given PostgreSQL server, or PGlite dirs. */
export interface Root {
  kind: 'postgres' | 'pglite';
  /** human description for the header */
  describe: string;
  /** temp dir of everything on disk */
  dir: string;
  /** database name prefix, formsvc_bench_<random> */
  tag: string;
  adminUrl: string | null;
}

/** One part's fresh database (or PGlite DATA_DIR), so that one part's delivery backlog never reaches another. */
export interface Store {
  kind: 'postgres' | 'pglite';
  /** settings of the service for this store */
  serviceEnv: Record<string, string>;
  /** settings of the baseline server for this store */
  baselineEnv: Record<string, string>;
  /** a direct connection to the part's database (PostgreSQL only) */
  sql: postgres.Sql | null;
}

/** The CPU-profile hook BENCH_PROFILE_DIR loads into the service's processes. */
const profileHook = new URL('./cpu-profile.mjs', import.meta.url).href;

const admin = (url: string) => postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });

export async function openRoot(cfg: BenchConfig, clean: Cleanups): Promise<Root> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-bench-'));
  clean.add('remove temp dir', () => fs.rmSync(dir, { recursive: true, force: true }));
  const tag = `formsvc_bench_${crypto.randomBytes(4).toString('hex')}`;
  if (!cfg.databaseUrl) {
    return {
      kind: 'pglite',
      describe: `embedded PGlite, a fresh DATA_DIR per part under ${dir} (removed at the end)`,
      dir,
      tag,
      adminUrl: null,
    };
  }
  const a = admin(cfg.databaseUrl);
  let version: string;
  try {
    version = String((await a`show server_version`)[0].server_version);
  } finally {
    await a.end({ timeout: 5 });
  }
  return {
    kind: 'postgres',
    describe:
      `PostgreSQL ${version} at ${new URL(cfg.databaseUrl).host}, a fresh database per part ` +
      `(${tag}_<part>, dropped at the end)`,
    dir,
    tag,
    adminUrl: cfg.databaseUrl,
  };
}

export async function openStore(root: Root, part: string, clean: Cleanups): Promise<Store> {
  const dataDir = path.join(root.dir, `data-${part}`);
  fs.mkdirSync(dataDir);
  const baselineDir = path.join(root.dir, `baseline-${part}`);
  if (!root.adminUrl) {
    fs.mkdirSync(baselineDir);
    return {
      kind: 'pglite',
      serviceEnv: { DATA_DIR: dataDir },
      baselineEnv: { BASELINE_PGLITE_DIR: baselineDir },
      sql: null,
    };
  }
  const adminUrl = root.adminUrl;
  const name = `${root.tag}_${part}`;
  const a = admin(adminUrl);
  try {
    await a.unsafe(`create database "${name}"`);
  } finally {
    await a.end({ timeout: 5 });
  }
  clean.add(`drop database ${name}`, async () => {
    const d = admin(adminUrl);
    try {
      await d.unsafe(`drop database if exists "${name}" with (force)`);
    } finally {
      await d.end({ timeout: 5 });
    }
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {}, connect_timeout: 10 });
  clean.add(`close connection to ${name}`, () => sql.end({ timeout: 5 }));
  return {
    kind: 'postgres',
    serviceEnv: { DATABASE_URL: url.toString(), DATA_DIR: dataDir },
    baselineEnv: { BASELINE_DATABASE_URL: url.toString() },
    sql,
  };
}

/**
 * The service as `npm start` runs it, whatever `npm start` is at the moment (server/main.ts through
 * tsx, or compiled JavaScript). Its figures (RSS, CPU) cover every process npm starts for it, npm's
 * own process aside: the shell, a tsx parent and the helpers it runs count with the server.
 */
export class Service {
  private proc: Child | null = null;
  readonly base: string;

  private constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
    /** the checkout whose `npm start` runs (null: this one) */
    private readonly dir: string | null,
  ) {
    this.base = `http://127.0.0.1:${port}`;
  }

  /** `dir`: the checkout to run (null: this one); by default BENCH_SERVICE_DIR's, or this one. */
  static async create(
    store: Store,
    smtp: Smtp,
    extraEnv: Record<string, string> = {},
    dir: string | null = process.env.BENCH_SERVICE_DIR || null,
  ) {
    const port = await freePort();
    return new Service(
      port,
      {
        ...store.serviceEnv,
        ...extraEnv,
        ...loopbackServerEnv(port, smtp.url),
        NODE_ENV: 'production',
        RETRY_BASE_MS: '100',
      },
      dir,
    );
  }

  private tree: { at: number; root: number | undefined; pids: number[] } | null = null;

  /**
   * The processes serving: everything `npm start` started, npm itself aside (empty when not
   * running). Walking /proc reads every process of the machine, so the list is kept for 2 s: the
   * RSS sampler asks ten times a second, and a walk each time cost the bench (which runs the
   * webhook receiver, on the same cores) as much CPU again.
   */
  pids(): number[] {
    const root = this.proc?.child.pid;
    const now = Date.now();
    if (!this.tree || this.tree.root !== root || now - this.tree.at > 2000) {
      this.tree = { at: now, root, pids: descendants(root, false).map((p) => p.pid) };
    }
    return this.tree.pids;
  }

  /** Those processes with their command names, for the report. */
  processes() {
    return descendants(this.proc?.child.pid, false);
  }

  /** Starts the process and waits for /healthz; returns the spawn time (nowMs). */
  async start(worker: boolean): Promise<{ spawnedAt: number; healthyAt: number }> {
    if (this.proc) throw new Error('service already running');
    const spawnedAt = nowMs();
    // BENCH_PROFILE_DIR: the server writes a V8 CPU profile there when it stops, through a hook
    // module since Node 20 refuses --cpu-prof in NODE_OPTIONS (a file URL: no spaces to quote). npm
    // loads the hook too but writes nothing: it ends by re-raising SIGTERM, which runs no 'exit' handler.
    const dir = process.env.BENCH_PROFILE_DIR;
    const profile: Record<string, string> = dir
      ? {
          BENCH_PROFILE_DIR: path.resolve(dir),
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${profileHook}`.trim(),
        }
      : {};
    const p = spawnNpmStart({ ...this.env, ...profile, WORKER: String(worker) }, this.dir);
    this.proc = p;
    const exited = p.exited.then(({ code, signal }) => {
      throw new Error(`service exited during start-up (${code ?? signal}):\n${p.tail.text()}`);
    });
    exited.catch(() => {});
    await Promise.race([healthy(this.base), exited]);
    progress(`service up (pid ${p.child.pid}, WORKER=${worker}) in ${((nowMs() - spawnedAt) / 1000).toFixed(1)} s`);
    return { spawnedAt, healthyAt: nowMs() };
  }

  /** Whether the process died by itself; throws with its last output if so. */
  assertAlive() {
    const c = this.proc?.child;
    if (c && (c.exitCode !== null || c.signalCode !== null)) {
      throw new Error(`service process exited (${c.exitCode ?? c.signalCode}):\n${this.proc?.tail.text()}`);
    }
  }

  /** Graceful stop (SIGTERM, as a deployment would), SIGKILL after 15 s. */
  async stop() {
    if (!this.proc) return;
    const p = this.proc;
    this.proc = null;
    const how = await stopTree(p, 15_000);
    if (how === 'killed') progress('service did not stop within 15 s of SIGTERM; killed');
  }

  async kill() {
    if (this.proc) await killChild(this.proc);
    this.proc = null;
  }

  output() {
    return this.proc?.tail.text() ?? '';
  }
}

/** A new organization (email-code flow) with one webhook destination pointing at the receiver. */
export async function setupTenant(svc: Service, smtp: Smtp, hookUrl: string) {
  const key = await onboardOver(svc.base, smtp, `bench-${crypto.randomBytes(4).toString('hex')}@example.com`);
  const dest = await http(svc.base, 'POST', '/v1/destinations', key, {
    type: 'webhook',
    name: 'bench receiver',
    config: { url: hookUrl },
  });
  if (dest.status !== 201) throw new Error(`create destination: ${dest.status} ${JSON.stringify(dest.json)}`);
  const destinationId = dest.json.id as string;
  return {
    key,
    /**
     * A new form with one route to the receiver; returns its id. `rules` adds form settings and a
     * route `match` (the match-and-unique variant of the intake phase).
     */
    async form(name: string, rules: { settings?: Record<string, unknown>; match?: unknown } = {}): Promise<string> {
      const form = await http(svc.base, 'POST', '/v1/forms', key, { name });
      if (form.status !== 201) throw new Error(`create form: ${form.status} ${JSON.stringify(form.json)}`);
      if (rules.settings) {
        const set = await http(svc.base, 'PATCH', `/v1/forms/${form.json.id}`, key, { settings: rules.settings });
        if (set.status !== 200) throw new Error(`form settings: ${set.status} ${JSON.stringify(set.json)}`);
      }
      const route = await http(svc.base, 'POST', '/v1/routes', key, {
        form_id: form.json.id,
        destination_id: destinationId,
        ...(rules.match ? { match: rules.match } : {}),
      });
      if (route.status !== 201) throw new Error(`create route: ${route.status} ${JSON.stringify(route.json)}`);
      return form.json.id as string;
    },
  };
}

export type Tenant = Awaited<ReturnType<typeof setupTenant>>;

/** One part's service: its own store, process and tenant (organization, key, webhook destination). */
export async function bootService(
  root: Root,
  part: string,
  smtp: Smtp,
  hookUrl: string,
  clean: Cleanups,
  worker = true,
  extraEnv: Record<string, string> = {},
  dir?: string | null,
) {
  const store = await openStore(root, part, clean);
  const svc = await Service.create(store, smtp, extraEnv, dir);
  clean.add(`kill service (${part})`, () => svc.kill());
  progress(`${part}: starting the service on a fresh ${store.kind === 'postgres' ? 'database' : 'DATA_DIR'}`);
  await svc.start(worker);
  const tenant = await setupTenant(svc, smtp, hookUrl);
  return { store, svc, tenant };
}

export interface Stored {
  /** non-test submissions stored for the form */
  total: number;
  /** of those, status "received" (accepted, deliveries planned) */
  received: number;
  /** where the numbers came from */
  via: 'database' | 'api';
}

/**
 * Submissions stored for a form. On PostgreSQL straight from the database; on PGlite (one process
 * owns the files) through the running service's API: the form's count, less every submission
 * listed with another status than "received".
 */
export async function storedFor(store: Store, svc: Service, key: string, formId: string): Promise<Stored> {
  if (store.sql) {
    const [r] = await store.sql<{ total: number; received: number }[]>`
      select count(*)::int as total, (count(*) filter (where status = 'received'))::int as received
      from submissions where form_id = ${formId} and not test`;
    return { total: r.total, received: r.received, via: 'database' };
  }
  const form = await http(svc.base, 'GET', `/v1/forms/${formId}`, key);
  if (form.status !== 200) throw new Error(`GET form: ${form.status} ${JSON.stringify(form.json)}`);
  const total = Number(form.json.counts.submissions);
  let other = 0;
  for (const status of ['quarantined', 'spam']) {
    let cursor: string | null = null;
    do {
      const q: string = `/v1/submissions?form_id=${formId}&status=${status}&test=false&limit=200${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await http(svc.base, 'GET', q, key);
      if (page.status !== 200) throw new Error(`GET ${q}: ${page.status} ${JSON.stringify(page.json)}`);
      other += page.json.data.length;
      cursor = page.json.next_cursor;
    } while (cursor);
  }
  return { total, received: total - other, via: 'api' };
}
