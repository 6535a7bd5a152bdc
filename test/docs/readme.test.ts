import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandTable } from '../../cli/docs.js';
import { checkLine } from './doc-lines.js';
import { fencedShellLines } from './shell.js';

/**
 * The README and docs/ stand alone in a fresh clone: their links resolve, every shell line names
 * what exists (llms.test.ts runs the README's tour), the settings table is every setting the
 * server reads, and the CLI's command table is the generated one.
 */
const readme = fs.readFileSync('README.md', 'utf8');
const pages = [
  'README.md',
  ...fs
    .readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = (file: string) => fs.readFileSync(file, 'utf8');

/**
 * Pages other engineers write in parallel, linked before they land here: a link to one of them
 * may not resolve yet. Once a page exists, its links are checked like any other.
 */
const COMING = new Set([
  'docs/architecture.md',
  'docs/authentication.md',
  'docs/security.md',
  'docs/storage.md',
  'docs/fleet.md',
  'docs/dependencies.md',
]);

/** The text of one `## ` section of a page. */
function section(page: string, title: string): string {
  const start = page.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`no section "${title}"`);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

describe('README.md and docs/', () => {
  it('the README is a front page: under 250 lines, what formsvc is, then the two commands first', () => {
    const lines = readme.split('\n');
    expect(lines.length).toBeLessThan(250);
    const intro = readme.slice(0, readme.indexOf('\n## '));
    expect(intro).toMatch(/formsvc is an open-source form backend/);
    const first = fencedShellLines('README.md', readme).slice(0, 2);
    expect(first.map((l) => l.line)).toEqual(['npm ci && npm start', 'npm test']);
  });

  it('refers to nothing outside the repository: every relative link and named path is a file of it', () => {
    for (const file of pages) {
      const page = text(file);
      const dir = path.dirname(file);
      const links = [...page.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]);
      for (const target of links.filter((l) => !/^[a-z]+:/.test(l))) {
        const resolved = path.normalize(path.join(dir, target));
        expect(resolved.startsWith('..'), `${file} links outside the repository: ${target}`).toBe(false);
        if (COMING.has(resolved) && !fs.existsSync(resolved)) continue;
        expect(fs.existsSync(resolved), `${file} links to ${target}`).toBe(true);
      }
      // Files named in backticks as repository paths exist too.
      const named = [
        ...page.matchAll(/`((?:server|cli|shared|scripts|test|bench|faults|fuzz|migrations)\/[\w./-]+)`/g),
      ];
      for (const [, f] of named) expect(fs.existsSync(f), `${file} names ${f}`).toBe(true);
    }
  });

  it('links every page of docs/ from the README and from docs/README.md', () => {
    const index = text('docs/README.md');
    for (const file of pages.filter((f) => f.startsWith('docs/') && f !== 'docs/README.md')) {
      expect(readme, `README links ${file}`).toContain(`](${file})`);
      expect(index, `docs/README.md links ${file}`).toContain(`](${path.basename(file)})`);
    }
  });

  it('every shell line of the README and docs/ names scripts, files, commands, flags and settings that exist', () => {
    const manifest = JSON.parse(text('oclif.manifest.json'));
    const lines = pages.flatMap((file) => fencedShellLines(file, text(file)));
    expect(lines.length).toBeGreaterThan(20);
    const problems = lines.flatMap((l) => checkLine(l, manifest).map((p) => `${l.file}:${l.at}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('the checks catch a wrong line: a missing script, file, command or flag, an unknown setting', () => {
    const manifest = JSON.parse(text('oclif.manifest.json'));
    const wrong = [
      'npm run no-such-script',
      'npx vitest run test/no-such.test.ts',
      'npx formsvc forms frobnicate',
      'npx formsvc forms list --no-such-flag',
      'NO_SUCH_SETTING_X=1 npm start',
      'rm -rf /tmp/x',
    ];
    for (const line of wrong) {
      expect(checkLine({ file: 'docs/x.md', at: 1, line }, manifest), line).not.toEqual([]);
    }
    expect(checkLine({ file: 'docs/x.md', at: 1, line: 'curl -sS http://127.0.0.1:8787/healthz' }, manifest)).toEqual([
      "curl lines run only in the README's tour",
    ]);
  });

  it('docs/operations.md lists every setting server/config.ts reads, each row with a default and a meaning', () => {
    const config = fs.readFileSync('server/config.ts', 'utf8');
    const read = new Set([...config.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]));
    expect(read.size).toBeGreaterThan(20);
    const rows = section(text('docs/operations.md'), 'Settings')
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => l.split(' | '));
    const documented = new Set(
      rows.flatMap((cells) => [...cells[0].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])),
    );
    expect([...read].filter((name) => !documented.has(name))).toEqual([]);
    for (const cells of rows) {
      expect(cells, cells.join(' | ')).toHaveLength(3);
      expect(cells[1].trim(), cells.join(' | ')).not.toBe('');
      expect(cells[2].replace(/\|$/, '').trim(), cells.join(' | ')).not.toBe('');
    }
  });

  it('docs/cli.md holds the generated command table as npm run docs:cli writes it', () => {
    const page = text('docs/cli.md');
    const start = page.indexOf('<!-- cli-commands:start -->\n');
    const end = page.indexOf('\n<!-- cli-commands:end -->');
    expect(start).toBeGreaterThan(0);
    expect(
      page.slice(start + '<!-- cli-commands:start -->\n'.length, end) === commandTable(),
      'docs/cli.md: the command table is stale; run npm run docs:cli',
    ).toBe(true);
  });
});
