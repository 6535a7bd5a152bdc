import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { type SQL, sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/postgres-js';
import { migrate as migratePg } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import * as schema from './schema.js';

export type Schema = typeof schema;
/** Both drivers behind one type: embedded PGlite and postgres.js share the PgDatabase surface. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Raw rows of one statement, the same shape on both drivers. */
  rows<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  /** Calls fn for every NOTIFY on channel (both drivers). */
  listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const MIGRATIONS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');
const MIGRATION_LOCK = 7_271_001;

/** Opens PostgreSQL at `url`, applying migrations under an advisory lock (several processes may start at once). */
export async function openPostgres(url: string, opts: { max?: number } = {}): Promise<Database> {
  // One connection holds the advisory lock for the whole migration, so concurrent starts wait.
  const migrator = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    await migrator`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migratePg(drizzlePg(migrator), { migrationsFolder: MIGRATIONS });
    await migrator`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await migrator.end({ timeout: 5 });
  }
  const client = postgres(url, { max: opts.max ?? 10, onnotice: () => {}, connect_timeout: 10 });
  const db = drizzlePg(client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    async rows<T>(query: SQL) {
      return (await db.execute(query)) as unknown as T[];
    },
    async listen(channel, fn) {
      const sub = await client.listen(channel, fn);
      return () => sub.unlisten();
    },
    close: () => client.end({ timeout: 5 }),
  };
}

/** Opens embedded PGlite in dataDir (memory when dataDir is null) and applies migrations. */
export async function openPglite(dataDir: string | null): Promise<Database> {
  let release = () => {};
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    release = takeLock(dataDir);
  }
  try {
    const client = dataDir ? new PGlite(path.join(dataDir, 'pg')) : new PGlite();
    await client.waitReady;
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    await migratePglite(db as never, { migrationsFolder: MIGRATIONS });
    return {
      db,
      kind: 'pglite',
      async rows<T>(query: SQL) {
        return ((await db.execute(query)) as unknown as { rows: T[] }).rows;
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

/** PGlite has no cross-process lock: a pid file in DATA_DIR makes a second server refuse to start. */
function takeLock(dataDir: string): () => void {
  const file = path.join(dataDir, 'formsvc.lock');
  for (let i = 0; i < 2; i += 1) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(file, 'utf8'));
      if (pid && pid !== process.pid && alive(pid)) {
        throw new Error(
          `DATA_DIR ${dataDir} is in use by process ${pid}: the embedded database allows one server at a time. ` +
            'Stop that server, use another DATA_DIR, or set DATABASE_URL to share a PostgreSQL server.',
        );
      }
      fs.rmSync(file, { force: true });
    }
  }
  throw new Error(`could not take the lock ${file}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export { sql };
