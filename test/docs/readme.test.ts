import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** The README stands alone in a fresh clone, and its settings table is every setting the server reads. */
const readme = fs.readFileSync('README.md', 'utf8');

/** The text of one `## ` section. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

describe('README.md', () => {
  it('refers to nothing outside the repository: no ../ paths, every relative link names a file of it', () => {
    expect(readme).not.toMatch(/\.\.\//);
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]);
    for (const target of links.filter((l) => !/^[a-z]+:/.test(l))) {
      expect(fs.existsSync(path.resolve(target)), `README links to ${target}`).toBe(true);
    }
    // Files named in backticks as repository paths exist too.
    const named = [
      ...readme.matchAll(/`((?:server|cli|shared|scripts|test|bench|faults|fuzz|migrations)\/[\w./-]+)`/g),
    ];
    for (const [, file] of named) expect(fs.existsSync(path.resolve(file)), `README names ${file}`).toBe(true);
  });

  it('lists every setting server/config.ts reads, each row with a default and a meaning', () => {
    const config = fs.readFileSync('server/config.ts', 'utf8');
    const read = new Set([...config.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]));
    expect(read.size).toBeGreaterThan(20);
    const rows = section('Settings')
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
});
