/**
 * oclif's command_not_found hook: a mistyped command names the closest real one, written with
 * spaces as the docs write commands (`formsvc: "forms lsit" is not a command. Did you mean "forms
 * list"?`), and exits 2 like every usage error.
 */
import type { Hook } from '@oclif/core';
import { Reported } from '../base.js';

/** Edit distance with adjacent transpositions counted once ("lsit" is one step from "list"). */
export function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)] as number[]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The closest command to what was typed. oclif may have joined argument words into the id
 * (`submitt fm_1` arrives as `submitt:fm_1`), so leading runs of words are tried, longest first,
 * and the first run with a match wins; a match differs (it is not a command as typed) by at most a
 * third of its length (at least 1, at most 3 edits).
 */
export function closest(typedWords: string[], commands: string[]): { typed: string; command: string } | null {
  for (let n = typedWords.length; n >= 1; n--) {
    const typed = typedWords.slice(0, n).join(' ');
    let best: { command: string; d: number } | null = null;
    for (const command of commands) {
      const d = distance(typed, command);
      if (d === 0 || d > Math.min(3, Math.max(1, Math.floor(command.length / 3)))) continue;
      if (!best || d < best.d) best = { command, d };
    }
    if (best) return { typed, command: best.command };
  }
  return null;
}

const hook: Hook<'command_not_found'> = async (opts) => {
  const words = opts.id.split(':');
  // Topics too: `formsvc forms` lists the forms commands.
  const ids = [...opts.config.commandIDs, ...opts.config.topics.map((t) => t.name)];
  const commands = [...new Set(ids.map((id) => id.split(':').join(' ')))];
  const match = closest(words, commands);
  const typed = match?.typed ?? words.join(' ');
  const bin = opts.config.bin;
  process.stderr.write(
    match
      ? `${bin}: "${typed}" is not a command. Did you mean "${match.command}"?\n`
      : `${bin}: "${typed}" is not a command. See ${bin} --help for the commands.\n`,
  );
  throw new Reported(2);
};

export default hook;
