#!/usr/bin/env node
/**
 * `npm run test:package`: the package as a user gets it. Packs the project (which builds it), checks
 * what the tarball holds, installs it into an empty temporary folder (dependencies from the
 * registry; --prefer-offline uses the npm cache where it can), then from that folder only:
 * `formsvc serve` in a per-user data folder, `formsvc login` with the code from the server's console
 * mail, `formsvc quickstart --wait` delivering a webhook to a local receiver, and `formsvc mcp`
 * listing its tools over stdio. Everything stays on loopback except the install itself.
 * KEEP=1 leaves the temporary folder in place.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './build-state.mjs';

const run = promisify(execFile);
const started = Date.now();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-package-'));
const children = [];
const step = (text) => console.log(`package-test: ${text} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

function fail(text) {
  throw new Error(text);
}

async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/** Polls fn until it returns a truthy value or ms pass. */
async function until(what, fn, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The installed bin, as `npx formsvc …` runs it from the install folder (or the exact `npx -y formsvc …`). */
function formsvc(args, env, opts = {}) {
  const [cmd, ...pre] = opts.npx
    ? ['npx', '-y', 'formsvc']
    : [path.join(tmp, 'app', 'node_modules', '.bin', 'formsvc')];
  const child = spawn(cmd, [...pre, ...args], {
    cwd: path.join(tmp, 'app'),
    env: { ...env, NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += c;
  });
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  const done = new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done, out: () => stdout, err: () => stderr };
}

async function ok(args, env) {
  const r = await formsvc(args, env).done;
  if (r.code !== 0) fail(`formsvc ${args.join(' ')} exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

async function main() {
  // 1. Pack (prepare builds dist/ and the manifest), and look inside.
  const { stdout: packed } = await run('npm', ['pack', '--json', '--pack-destination', tmp], {
    cwd: ROOT,
    maxBuffer: 64 << 20,
  });
  const [info] = JSON.parse(packed); // the lifecycle scripts log to stderr: stdout is npm's JSON alone
  const files = info.files.map((f) => f.path);
  step(`packed ${info.filename}: ${files.length} files, ${Math.round(info.size / 1024)} kB`);
  const unwanted = files.filter((f) => /^(test|bench|fuzz|faults|scripts|server|shared|cli|mcp)\/|\.ts$/.test(f));
  if (unwanted.length) fail(`the tarball holds files that do not run: ${unwanted.slice(0, 5).join(', ')}`);
  for (const need of ['bin/formsvc.js', 'dist/server/main.js', 'dist/cli/main.js', 'oclif.manifest.json', 'llms.txt'])
    if (!files.includes(need)) fail(`the tarball lacks ${need}`);
  if (!files.some((f) => f.startsWith('migrations/'))) fail('the tarball lacks migrations/');

  // 2. Install into an empty folder, as a user would.
  const app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), '{"name":"formsvc-package-test","private":true}\n');
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(tmp, info.filename)], {
    cwd: app,
    maxBuffer: 64 << 20,
  });
  if (fs.existsSync(path.join(app, 'node_modules', 'tsx'))) fail('tsx was installed: it must be a dev dependency only');
  step('installed into an empty folder');

  // 3. formsvc serve, data in the per-user folder (XDG_DATA_HOME here), mail printed to its stdout.
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH,
    HOME: path.join(tmp, 'home'),
    XDG_DATA_HOME: path.join(tmp, 'xdg'),
    FORMSVC_CONFIG: path.join(tmp, 'profiles.json'),
    FORMSVC_BASE_URL: base,
    MAIL_TRANSPORT: 'console',
    OUTBOUND_ALLOW_PRIVATE: 'true',
    WORKER_TICK_MS: '200',
  };
  fs.mkdirSync(env.HOME);
  const server = formsvc(['serve', '--port', String(port)], env);
  const health = await until(
    'formsvc serve to answer /healthz',
    async () => {
      if (server.child.exitCode !== null) fail(`formsvc serve exited ${server.child.exitCode}: ${server.err()}`);
      return (await fetch(`${base}/healthz`)).ok;
    },
    120_000,
  );
  if (!health) fail('no health');
  const dataDir = path.join(env.XDG_DATA_HOME, 'formsvc');
  if (!server.out().includes(`listening on ${base}`)) fail(`serve did not say where it listens: ${server.out()}`);
  if (!server.out().includes(`data in embedded PGlite in ${dataDir}`))
    fail(`serve did not say where the data is: ${server.out()}`);
  if (!fs.existsSync(path.join(dataDir, 'pg'))) fail(`no database in the per-user folder ${dataDir}`);
  const llms = await (await fetch(`${base}/llms.txt`)).text();
  if (!llms.startsWith('# formsvc')) fail('/llms.txt is not served from the package');
  step(`formsvc serve answers on ${base}, data in ${dataDir}`);

  // 4. login with the code from the console mail, then quickstart --wait to a local receiver.
  const email = `package-${Date.now()}@example.com`;
  await ok(['login', '--email', email], env);
  const code = await until('the code in the console mail', async () => {
    const m = new RegExp(`to ${email}[\\s\\S]*?\\b(\\d{6})\\b`).exec(server.out());
    return m?.[1];
  });
  await ok(['login', '--email', email, '--code', code], env);
  const whoami = JSON.parse(await ok(['whoami', '--json'], env));
  if (!whoami.organization?.id) fail(`whoami: ${JSON.stringify(whoami)}`);

  const hooks = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      hooks.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  try {
    const hook = `http://127.0.0.1:${receiver.address().port}/hook`;
    const qs = JSON.parse(
      await ok(['quickstart', '--name', 'Package test', '--webhook-url', hook, '--wait', '--json'], env),
    );
    if (!hooks.some((h) => h.headers['service-delivery']))
      fail(`quickstart --wait returned but the receiver got no signed webhook: ${JSON.stringify(qs).slice(0, 300)}`);
    step(`quickstart --wait delivered ${hooks.length} webhook(s) to the local receiver`);
  } finally {
    receiver.close();
  }

  // 5. The README's MCP host block as written (`npx -y formsvc mcp`): initialize, then list the tools.
  const mcp = formsvc(['mcp'], env, { npx: true });
  const send = (msg) => mcp.child.stdin.write(`${JSON.stringify(msg)}\n`);
  const answer = (id) =>
    until(`the MCP answer ${id}`, async () =>
      mcp
        .out()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((m) => m.id === id),
    );
  send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'package-test', version: '1' } },
  });
  await answer(1);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const tools = (await answer(2)).result?.tools?.map((t) => t.name) ?? [];
  for (const name of ['forms_create', 'quickstart_and_verify'])
    if (!tools.includes(name)) fail(`MCP tools lack ${name}: ${tools}`);
  mcp.child.stdin.end();
  step(`formsvc mcp lists ${tools.length} tools`);

  // 6. Ctrl-C: serve stops gracefully.
  server.child.kill('SIGINT');
  const { code: exit } = await server.done;
  if (exit !== 0) fail(`formsvc serve exited ${exit} on SIGINT: ${server.err()}`);
  step('formsvc serve stopped on SIGINT');
}

try {
  await main();
  console.log(`package-test: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (err) {
  console.error(`package-test: FAILED: ${err.message}`);
  process.exitCode = 1;
} finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (process.env.KEEP) console.log(`package-test: kept ${tmp}`);
  else fs.rmSync(tmp, { recursive: true, force: true });
}
