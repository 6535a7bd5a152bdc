/**
 * `npm run docs:cli`: the README's command table, generated from the command map (and so from the
 * operation registry). Prints it; with --write replaces the section between
 * <!-- cli-commands:start --> and <!-- cli-commands:end --> in README.md.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { operations } from '../shared/contracts/index.js';
import { COMMANDS } from './commands.js';

const START = '<!-- cli-commands:start -->';
const END = '<!-- cli-commands:end -->';

const byId = new Map(operations.map((o) => [o.operationId, o]));
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

export function commandTable(): string {
  const rows = Object.entries(COMMANDS)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, cmd]) => {
      const name = `\`formsvc ${id.replaceAll(':', ' ')}\``;
      const aliases = (cmd.aliases ?? []).map((a) => `\`${a.replaceAll(':', ' ')}\``).join(', ');
      const calls = cmd.operationIds
        .map((opId) => byId.get(opId))
        .filter((o) => o !== undefined)
        .map((o) => `\`${o.method.toUpperCase()} ${o.path}\``)
        .join(', ');
      return `| ${name}${aliases ? ` (also ${aliases})` : ''} | ${calls || '—'} | ${cell(cmd.summary ?? '')} |`;
    });
  return [
    `${Object.keys(COMMANDS).length} commands. Every command takes \`--json\` (the default when stdout is not a terminal), \`--base-url\`, \`--api-key\` and \`--profile\`; \`formsvc <command> --help\` shows its flags and examples.`,
    '',
    '| command | calls | what it does |',
    '|---|---|---|',
    ...rows,
  ].join('\n');
}

async function main() {
  const table = commandTable();
  if (!process.argv.includes('--write')) {
    process.stdout.write(`${table}\n`);
    return;
  }
  const readme = await readFile('README.md', 'utf8');
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) {
    process.stderr.write(`README.md has no ${START} … ${END} section; add one where the table belongs.\n`);
    process.exitCode = 1;
    return;
  }
  const next = `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
  if (next !== readme) await writeFile('README.md', next);
  process.stdout.write(`README.md: ${next === readme ? 'command table up to date' : 'command table updated'}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
