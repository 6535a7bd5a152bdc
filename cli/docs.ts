/**
 * `npm run docs:cli`: the CLI's command table in docs/cli.md, generated from the command map (and so
 * from the operation registry). Prints it; with --write replaces the section between
 * <!-- cli-commands:start --> and <!-- cli-commands:end --> in docs/cli.md.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { operations } from '../shared/contracts/index.js';
import { COMMANDS } from './commands.js';

const START = '<!-- cli-commands:start -->';
const END = '<!-- cli-commands:end -->';
/** The page that holds the table. */
export const CLI_DOC = 'docs/cli.md';

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
  const page = await readFile(CLI_DOC, 'utf8');
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) {
    process.stderr.write(`${CLI_DOC} has no ${START} … ${END} section; add one where the table belongs.\n`);
    process.exitCode = 1;
    return;
  }
  const next = `${page.slice(0, start + START.length)}\n${table}\n${page.slice(end)}`;
  if (next !== page) await writeFile(CLI_DOC, next);
  process.stdout.write(`${CLI_DOC}: ${next === page ? 'command table up to date' : 'command table updated'}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
