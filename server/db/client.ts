import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { PGliteOptions } from '@electric-sql/pglite';
import { type SQL, sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { countPool, type PoolGauge } from '../fleet/pool-gauge.js';
import { PACKAGE_ROOT } from '../package-root.js';
import { isConnectionLost } from './errors.js';
import { isEmptyDir, seedFile, unpackSeed } from './pglite-seed.js';
import * as schema from './schema.js';

export type Schema = typeof schema;
/** Both drivers behind one type: embedded PGlite and postgres.js share the PgDatabase surface. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Raw rows of one statement, the same shape on both drivers. */
  rows<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  /**
   * One statement from fixed text and positional parameters ($1…), prepared once per connection on
   * PostgreSQL (the hot paths: intake's one-statement write). Parameters go as text: cast them.
   */
  prepared<T = Record<string, unknown>>(text: string, params: (string | null)[]): Promise<T[]>;
  /** Calls fn for every NOTIFY on channel (both drivers). */
  listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /** How busy the PostgreSQL pool is (metrics); absent on PGlite. */
  pool?: PoolGauge;
}

export const MIGRATIONS = path.join(PACKAGE_ROOT, 'migrations');
/** Where the package keeps the pre-made embedded database (pglite-seed.ts): beside the migrations. */
export const SEED_DIR = path.join(PACKAGE_ROOT, 'pglite-seed');
const MIGRATION_LOCK = 7_271_001;

// Each driver is imported when its database is opened: a server on PostgreSQL never loads PGlite,
// and one on PGlite never loads postgres.js.

/** Opens PostgreSQL at `url`, applying migrations under an advisory lock (several processes may start at once). */
export async function openPostgres(url: string, opts: { max?: number } = {}): Promise<Database> {
  const [{ default: postgres }, { drizzle: drizzlePg }, { migrate: migratePg }] = await Promise.all([
    import('postgres'),
    import('drizzle-orm/postgres-js'),
    import('drizzle-orm/postgres-js/migrator'),
  ]);
  // One connection holds the advisory lock for the whole migration, so concurrent starts wait.
  const migrator = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    await migrator`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migratePg(drizzlePg(migrator), { migrationsFolder: MIGRATIONS });
    await migrator`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await migrator.end({ timeout: 5 });
  }
  const client = postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    // A connection attempt that hangs (a peer that accepts and never answers) holds every query
    // queued on it: 5 s keeps a request during an outage well within the 503 bound of the faults.
    connect_timeout: 5,
    backoff: reconnectDelayS,
  });
  const pool = countPool(client, opts.max ?? 10);
  const db = guardTransactions(drizzlePg(client, { schema }) as unknown as Db);
  return {
    db,
    kind: 'postgres',
    pool,
    async rows<T>(query: SQL) {
      return (await db.execute(query)) as unknown as T[];
    },
    async prepared<T>(text: string, params: (string | null)[]) {
      return (await client.unsafe(text, params, { prepare: true })) as unknown as T[];
    },
    async listen(channel, fn) {
      const sub = await client.listen(channel, fn);
      return () => sub.unlisten();
    },
    close: () => client.end({ timeout: 5 }),
  };
}

/**
 * Seconds before a pool connection that failed is opened again. postgres.js's default grows to 20 s
 * and counts failures across the pool, so during an outage a request waited up to 20 s for a
 * connection attempt before it could fail, and after one the service stayed down until the delay
 * ran out. A cap of 2 s bounds both; ten connections retrying that often are no load on a server.
 */
const reconnectDelayS = (failures: number) => Math.min(0.05 * 2 ** failures, 2) * (0.5 + Math.random() / 2);

/**
 * postgres.js 3.4.9 answers a transaction whose connection was lost by writing ROLLBACK to that
 * connection after it has closed, from a setImmediate, and the TypeError thrown there ends the
 * process (porsager/postgres#1154, #1208; no fixed release yet). Its `begin()` already rejects when
 * the connection closes, and the server rolls the transaction back by itself. So when the callback
 * fails with a lost connection and the transaction has indeed been rejected that way, the callback
 * is left unsettled: the driver never reaches its ROLLBACK, the caller has the connection error,
 * and the abandoned chain is collected. Should the transaction still be open after a moment (the
 * error was not about its connection after all), the error takes the ordinary path.
 */
function guardTransactions(db: Db): Db {
  const begin = db.transaction.bind(db);
  db.transaction = ((fn, config) => {
    let settled = () => {};
    const done = new Promise<void>((resolve) => {
      settled = resolve;
    });
    const run = begin(async (tx) => {
      try {
        return await fn(tx);
      } catch (err) {
        if (isConnectionLost(err) && (await within(done, 5000))) return new Promise<never>(() => {});
        throw err;
      }
    }, config);
    run.then(settled, settled);
    return run;
  }) as Db['transaction'];
  return db;
}

