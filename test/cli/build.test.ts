import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { staleReason, stampInputs } from '../../scripts/build-state.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-build-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * The modules a compiled entry point loads (every import the ESM loader resolves, through a
 * resolve hook), and how it exited.
 */
function modulesOf(args: string[], env: Record<string, string> = {}) {
  const log = path.join(tmp, `modules-${Math.random().toString(36).slice(2)}.log`);
  const hooks = path.join(tmp, 'hooks.mjs');
  fs.writeFileSync(
    hooks,
    `import fs from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  fs.appendFileSync(log, r.url + '\\n');
  return r;
}
`,
  );
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`file://${hooks}`)}, { data: { log: ${JSON.stringify(log)} } });`;
  const r = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, ...args], {
    env: { ...process.env, NO_COLOR: '1', FORMSVC_CONFIG: path.join(tmp, 'profiles.json'), ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const urls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  // The project's compiled files (not a package's dist/), relative to the project.
  const ownDist = pathToFileURL(path.resolve('dist')).href;
  const dist = urls.filter((u) => u.startsWith(`${ownDist}/`)).map((u) => `dist/${u.slice(ownDist.length + 1)}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, urls, dist };
}

const chunk = (files: string[], name: string) => files.some((f) => f.startsWith(`dist/chunks/${name}-`));

describe('the compiled CLI loads only what a command needs', () => {
  it('--help reads the manifest and imports no command, no contracts and no server', () => {
    const help = modulesOf(['bin/formsvc.js', '--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('forms');
    for (const name of ['whoami', 'login', 'generate', 'contracts', 'serve', 'start', 'stdio'])
      expect(chunk(help.dist, name), name).toBe(false);
    expect(help.dist).not.toContain('dist/cli/lazy-commands.js');
    expect(help.urls.some((u) => u.includes('/node_modules/zod/'))).toBe(false);
  });

  it('whoami imports whoami, not the other commands, the MCP server or the server', () => {
    const r = modulesOf(['bin/formsvc.js', 'whoami', '--api-key', 'fs_test', '--base-url', 'http://127.0.0.1:9']);
    expect(r.status).toBe(1); // nothing listens on port 9: an API error, after loading the command
    expect(chunk(r.dist, 'whoami')).toBe(true);
    for (const name of ['login', 'quickstart', 'generate', 'serve', 'start', 'stdio'])
      expect(chunk(r.dist, name), name).toBe(false);
  });

  it('whoami loads its own contract only: no other operation, no hono, no OpenAPI generator', () => {
    const r = modulesOf(['bin/formsvc.js', 'whoami', '--api-key', 'fs_test', '--base-url', 'http://127.0.0.1:9']);
    expect(r.status).toBe(1);
    const code = r.dist.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    expect(code).toContain('"me_get"');
    for (const other of ['forms_create', 'submissions_list', 'webhooks_create', 'keys_create'])
      expect(code.includes(`"${other}"`), other).toBe(false);
    expect(code).not.toContain('OpenAPIHono');
    expect(r.urls.some((u) => u.includes('/node_modules/hono/'))).toBe(false);
  });

  it('the server loads neither oclif, the CLI nor the MCP SDK at start', () => {
    const r = modulesOf(['dist/server/main.js'], { MAIL_TRANSPORT: 'bogus' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('MAIL_TRANSPORT must be');
    expect(r.urls.some((u) => u.includes('/node_modules/@oclif/'))).toBe(false);
    // oclif is bundled into the CLI's chunks: none of them loads with the server.
    expect(r.dist.some((f) => fs.readFileSync(f, 'utf8').includes('oclif'))).toBe(false);
    expect(r.dist.some((f) => f.startsWith('dist/cli/'))).toBe(false);
    expect(r.urls.some((u) => u.includes('/node_modules/tsx/'))).toBe(false);
    // The MCP SDK loads with the first POST /mcp, not at start.
    expect(r.urls.some((u) => u.includes('/node_modules/@modelcontextprotocol/'))).toBe(false);
  });
});

describe('build stamp', () => {
  const root = path.join(tmp, 'project');
  fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
  fs.writeFileSync(path.join(root, 'a.ts'), 'export const a = 1;\n');
  fs.writeFileSync(path.join(root, 'b.ts'), 'export const b = 1;\n');
  const later = (file: string) => {
    const t = new Date(Date.now() + 5_000);
    fs.utimesSync(path.join(root, file), t, t);
  };

  it('says when there is no build, and accepts the sources it was built from', () => {
    expect(staleReason(root)).toBe('there is no build in dist/');
    stampInputs(['a.ts', 'b.ts'], root);
    expect(staleReason(root)).toBeNull();
  });

  it('takes a newer file with the same content as unchanged, and names a changed or deleted one', () => {
    later('a.ts');
    expect(staleReason(root)).toBeNull();
    fs.writeFileSync(path.join(root, 'b.ts'), 'export const b = 2;\n');
    later('b.ts');
    expect(staleReason(root)).toBe('b.ts changed since the last build');
    stampInputs(['a.ts', 'b.ts'], root);
    fs.rmSync(path.join(root, 'a.ts'));
    expect(staleReason(root)).toBe('a.ts is gone since the last build');
  });
});
