import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Wall-clock milliseconds with sub-millisecond resolution (comparable across processes of this machine). */
export const nowMs = () => performance.timeOrigin + performance.now();

/** Progress goes to stderr so that stdout holds the report only. */
export const progress = (msg: string) => process.stderr.write(`· ${msg}\n`);

/** Every child process this bench started and has not seen exit; killed whatever happens. */
const live = new Set<ChildProcess>();

function killGroup(child: ChildProcess) {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {}
  }
}

// Last resort: should the bench end without running its cleanup, its children still go with it.
process.on('exit', () => {
  for (const c of live) killGroup(c);
});

/** The last lines a child wrote on stdout and stderr, for error messages. */
export class Tail {
  private lines: string[] = [];
  push(chunk: Buffer) {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) this.lines.push(line);
    if (this.lines.length > 40) this.lines.splice(0, this.lines.length - 40);
  }
  text() {
    return this.lines.join('\n');
  }
}

export interface Child {
  child: ChildProcess;
  tail: Tail;
  /** everything written on stdout (kept only when asked for) */
  stdout(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A child in a process group of its own (so that a kill takes everything it started), its output kept in a Tail. */
function spawnChild(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  opts: { keepStdout?: boolean } = {},
): Child {
  const child = spawn(cmd, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);
  const tail = new Tail();
  const out: Buffer[] = [];
  child.stdout?.on('data', (c: Buffer) => {
    if (opts.keepStdout) out.push(c);
    else tail.push(c);
  });
  child.stderr?.on('data', (c: Buffer) => tail.push(c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
    child.once('error', (err) => {
      live.delete(child);
      tail.push(Buffer.from(String(err)));
      resolve({ code: -1, signal: null });
    });
  });
  return { child, tail, stdout: () => Buffer.concat(out).toString('utf8'), exited };
}

/**
 * A TypeScript entry point as `node --import tsx <script>`: the child's pid is the node process
 * itself (no wrapper), in a process group of its own so that a kill takes everything it started.
 */
export function spawnTs(
  script: string,
  env: Record<string, string>,
  opts: { keepStdout?: boolean; nodeArgs?: string[] } = {},
): Child {
  return spawnChild(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', script], env, opts);
}

/** `node <args>` (a JavaScript entry point as installed, e.g. bin/formsvc.js), its stdout kept. */
export function spawnNode(args: string[], env: Record<string, string>): Child {
  return spawnChild(process.execPath, args, env, { keepStdout: true });
}

/**
 * `npm start` exactly as a user runs it, whatever the script is at the moment (tsx or compiled
 * JavaScript); the child's pid is npm's, and the server is one of its descendants. `dir`: another
 * checkout's `npm start` (its code, this bench), for before/after runs; null or empty: this one.
 */
export function spawnNpmStart(env: Record<string, string>, dir: string | null): Child {
  return spawnChild('npm', ['start', '--silent', ...(dir ? ['--prefix', dir] : [])], env);
}

const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

/** SIGTERM (a graceful stop), then SIGKILL to the group if it has not exited within graceMs. */
export async function stopChild(c: Child, graceMs = 15_000): Promise<'graceful' | 'killed'> {
  if (!running(c.child)) return 'graceful';
  try {
    c.child.kill('SIGTERM');
  } catch {}
  const timer = sleep(graceMs).then(() => 'late' as const);
  const how = await Promise.race([c.exited.then(() => 'exited' as const), timer]);
  // The group may still hold helpers the process started.
  killGroup(c.child);
  if (how === 'late') {
    await c.exited;
    return 'killed';
  }
  return 'graceful';
}

/**
 * A graceful stop of a child and everything it started (`npm start`'s tree): SIGTERM to its process
 * group, as a service manager stops a service, then waits until every process of the tree has exited;
 * SIGKILL to the group after graceMs. Waiting for the whole tree matters: npm may exit before the
 * server has closed its database, and the next start on the same DATA_DIR must find it closed.
 */
export async function stopTree(c: Child, graceMs = 15_000): Promise<'graceful' | 'killed'> {
  const pids = descendants(c.child.pid).map((p) => p.pid);
  if (!pids.length) return 'graceful';
  try {
    if (c.child.pid) process.kill(-c.child.pid, 'SIGTERM');
  } catch {}
  const gone = await waitFor(() => descendantsAlive(pids) === 0, graceMs, 20);
  killGroup(c.child);
  await c.exited;
  return gone ? 'graceful' : 'killed';
}

/** How many of these processes are still running (not exited, not a zombie). */
function descendantsAlive(pids: number[]): number {
  let n = 0;
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') n += 1;
    } catch {}
  }
  return n;
}

/** SIGKILL to the child's group and wait until it is gone. */
export async function killChild(c: Child) {
  if (!running(c.child)) {
    killGroup(c.child);
    return;
  }
  killGroup(c.child);
  await c.exited;
}

/** Resident set size of a process in MB (VmRSS of /proc/<pid>/status), or null when it cannot be read. */
export function rssMb(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Parent pid and command name of every process of the machine, from /proc/<pid>/stat. */
function processTable(): { pid: number; ppid: number; comm: string }[] {
  const out: { pid: number; ppid: number; comm: string }[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] === 'Z') continue; // exited, not yet reaped: holds no memory
      out.push({
        pid: Number(entry),
        ppid: Number(f[1]),
        comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      });
    } catch {}
  }
  return out;
}

/**
 * The live processes `root` started, at any depth (the root itself included unless `withRoot` is
 * false): for `npm start`, the shell, a tsx parent, the server and the helpers it runs, without npm.
 */
