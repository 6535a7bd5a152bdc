import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * A fresh embedded database without initdb. Creating a PostgreSQL cluster (initdb, in a WebAssembly
 * module of its own) was most of a fresh clone's first start (about 4 s of 5 on a quiet machine, 20
 * on a busy one), and its module's memory stayed with the process (about 450 MB of RSS). The seed is
 * that cluster with the migrations applied, dumped once when the package is built; a first start
 * unpacks it (4.7 MB gzipped, 40 MB on disk) and migrates only what came after it. A seed of another
 * PGlite version (another PostgreSQL) is ignored: its name carries the version it was made with.
 * The server unpacks it to disk itself rather than through PGlite's loadDataDir, which kept about
 * 120 MB of buffers of the unpacking alive in the process.
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

/** Whether a PGlite directory is missing or empty: nothing there to keep. */
export function isEmptyDir(pgDir: string): boolean {
  try {
    return fs.readdirSync(pgDir).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

/**
 * Unpacks the seed (a gzipped ustar of regular files and directories, as PGlite dumps it) into
 * pgDir, which must be missing or empty. It is written beside and renamed into place, so a start
 * interrupted halfway leaves no half cluster behind.
 */
export function unpackSeed(seed: string, pgDir: string): void {
  const tar = zlib.gunzipSync(fs.readFileSync(seed));
  const tmp = `${pgDir}.unpack-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true, mode: 0o700 });
  const text = (at: number, len: number) => tar.toString('latin1', at, at + len).replace(/\0.*$/s, '');
  for (let at = 0; at + 512 <= tar.length; ) {
    const name = text(at, 100);
    if (!name) break; // the end: blocks of zeros
    const prefix = text(at + 345, 155);
    const size = Number.parseInt(text(at + 124, 12).trim() || '0', 8);
    const type = text(at + 156, 1) || '0';
    const rel = path.normalize(`${prefix ? `${prefix}/` : ''}${name}`).replace(/^\/+/, '');
    if (rel.startsWith('..') || path.isAbsolute(rel))
      throw new Error(`seed ${seed}: entry ${rel} leaves the directory`);
    const target = path.join(tmp, rel);
    if (type === '5') fs.mkdirSync(target, { recursive: true, mode: 0o700 });
    else if (type === '0') {
      fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      fs.writeFileSync(target, tar.subarray(at + 512, at + 512 + size), { mode: 0o600 });
    } else throw new Error(`seed ${seed}: entry ${rel} of type ${type} is neither a file nor a directory`);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  fs.rmSync(pgDir, { recursive: true, force: true }); // missing or empty, checked by the caller
  fs.renameSync(tmp, pgDir);
}

/**
 * Writes the seed for the installed PGlite into `outDir`: a cluster made in a temp directory,
 * migrated from `migrationsDir`, dumped as gzipped tar. Returns the file written.
 */
export async function writeSeed(outDir: string, migrationsDir: string): Promise<string> {
  const [{ PGlite }, { pg_trgm }, { drizzle }, { migrate }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ]);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-seed-'));
  try {
    const pg = new PGlite(path.join(tmp, 'pg'), { extensions: { pg_trgm } });
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
