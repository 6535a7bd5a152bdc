import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  healthy,
  http,
  killServer,
  loopbackServerEnv,
  onboardOver,
  startServer,
} from '../helpers/process.js';
import { startReceiver, until } from '../helpers/receiver.js';
import { startSmtpSink } from '../helpers/smtp.js';

type Run = { code: number | null; stdout: string; stderr: string };

/** `formsvc deliveries retry`, one by id or many by filter, against a real server process. */
describe('formsvc deliveries retry', () => {
  const cleanups: (() => unknown)[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-replay-'));
  let base = '';
  let key = '';

  function cli(args: string[]): Promise<Run> {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FORMSVC_')));
    const child = spawn(process.execPath, ['bin/formsvc.js', ...args, '--json'], {
      env: {
        ...clean,
        FORMSVC_CONFIG: path.join(dir, 'profiles.json'),
        FORMSVC_BASE_URL: base,
        FORMSVC_API_KEY: key,
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  beforeAll(async () => {
    const smtp = await startSmtpSink();
    cleanups.push(() => smtp.close());
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const server = startServer({
      ...loopbackServerEnv(port, smtp.url),
      DATA_DIR: path.join(dir, 'data'),
      ...(process.env.TEST_DATABASE_URL ? { DATABASE_URL: process.env.TEST_DATABASE_URL } : {}),
    });
    cleanups.push(() => killServer(server));
    await healthy(base);
    key = await onboardOver(base, smtp, `replay-${Date.now()}@example.com`);
  }, 60_000);

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('replays the dead deliveries of a destination by filter flags, and refuses a bare call with the API hint', async () => {
    const hook = await startReceiver(() => ({ status: 410 }));
    cleanups.push(() => hook.close());
    const form = await http(base, 'POST', '/v1/forms', key, { name: 'Replay form' });
    const dest = await http(base, 'POST', '/v1/destinations', key, {
      type: 'webhook',
      name: 'gone',
      config: { url: hook.url },
    });
    await http(base, 'POST', '/v1/routes', key, { form_id: form.json.id, destination_id: dest.json.id });
    const sub = await http(base, 'POST', `/s/${form.json.id}`, undefined, { n: 1 });
    const listed = () => http(base, 'GET', `/v1/deliveries?submission_id=${sub.json.submission_id}`, key);
    const dead = await until('a dead delivery', async () => {
      const d = (await listed()).json.data[0];
      return d?.status === 'dead' && d;
    });

    const bulk = await cli(['deliveries', 'retry', '--status', 'dead', '--destination', dest.json.id]);
    expect(bulk.code).toBe(0);
    expect(JSON.parse(bulk.stdout)).toEqual({ matched: 1, queued: 1 });
    expect((await listed()).json.data[0]).toMatchObject({ id: dead.id, status: 'pending', attempts: 0 });

    const bare = await cli(['deliveries', 'retry', '--status', 'dead']);
    expect(bare.code).toBe(1);
    expect(JSON.parse(bare.stdout).error.code).toBe('validation_failed');
    expect(bare.stderr).toMatch(/destination_id, route_id, form_id or since/);

    const one = await cli(['deliveries', 'retry', dead.id]);
    expect(one.code).toBe(1); // already pending again: 409
    expect(JSON.parse(one.stdout).error.code).toBe('conflict');

    const both = await cli(['deliveries', 'retry', dead.id, '--form', form.json.id]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/not both/);
  });
});
