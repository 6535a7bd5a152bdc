import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, healthy, killServer, loopbackServerEnv, onboardOver, startServer } from './process.js';
import { serverDatabase } from './scratch-db.js';
import { startSmtpSink } from './smtp.js';

export type Run = { code: number | null; stdout: string; stderr: string };

/**
 * A real server process (on a database of its own on TEST_DATABASE_URL's server when set) with one onboarded key, and `cli` to run
 * `bin/formsvc.js` against it with that key and a profile file of its own. `close` stops it all.
 */
export async function cliServer(name: string) {
  const cleanups: (() => unknown)[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `formsvc-${name}-`));
  const smtp = await startSmtpSink();
  cleanups.push(() => smtp.close());
  const db = await serverDatabase();
  cleanups.push(() => db.drop());
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = startServer({
    ...loopbackServerEnv(port, smtp.url),
    DATA_DIR: path.join(dir, 'data'),
    ...db.env,
  });
  cleanups.push(() => killServer(server));
  await healthy(base);
  const key = await onboardOver(base, smtp, `${name}-${Date.now()}@example.com`);

  function cli(args: string[]): Promise<Run> {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FORMSVC_')));
    const child = spawn(process.execPath, ['bin/formsvc.js', ...args], {
      env: {
        ...clean,
        FORMSVC_CONFIG: path.join(dir, 'profiles.json'),
        FORMSVC_BASE_URL: base,
        FORMSVC_API_KEY: key,
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  return {
    base,
    key,
    cli,
    /** Runs on close, before the server stops (receivers and such). */
    cleanups,
    async close() {
      for (const c of cleanups.reverse()) await c();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
