import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliServer } from '../helpers/cli-server.js';
import { http } from '../helpers/process.js';
import { startReceiver, until } from '../helpers/receiver.js';

/** `formsvc deliveries retry`, one by id or many by filter, against a real server process. */
describe('formsvc deliveries retry', () => {
  let s: Awaited<ReturnType<typeof cliServer>>;
  let base = '';
  let key = '';
  const cli = (args: string[]) => s.cli([...args, '--json']);
  const cleanups = { push: (c: () => unknown) => s.cleanups.push(c) };

  beforeAll(async () => {
    s = await cliServer('replay');
    base = s.base;
    key = s.key;
  }, 60_000);

  afterAll(() => s?.close());

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
