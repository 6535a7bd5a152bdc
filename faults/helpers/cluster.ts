import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/helpers/process.js';

/** The machine's PostgreSQL binaries (the newest version installed), or PG_BIN. */
function pgBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length) throw new Error('no PostgreSQL under /usr/lib/postgresql (set PG_BIN to its bin folder)');
  return path.join(root, versions[0], 'bin');
}

/**
 * initdb and the server refuse to run as root: as root they run as the `postgres` user (the
 * cluster's folder is given to it); as anyone else, as that user.
 */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * A PostgreSQL cluster of the test's own (initdb, pg_ctl) in a temporary folder on a free loopback
 * port, so a fault test may kill and restart the database freely without touching the machine's
 * shared server. `kill()` is `pg_ctl stop -m immediate` (no shutdown checkpoint: the next start
 * recovers from the WAL, as after a crash).
 */
export async function privateCluster() {
  const bin = pgBin();
  const user = runAs();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  if (user) fs.chownSync(dir, user.uid, user.gid);
  const run = (tool: string, args: string[]) => {
    const r = spawnSync(path.join(bin, tool), args, {
      uid: user?.uid,
      gid: user?.gid,
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (r.status !== 0) {
      throw new Error(
        `${tool} ${args.join(' ')} failed: ${r.stderr || r.stdout}${fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-2000) : ''}`,
      );
    }
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    "-c listen_addresses='127.0.0.1'",
    `-c unix_socket_directories='${dir}'`,
    '-c max_connections=200',
    '-c fsync=off',
    '-c shared_buffers=64MB',
  ].join(' ');
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const cluster = {
    url,
    port,
    /** Starts the server and waits until it accepts connections. */
    start() {
      run('pg_ctl', ['-D', data, '-l', log, '-o', options, '-w', '-t', '60', 'start']);
    },
    /** pg_ctl stop -m immediate: every backend ends at once, as in a crash. */
    kill() {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    /** Stops the server (if it runs) and removes the folder. */
    destroy() {
      spawnSync(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], {
        uid: user?.uid,
        gid: user?.gid,
        timeout: 30_000,
      });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}

export type PrivateCluster = Awaited<ReturnType<typeof privateCluster>>;