export function descendants(root: number | undefined, withRoot = true): { pid: number; comm: string }[] {
  if (!root) return [];
  const table = processTable();
  const children = new Map<number, { pid: number; comm: string }[]>();
  for (const p of table) {
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const self = table.find((p) => p.pid === root);
  const out: { pid: number; comm: string }[] = withRoot && self ? [self] : [];
  const queue = [root];
  while (queue.length) {
    for (const c of children.get(queue.shift() as number) ?? []) {
      out.push(c);
      queue.push(c.pid);
    }
  }
  return out;
}

/** RSS in MB summed over processes (null when none could be read). */
export function rssOf(pids: number[]): number | null {
  let sum: number | null = null;
  for (const pid of pids) {
    const v = rssMb(pid);
    if (v !== null) sum = (sum ?? 0) + v;
  }
  return sum;
}

/** Samples the summed RSS of `pids()` every intervalMs while running; `stop()` returns the largest sum seen. */
export function rssSampler(pids: () => number[], intervalMs = 100) {
  let max: number | null = null;
  const take = () => {
    const v = rssOf(pids());
    if (v !== null && (max === null || v > max)) max = v;
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop(): number | null {
      clearInterval(timer);
      take();
      return max;
    },
  };
}

/** Cleanup steps run last-in first-out; one failing step does not skip the others; run at most once each. */
export function cleanups() {
  const steps: { what: string; run: () => unknown }[] = [];
  return {
    add(what: string, run: () => unknown) {
      steps.push({ what, run });
    },
    async run() {
      for (const step of steps.splice(0).reverse()) {
        try {
          await step.run();
        } catch (err) {
          process.stderr.write(`cleanup (${step.what}) failed: ${(err as Error).message}\n`);
        }
      }
    },
  };
}

export type Cleanups = ReturnType<typeof cleanups>;

/** Polls check() every intervalMs until it is true (→ true) or timeoutMs passed (→ false). */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 50) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= end) return false;
    await sleep(intervalMs);
  }
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time (user + system, ms) of one process from /proc/<pid>/stat, or null when it cannot be read. */
function cpuOf(pid: number): number | null {
  return cpuPartsOf(pid)?.all ?? null;
}

/** CPU time of one process in ms, all and in the kernel (system), from /proc/<pid>/stat. */
function cpuPartsOf(pid: number): { all: number; sys: number } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after its closing parenthesis.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { all: (Number(f[11]) + Number(f[12])) * TICK_MS, sys: Number(f[12]) * TICK_MS };
  } catch {
    return null;
  }
}

/**
 * Read and write system calls of one process (syscr + syscw of /proc/<pid>/io: read, readv, write,
 * writev and the like, sockets included), or null when it cannot be read (another user's process).
 */
function syscallsOf(pid: number): number | null {
  try {
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    const r = /^syscr:\s+(\d+)/m.exec(io);
    const w = /^syscw:\s+(\d+)/m.exec(io);
    return r && w ? Number(r[1]) + Number(w[1]) : null;
  } catch {
    return null;
  }
}

/** CPU time (ms) of every process whose command name is `name` (the local PostgreSQL server's processes). */
function cpuOfNamed(name: string): number {
  let sum = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== name) continue;
    } catch {
      continue;
    }
    sum += cpuOf(Number(entry)) ?? 0;
  }
  return sum;
}

export interface CpuSpent {
  /** the server measured (service or baseline): every process of its tree, npm aside */
  server: number | null;
  /** the part of `server` spent in the kernel (system time) */
  serverSys: number | null;
  /** read and write system calls of the server's processes (a count, not ms) */
  serverSyscalls: number | null;
  /** all `postgres` processes of this machine (null when the store is embedded PGlite) */
  postgres: number | null;
  /** this bench process: the webhook receiver and the bookkeeping */
  bench: number;
}

/**
 * CPU time spent during a run, in ms, from /proc (Linux): by the server's processes, by the local
 * PostgreSQL server's processes (backends that end during the run are not counted) and by the bench
 * process itself, which runs the webhook receiver. Null figures where /proc cannot tell.
 */
export function cpuMeter(pids: () => number[], withPostgres: boolean) {
  // Per pid, so that a process of the tree that starts or ends during the run adds only what it spent meanwhile.
  const serverOf = (list: number[]) =>
    new Map(
      list.map((p) => {
        const cpu = cpuPartsOf(p);
        return [p, { all: cpu?.all ?? 0, sys: cpu?.sys ?? 0, calls: syscallsOf(p) }] as const;
      }),
    );
  const first = serverOf(pids());
  const read = () => ({
    postgres: withPostgres ? cpuOfNamed('postgres') : null,
    bench: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
  });
  const start = read();
  return {
    stop(): CpuSpent {
      const end = read();
      const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
      const last = serverOf(pids());
      let server: number | null = first.size || last.size ? 0 : null;
      let serverSys: number | null = server;
      let serverSyscalls: number | null = server;
      for (const [pid, now] of last) {
        const was = first.get(pid);
        server = (server ?? 0) + now.all - (was?.all ?? 0);
        serverSys = (serverSys ?? 0) + now.sys - (was?.sys ?? 0);
        if (serverSyscalls !== null) {
          serverSyscalls = now.calls === null ? null : serverSyscalls + now.calls - (was?.calls ?? 0);
        }
      }
      return {
        server,
        serverSys,
        serverSyscalls,
        postgres: diff(start.postgres, end.postgres),
        bench: end.bench - start.bench,
      };
    },
  };
}
