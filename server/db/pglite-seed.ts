import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

/**
 * A fresh embedded database without initdb. Creating a PostgreSQL cluster (initdb, in a WebAssembly
 * module of its own) was most of a fresh clone's first start (about 4 s of 5 on a quiet machine, 20
 * on a busy one), and its module's memory stayed with the process (about 450 MB of RSS). The seed is
 * that cluster with the migrations applied, dumped once when the package is built; a first start
 * unpacks it (4.7 MB gzipped, 40 MB on disk) and migrates only what came after it. A seed of another
 * PGlite version (another PostgreSQL) is ignored: its name carries the version it was made with.
 */

const require = createRequire(import.meta.url);

/** The installed PGlite's version: a data directory is only readable by the PostgreSQL that wrote it. */
export function pgliteVersion(): string {
  const pkg = path.join(path.dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json');
  return (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { version: string }).version;
}

/** The seed's file in `dir` for the installed PGlite. */
export function seedFile(dir: string): string {
  return path.join(dir, `pglite-${pgliteVersion()}.tar.gz`);
}

/** Whether a PGlite directory holds no cluster yet (missing, or without PG_VERSION). */
export function isEmptyCluster(pgDir: string): boolean {
  return !fs.existsSync(path.join(pgDir, 'PG_VERSION'));
}

/**
 * Writes the seed for the installed PGlite into `outDir`: a cluster made in a temp directory,
 * migrated from `migrationsDir`, dumped as gzipped tar. Returns the file written.
 */
export async function writeSeed(outDir: string, migrationsDir: string): Promise<string> {
  const [{ PGlite }, { drizzle }, { migrate }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ]);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-seed-'));
  try {
    const pg = new PGlite(path.join(tmp, 'pg'));
    await pg.waitReady;
    await migrate(drizzle(pg), { migrationsFolder: migrationsDir });
    // A checkpoint first: the dump then holds the data files, not WAL to replay at every first start.
    await pg.exec('checkpoint');
    const dump = await pg.dumpDataDir('gzip');
    await pg.close();
    fs.mkdirSync(outDir, { recursive: true });
    const file = seedFile(outDir);
    fs.writeFileSync(`${file}.tmp`, Buffer.from(await dump.arrayBuffer()));
    fs.renameSync(`${file}.tmp`, file);
    return file;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