/** Whether p settles within ms. */
function within(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([p.then(() => true), late]).finally(() => clearTimeout(timer));
}

/**
 * Settings of embedded PostgreSQL that cost memory. PGlite's PostgreSQL zero-fills its shared memory
 * when it starts (emscripten's mmap), and WebAssembly memory never shrinks, so every byte of
 * shared_buffers is resident from the first second whether used or not: the default 128 MB was
 * 135 MB of RSS and about a second of start. A page evicted from 16 MB of buffers is read back
 * from the kernel's page cache (the data files are ordinary files), not from the disk.
 */
const PGLITE_SETTINGS = ['shared_buffers=16MB'];

/**
 * Opens embedded PGlite in dataDir (memory when dataDir is null) and applies migrations. An empty
 * dataDir starts from the package's seed when there is one for this PGlite (no initdb), else from
 * initdb.
 */
export async function openPglite(dataDir: string | null, opts: { seedDir?: string } = {}): Promise<Database> {
  let release = () => {};
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    release = await takeLock(dataDir);
  }
  try {
    const [{ PGlite }, { pg_trgm }, { drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([
      import('@electric-sql/pglite'),
      import('@electric-sql/pglite/contrib/pg_trgm'),
      import('drizzle-orm/pglite'),
      import('drizzle-orm/pglite/migrator'),
    ]);
    const options: PGliteOptions = {
      startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((s) => ['-c', s])],
      // pg_trgm backs submission search (migration 0011); PGlite loads contrib extensions on request.
      extensions: { pg_trgm },
    };
    const pgDir = dataDir ? path.join(dataDir, 'pg') : null;
    const seed = seedFile(opts.seedDir ?? SEED_DIR);
    if (fs.existsSync(seed)) {
      // In memory (tests) PGlite unpacks it; on disk the server does, without PGlite's buffers.
      if (!pgDir) options.loadDataDir = new Blob([fs.readFileSync(seed)]);
      else if (isEmptyDir(pgDir)) unpackSeed(seed, pgDir);
    }
    const client = pgDir ? new PGlite(pgDir, options) : new PGlite(options);
    await client.waitReady;
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    await migratePglite(db as never, { migrationsFolder: MIGRATIONS });
    return {
      db,
      kind: 'pglite',
      async rows<T>(query: SQL) {
        return ((await db.execute(query)) as unknown as { rows: T[] }).rows;
      },
      async prepared<T>(text: string, params: (string | null)[]) {
        return (await client.query<T>(text, params)).rows;
      },
      async listen(channel, fn) {
        const unsub = await client.listen(channel, fn);
        return () => unsub();
      },
      async close() {
        await client.close();
        release();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * PGlite has no cross-process lock, so a second server on the same DATA_DIR must refuse to start.
 * The lock is a Unix socket this process listens on: the kernel closes it when the process dies,
 * however it dies, so a stale lock never blocks a restart (a pid file would: pids are reused and a
 * killed process lingers as a zombie). A live holder answers with its pid.
 */
async function takeLock(dataDir: string): Promise<() => void> {
  const sock = path.join(path.resolve(dataDir), 'formsvc.lock.sock');
  const server = net.createServer((c) => c.end(String(process.pid)));
  for (let i = 0; i < 2; i += 1) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(sock, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.unref();
      return () => {
        server.close();
        fs.rmSync(sock, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      const holder = await lockHolder(sock);
      if (holder !== null) {
        throw new Error(
          `DATA_DIR ${dataDir} is in use by process ${holder || '(unknown)'}: the embedded database allows one server at a time. ` +
            'Stop that server, use another DATA_DIR, or set DATABASE_URL to share a PostgreSQL server.',
        );
      }
      fs.rmSync(sock, { force: true }); // left by a process that died: nobody listens any more
    }
  }
  throw new Error(`could not take the lock ${sock}`);
}

/** The pid a live lock holder answers with ('' if it says nothing), or null when nobody listens. */
function lockHolder(sock: string): Promise<string | null> {
  return new Promise((resolve) => {
    const c = net.connect(sock);
    let text = '';
    c.setTimeout(2000, () => c.destroy());
    c.on('data', (d) => {
      text += d.toString();
    });
    c.on('end', () => resolve(text.trim()));
    c.on('error', () => resolve(null));
    c.on('close', () => resolve(text.trim()));
  });
}

export { sql };
