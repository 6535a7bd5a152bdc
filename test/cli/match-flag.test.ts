import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scalarFields } from '../../cli/schema-flags.js';
import { CreateRouteBody, UpdateRouteBody } from '../../shared/contracts/routes.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-match-flag-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A local API answering 201 with a route, recording the bodies it was sent. */
async function fakeApi() {
  const bodies: unknown[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      bodies.push(JSON.parse(body || 'null'));
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'rt_1', ...(bodies.at(-1) as object) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { bodies, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['bin/formsvc.js', ...args], {
      env: { ...process.env, NO_COLOR: '1', FORMSVC_CONFIG: path.join(tmp, 'profiles.json') },
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c) => {
      stdout += c;
    });
    p.stderr.on('data', (c) => {
      stderr += c;
    });
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('formsvc routes create --match', () => {
  it('route bodies have a JSON flag for match', () => {
    for (const body of [CreateRouteBody, UpdateRouteBody]) {
      expect(scalarFields(body).find((f) => f.wire === 'match')).toMatchObject({ flag: 'match', kind: 'json' });
    }
  });

  it('sends the JSON given to --match as the body field, and refuses text that is no JSON object', async () => {
    const api = await fakeApi();
    try {
      const common = ['--base-url', api.base, '--api-key', 'svc_live_test', '--json'];
      const ok = await cli([
        'routes',
        'create',
        '--form-id',
        'fm_1',
        '--destination-id',
        'ds_1',
        '--match',
        '{"$or":[{"data.topic":"sales"},{"data.seats":{"$gte":5}}]}',
        ...common,
      ]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(api.bodies[0]).toEqual({
        form_id: 'fm_1',
        destination_id: 'ds_1',
        match: { $or: [{ 'data.topic': 'sales' }, { 'data.seats': { $gte: 5 } }] },
      });
      const cleared = await cli(['routes', 'update', 'rt_1', '--match', 'null', ...common]);
      expect(cleared.code, cleared.stderr).toBe(0);
      expect(api.bodies[1]).toEqual({ match: null });
      const bad = await cli([
        'routes',
        'create',
        '--form-id',
        'fm_1',
        '--destination-id',
        'ds_1',
        '--match',
        '{x',
        ...common,
      ]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/JSON object/);
      expect(api.bodies).toHaveLength(2);
    } finally {
      api.close();
    }
  });
});
