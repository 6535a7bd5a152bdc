/**
 * Runs the formsvc CLI: oclif with oclif.manifest.json and the lazy command map of cli/lazy-commands.ts
 * (each command imported only when it runs), and one place that
 * turns failures into exit codes: 1 for API errors (already printed), 2 for usage errors (one line).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Config, Errors, flush, run, settings } from '@oclif/core';
import { topicDescriptions } from './topics.js';

/** One readable line from an oclif parse error ("Parsing --limit\n\texpects an integer…" → one line). */
function oneLine(message: string): string {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^See more help with/.test(l));
  const m = /^Parsing (--[\w-]+)\s*$/.exec(lines[0] ?? '');
  if (m && lines[1]) return `${m[1]} ${lines.slice(1).join(' ')}`;
  return lines.join(' ');
}

/** The package root: the nearest folder above this file with a package.json (dist/cli/ in a build). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return dir;
}

/**
 * A command that only calls the API exits as soon as its output is written. Node's fetch parses HTTP
 * with llhttp compiled to WebAssembly; V8 compiles it with Liftoff, then recompiles it with TurboFan on
 * a background thread, and a process whose event loop is empty still waits for that job before it
 * exits: 240 ms or more after the last line was printed (no keep-alive socket holds it: the idle
 * socket is unref'd, and Connection: close changed nothing). Liftoff alone is fast enough for the
 * few responses a command parses. Not for `serve`, whose PGlite runs as WebAssembly too and wants
 * TurboFan's code.
 */
export function exitPromptly(argv: string[]): void {
  if (argv[0] !== 'serve') setFlagsFromString('--liftoff-only');
}

export async function main(argv: string[]): Promise<void> {
  exitPromptly(argv);
  // Compiled code only: no TypeScript path lookup.
  settings.enableAutoTranspile = false;
  try {
    const root = packageRoot();
    // The manifest lists every command with its flags and help; no command is imported to show help.
    const [pjson, manifest] = await Promise.all(
      ['package.json', 'oclif.manifest.json'].map(async (f) => JSON.parse(await readFile(path.join(root, f), 'utf8'))),
    );
    const topics = topicDescriptions(Object.keys(manifest.commands));
    pjson.oclif = { ...pjson.oclif, topics: { ...topics, ...pjson.oclif?.topics } };
    await run(argv, await Config.load({ root, pjson }));
    await flush();
  } catch (err) {
    process.exitCode = await exitCode(err);
  }
}

async function exitCode(err: unknown): Promise<number> {
  // base.ts loads the client and the contracts: only on this path, never for --help.
  const { Reported, UsageError } = await import('./base.js');
  if (err instanceof Reported) return err.exitCode;
  if (err instanceof UsageError) {
    process.stderr.write(`Error: ${err.message}\n`);
    return 2;
  }
  if (err instanceof Errors.ExitError) return err.oclif.exit ?? 0;
  if (err instanceof Errors.CLIError) {
    // Parse errors (unknown flag, wrong type, missing arg) and unknown commands: usage errors.
    process.stderr.write(`Error: ${oneLine(err.message)}\n`);
    return 2;
  }
  const e = err as Error;
  if (/^Parsing --/.test(e?.message ?? '')) {
    // A flag's own parse function refused the value (oclif wraps it in a plain Error).
    process.stderr.write(`Error: ${oneLine(e.message)}\n`);
    return 2;
  }
  process.stderr.write(`Error: ${e?.message ?? String(err)}\n`);
  if (process.env.DEBUG) process.stderr.write(`${e?.stack ?? ''}\n`);
  return 1;
}
