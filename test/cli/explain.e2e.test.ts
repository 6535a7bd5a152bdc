import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliServer } from '../helpers/cli-server.js';
import { http } from '../helpers/process.js';
import { startReceiver, until } from '../helpers/receiver.js';

/** `formsvc submissions explain`, as text (summary first) and as JSON, against a real server process. */
describe('formsvc submissions explain', () => {
  let s: Awaited<ReturnType<typeof cliServer>>;
  let base = '';
  let key = '';
  const cli = (args: string[]) => s.cli(args);
  const cleanups = { push: (c: () => unknown) => s.cleanups.push(c) };

  beforeAll(async () => {
    s = await cliServer('explain');
    base = s.base;
    key = s.key;
  }, 60_000);

  afterAll(() => s?.close());

  it('prints the summary first, then checks, routes and attempts; --json prints the object; an unknown id is not_found', async () => {
    // A receiver that answers 410 with a terminal escape in its body: the delivery dies at once.
    const hook = await startReceiver(() => ({ status: 410, body: 'gone \u001b[31mred' }));
    cleanups.push(() => hook.close());
    const form = await http(base, 'POST', '/v1/forms', key, { name: 'Explain form' });
    const dest = await http(base, 'POST', '/v1/destinations', key, {
      type: 'webhook',
      name: 'crm',
      config: { url: hook.url },
    });
    await http(base, 'POST', '/v1/routes', key, { form_id: form.json.id, destination_id: dest.json.id });
    const sub = await http(base, 'POST', `/s/${form.json.id}`, undefined, { n: 1 });
    const id = sub.json.submission_id as string;
    await until('a dead delivery', async () => {
      const d = (await http(base, 'GET', `/v1/deliveries?submission_id=${id}`, key)).json.data[0];
      return d?.status === 'dead';
    });

    const text = await cli(['submissions', 'explain', id, '--no-json']);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toMatch(/^Not sent to webhook "crm": stopped at once: HTTP 410/);
    expect(lines[0]).toContain('/retry');
    expect(text.stdout).toContain('intake checks:');
    expect(text.stdout).toMatch(/ {2}origin {7}passed/);
    expect(text.stdout).toMatch(/#1 \S+ HTTP 410 \d+ ms dead/);
    expect(text.stdout).not.toContain('\u001b');

    const json = await cli(['submissions', 'explain', id, '--json']);
    expect(json.code).toBe(0);
    const e = JSON.parse(json.stdout);
    expect(e).toMatchObject({ submission_id: id, outcome: 'failed' });
    expect(e.summary).toBe(lines[0]);
    expect(e.deliveries[0].attempts[0]).toMatchObject({ n: 1, status_code: 410, outcome: 'dead' });

    const missing = await cli(['submissions', 'explain', 'sb_nope', '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).error.code).toBe('not_found');
  });
});
