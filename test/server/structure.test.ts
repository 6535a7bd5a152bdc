import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The shape rules of issue 29 that a reader would otherwise re-check by hand, as checks on the
 * source parsed with the TypeScript compiler: short functions, pages that call services, one
 * intake path.
 */

/** Folders whose every function (declaration, method, arrow, component) is at most MAX_LINES long. */
const SHORT_FUNCTION_FOLDERS = ['server/dashboard', 'server/intake', 'server/worker'];
const MAX_LINES = 80;

const ROOT = path.resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

function parse(file: string): ts.SourceFile {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
}

/** The name a reader would search for: the function's own, or the variable or property it is assigned to. */
function nameOf(node: ts.SignatureDeclaration, src: ts.SourceFile): string {
  if (node.name) return node.name.getText(src);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) {
    return parent.name.getText(src);
  }
  if (ts.isCallExpression(parent)) return `callback of ${parent.expression.getText(src).slice(0, 40)}`;
  return '(anonymous)';
}

/** Every function with a body longer than `max` lines, as "file:line name (n lines)". */
function longFunctions(files: string[], max: number): string[] {
  const out: string[] = [];
  for (const file of files) {
    const src = parse(file);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = src.getLineAndCharacterOfPosition(node.getStart(src)).line;
        const last = src.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = last - first + 1;
        if (lines > max) out.push(`${file}:${first + 1} ${nameOf(node, src)} (${lines} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(src);
  }
  return out;
}

/** The modules a file imports (static imports and re-exports), each with the names it takes. */
function importsOf(file: string): Array<{ from: string; names: string[] }> {
  const src = parse(file);
  return src.statements.flatMap((s) => {
    if (!(ts.isImportDeclaration(s) || ts.isExportDeclaration(s))) return [];
    if (!s.moduleSpecifier || !ts.isStringLiteral(s.moduleSpecifier)) return [];
    const bindings = ts.isImportDeclaration(s) ? s.importClause?.namedBindings : s.exportClause;
    const names =
      bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))
        ? bindings.elements.map((e) => (e.propertyName ?? e.name).text)
        : [];
    return [{ from: s.moduleSpecifier.text, names }];
  });
}

describe('function length', () => {
  it(`has no function over ${MAX_LINES} lines in ${SHORT_FUNCTION_FOLDERS.join(', ')}`, () => {
    const files = SHORT_FUNCTION_FOLDERS.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(10);
    expect(longFunctions(files, MAX_LINES)).toEqual([]);
  });

  it('finds a function one line too long, and the callback of a route inside it', () => {
    const dir = 'test/server/.structure-fixture';
    const body = Array.from({ length: MAX_LINES - 4 }, (_, i) => `    const v${i} = ${i};`).join('\n');
    const text = `export function register(app: { get(p: string, h: () => number): void }) {\n  app.get('/x', () => {\n${body}\n    return 1;\n  });\n}\n`;
    fs.mkdirSync(path.join(ROOT, dir), { recursive: true });
    try {
      fs.writeFileSync(path.join(ROOT, dir, 'long.ts'), text);
      const found = longFunctions(sourceFiles(dir), MAX_LINES);
      expect(found).toEqual([`${dir}/long.ts:1 register (${MAX_LINES + 1} lines)`]);
      expect(longFunctions(sourceFiles(dir), MAX_LINES + 1)).toEqual([]);
    } finally {
      fs.rmSync(path.join(ROOT, dir), { recursive: true, force: true });
    }
  });
});

describe('dashboard pages call services', () => {
  /** session.ts is the sign-in middleware, not a page: it reads the session's user row itself. */
  const NOT_PAGES = new Set(['server/dashboard/session.ts']);

  it('imports neither drizzle nor the database from a page', () => {
    const wrong = sourceFiles('server/dashboard')
      .filter((f) => !NOT_PAGES.has(f))
      .flatMap((f) =>
        importsOf(f)
          .map((i) => i.from)
          .filter((m) => m === 'drizzle-orm' || m.startsWith('drizzle-orm/') || /(^|\/)db\//.test(m))
          .map((m) => `${f} imports ${m}`),
      );
    expect(wrong).toEqual([]);
  });
});

describe('one intake path', () => {
  it('runs intake() only through intake/receive.ts, for the route and the dashboard alike', () => {
    const callers = ['server', 'mcp', 'cli']
      .flatMap(sourceFiles)
      .filter((f) => importsOf(f).some((i) => /(^|\/)submit\.js$/.test(i.from) && i.names.includes('intake')));
    expect(callers).toEqual(['server/intake/receive.ts']);
  });
});
