import fs from 'node:fs';
import path from 'node:path';
import type { BenchConfig } from './config.js';
import { type Cleanups, nowMs, progress, rssMb, sleep, spawnNode } from './proc.js';
import { bootService, type Root, Service } from './service.js';
import { median } from './stats.js';

type Smtp = Parameters<typeof Service.create>[1];

export interface StartResult {
  /** `npm start` on an empty PGlite DATA_DIR → /healthz 200 (creates the database and migrates it) */
  firstStartMs: number;
  /** `npm start` on the part's database, already migrated → /healthz 200, each restart */
  startRuns: number[];
  startMs: number;
  /** RSS of npm start's processes (npm aside), bootWaitS after a start, before any request but /healthz */
  rssBootMb: number | null;
  /** those processes, "name:MB" */
  bootProcs: string;
  cliHelpRuns: number[];
  cliWhoamiRuns: number[];
}

/** Milliseconds of one CLI run (spawn → exit); throws with its output when it fails. */
async function cliRun(args: string[], env: Record<string, string>): Promise<number> {
  const t0 = nowMs();
  // bin/formsvc.js is the CLI as installed: `node bin/formsvc.js`, whatever it loads.
  const p = spawnNode(['bin/formsvc.js', ...args], env);
  const { code, signal } = await p.exited;
  const ms = nowMs() - t0;
  if (code !== 0) {
    throw new Error(`formsvc ${args.join(' ')} exited ${code ?? signal}:\n${p.stdout()}\n${p.tail.text()}`);
  }
  return ms;
}

/**
 * Start-up: `npm start` on an empty PGlite data folder (a fresh clone's first start), then on the
 * part's database, restarted `cfg.starts` times (start → /healthz 200 each), its memory `cfg.bootWaitS`
 * after the last start, and the CLI's `--help` and `whoami` against it, 5 runs each.
 */
export async function startPhase(
  cfg: BenchConfig,
  root: Root,
  smtp: Smtp,
  hookUrl: string,
  clean: Cleanups,
): Promise<StartResult> {
  // A fresh clone: no DATABASE_URL, an empty DATA_DIR.
  const emptyDir = path.join(root.dir, 'first-start');
  fs.mkdirSync(emptyDir);
  const first = await Service.create(
    { kind: 'pglite', serviceEnv: { DATA_DIR: emptyDir, DATABASE_URL: '' }, baselineEnv: {}, sql: null },
    smtp,
  );
  clean.add('kill service (first start)', () => first.kill());
  progress('start: npm start on an empty PGlite DATA_DIR');
  const f = await first.start(true);
  await first.stop();

  const { svc, tenant } = await bootService(root, 'start', smtp, hookUrl, clean);
  const startRuns: number[] = [];
  for (let i = 0; i < cfg.starts; i += 1) {
    await svc.stop();
    const s = await svc.start(true);
    startRuns.push(s.healthyAt - s.spawnedAt);
  }
  progress(`start: waiting ${cfg.bootWaitS} s before reading the boot RSS`);
  await sleep(cfg.bootWaitS * 1000);
  const procs = svc.processes();
  const sizes = procs.map((p) => ({ ...p, mb: rssMb(p.pid) }));
  const known = sizes.filter((p) => p.mb !== null);
  const rssBootMb = known.length ? known.reduce((a, p) => a + (p.mb ?? 0), 0) : null;
  const bootProcs = known.map((p) => `${p.comm}:${Math.round(p.mb ?? 0)}`).join(' ');

  const cliHome = path.join(root.dir, 'cli-home');
  fs.mkdirSync(cliHome);
  // A home of its own: no profile of the user's is read; key and address come from the environment.
  const cliEnv = {
    HOME: cliHome,
    XDG_CONFIG_HOME: cliHome,
    FORMSVC_API_KEY: tenant.key,
    FORMSVC_BASE_URL: svc.base,
  };
  progress('start: the CLI, --help and whoami, 5 runs each');
  const cliHelpRuns: number[] = [];
  const cliWhoamiRuns: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    cliHelpRuns.push(await cliRun(['--help'], cliEnv));
    cliWhoamiRuns.push(await cliRun(['whoami'], cliEnv));
  }
  await svc.stop();
  return {
    firstStartMs: f.healthyAt - f.spawnedAt,
    startRuns,
    startMs: median(startRuns),
    rssBootMb,
    bootProcs,
    cliHelpRuns,
    cliWhoamiRuns,
  };
}
