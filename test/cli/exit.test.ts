import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-exit-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * The V8 flags a CLI run sets for itself (a preload records every v8.setFlagsFromString), and how it
 * exited. A command that calls the API must not wait, after its output, for V8's background TurboFan
 * compile of fetch's WebAssembly HTTP parser: it runs with Liftoff only (cli/main.ts exitPromptly).
 * How long the exit takes is measured by `npm run bench` (cli_whoami_ms), never asserted here.
 */
function flagsOf(args: string[]) {
  const log = path.join(tmp, `flags-${Math.random().toString(36).slice(2)}.log`);
  const preload = `import v8 from 'node:v8'; import { syncBuiltinESMExports } from 'node:module'; import fs from 'node:fs';
const set = v8.setFlagsFromString;
v8.setFlagsFromString = (f) => { fs.appendFileSync(${JSON.stringify(log)}, f + '\\n'); return set(f); };
syncBuiltinESMExports();`;
  const r = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(preload)}`, ...args], {
    env: { ...process.env, NO_COLOR: '1', FORMSVC_CONFIG: path.join(tmp, 'profiles.json') },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const flags = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  return { status: r.status, stderr: r.stderr, flags };
}

describe('the CLI exits as soon as its output is written', () => {
  it('an API command compiles fetch’s HTTP parser with Liftoff only, so no background compile holds the exit', () => {
    const r = flagsOf(['bin/formsvc.js', 'whoami', '--api-key', 'fs_test', '--base-url', 'http://127.0.0.1:9']);
    expect(r.status, r.stderr).toBe(1); // nothing listens on port 9: an API error, printed, exit 1
    expect(r.flags).toEqual(['--liftoff-only']);
  });

  it('formsvc serve keeps V8’s optimizing WebAssembly compiler (PGlite runs as WebAssembly)', () => {
    const r = flagsOf(['bin/formsvc.js', 'serve', '--help']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.flags).toEqual([]);
  });
});
