/**
 * Runs the formsvc CLI: oclif with the explicit command map of cli/commands.ts, and one place that
 * turns failures into exit codes: 1 for API errors (already printed), 2 for usage errors (one line).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Config, Errors, flush, run, settings } from '@oclif/core';
import { Reported, UsageError } from './base.js';

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

export async function main(argv: string[]): Promise<void> {
  // bin/formsvc.js registered tsx already: load cli/commands.ts as written, without oclif's ts lookup.
  settings.enableAutoTranspile = false;
  try {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const pjson = JSON.parse(await readFile(`${root}/package.json`, 'utf8'));
    const { topicDescriptions } = await import('./commands.js');
    pjson.oclif = { ...pjson.oclif, topics: { ...topicDescriptions(), ...pjson.oclif?.topics } };
    await run(argv, await Config.load({ root, pjson }));
    await flush();
  } catch (err) {
    process.exitCode = exitCode(err);
  }
}

function exitCode(err: unknown): number {
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
