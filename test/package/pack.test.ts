import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * `npm pack --json` prints npm's JSON alone: the lifecycle scripts it runs (`prepare`: the postgres.js
 * mend, the build, the PGlite seed) log to stderr. `npm run test:package` parses the same output
 * when it packs for real; this dry run packs nothing and needs no registry.
 */
describe('npm pack --json', () => {
  it('prints valid JSON on stdout while prepare runs its scripts, whose lines go to stderr', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json'], {
      env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/patch-postgres: /); // prepare ran, and said so on stderr
    expect(r.stderr).toMatch(/formsvc build: /);
    const [info] = JSON.parse(r.stdout);
    expect(info.name).toBe('formsvc');
    expect(info.files.map((f: { path: string }) => f.path)).toContain('dist/cli/main.js');
  }, 300_000);
});
