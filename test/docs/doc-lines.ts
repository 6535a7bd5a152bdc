import fs from 'node:fs';
import path from 'node:path';
import type { DocLine } from './shell.js';

/**
 * What a shell line of the README or docs/ names, checked without running it: npm scripts, files,
 * formsvc commands and their flags, environment variables. The lines that can run in a test (the
 * README's tour: curl, export, the CLI) run in llms.test.ts; the others start servers, install, or
 * take minutes (npm ci, npm test, npm run bench), so what they name must at least exist.
 */

type Manifest = { commands: Record<string, { aliases?: string[]; flags: Record<string, { char?: string }> }> };

const SOURCE_DIRS = ['server', 'bench', 'test', 'scripts', 'cli', 'shared', 'faults', 'fuzz', 'mcp'];
let sources: string | undefined;

/** Every source text of the repository, to find where an environment variable is read. */
function sourceText(): string {
  if (sources !== undefined) return sources;
  const parts: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|tsx|mjs|js)$/.test(e.name) && !p.startsWith(path.join('test', 'docs'))) {
        parts.push(fs.readFileSync(p, 'utf8'));
      }
    }
  };
  for (const d of SOURCE_DIRS) if (fs.existsSync(d)) walk(d);
  sources = parts.join('\n');
  return sources;
}

/** Words of a shell line, quotes kept off; stops at a redirection or a pipe. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) {
    const w = m[1] ?? m[2] ?? m[3];
    if (m[3] && /^(>|>>|\||2>)/.test(m[3])) break;
    out.push(w);
  }
  return out;
}

/** The command of a formsvc invocation and the problems with it (unknown command, unknown flag). */
function checkFormsvc(args: string[], manifest: Manifest): string[] {
  const ids = new Map<string, string>();
  for (const [id, c] of Object.entries(manifest.commands)) {
    ids.set(id, id);
    for (const a of c.aliases ?? []) ids.set(a, id);
  }
  const positional = args.filter((a) => !a.startsWith('-'));
  let id: string | undefined;
  for (let n = positional.length; n > 0 && !id; n--) id = ids.get(positional.slice(0, n).join(':'));
  if (!id) return [`formsvc ${positional.join(' ')}: no such command`];
  const flags = manifest.commands[id].flags;
  const problems: string[] = [];
  for (const a of args.filter((x) => x.startsWith('-'))) {
    const name = a.replace(/^--?/, '').replace(/=.*$/, '');
    const known = a.startsWith('--')
      ? name in flags || name === 'help' || (name.startsWith('no-') && name.slice(3) in flags)
      : Object.values(flags).some((f) => f.char === name) || name === 'h';
    if (!known) problems.push(`formsvc ${id.replaceAll(':', ' ')} has no flag ${a}`);
  }
  return problems;
}

const exists = (file: string) => (fs.existsSync(file) ? [] : [`${file} does not exist`]);

/**
 * The problems with one shell line. curl and export lines may stand only in the README's tour,
 * which llms.test.ts runs as written against a fresh server (with its formsvc lines).
 */
export function checkLine(doc: DocLine, manifest: Manifest): string[] {
  const scripts = JSON.parse(fs.readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
  const problems: string[] = [];
  let rest = doc.line;
  // Leading VAR=value assignments: each must be a variable some source of the repository reads.
  for (let m = /^([A-Z][A-Z0-9_]*)=(\S*)\s+/.exec(rest); m; m = /^([A-Z][A-Z0-9_]*)=(\S*)\s+/.exec(rest)) {
    if (!new RegExp(`\\b${m[1]}\\b`).test(sourceText())) problems.push(`${m[1]} is read nowhere in the sources`);
    rest = rest.slice(m[0].length);
  }
  if (/^(curl|export) /.test(rest)) {
    return doc.file === 'README.md' ? problems : [`${rest.split(' ')[0]} lines run only in the README's tour`];
  }
  for (const part of rest.split(/\s*&&\s*/)) {
    const w = words(part);
    const [cmd, ...args] = w;
    if (cmd === 'npm') {
      if (args[0] === 'ci') problems.push(...exists('package-lock.json'));
      else if (args[0] === 'start' || args[0] === 'test') {
        if (!scripts[args[0]]) problems.push(`no npm script ${args[0]}`);
      } else if (args[0] === 'run') {
        if (!scripts[args[1]]) problems.push(`no npm script ${args[1]}`);
      } else problems.push(`npm ${args[0]}: not a command the docs use`);
    } else if (cmd === 'npx' && args[0] === 'formsvc') {
      problems.push(...checkFormsvc(args.slice(1), manifest));
    } else if (cmd === 'npx' && args[0] === 'vitest' && args[1] === 'run') {
      for (const f of args.slice(2).filter((a) => !a.startsWith('-'))) problems.push(...exists(f));
    } else if ((cmd === 'npx' && args[0] === 'tsx') || cmd === 'node') {
      const file = cmd === 'node' ? args[0] : args[1];
      problems.push(...exists(file));
    } else if (cmd === 'createdb') {
      // PostgreSQL's own tool: the next line of the page starts the server on that database.
    } else {
      problems.push(`${cmd}: not a command the docs tests know; run it in a test or check what it names here`);
    }
  }
  return problems;
}
