import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';

/**
 * The per-form rate limit counts the client a trusted proxy saw, not one the client names: behind a
 * proxy that appends to X-Forwarded-For, a visitor who sends the header themselves used to rotate
 * their IP at will (ten forged values, ten 200s on a `max: 2` form).
 */

let t: TestEnv;
let key: string;

beforeAll(async () => {
  t = await startTestApp();
  key = (await t.onboard()).key;
});
afterAll(() => t.close());

async function limitedForm(max: number) {
  const f = await t.api('POST', '/v1/forms', key, { json: { name: `RL ${crypto.randomUUID().slice(0, 6)}` } });
  const settings = { rate_limit: { max, window_s: 60 } };
  expect((await t.api('PATCH', `/v1/forms/${f.json.id}`, key, { json: { settings } })).status).toBe(200);
  return f.json.id as string;
}

const post = (formId: string, n: number, xff: string) =>
  t.request('POST', `/s/${formId}`, { json: { n }, headers: { 'x-forwarded-for': xff } });

describe('per-IP rate limit and X-Forwarded-For', () => {
  it('counts one client however the leftmost (client-written) entries change', async () => {
    const formId = await limitedForm(2);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      // What nginx forwards when the visitor sent "X-Forwarded-For: 100.64.<i>.1" itself.
      statuses.push((await post(formId, i, `100.64.${i}.1, 198.51.100.60`)).status);
    }
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429, 429, 429, 429, 429]);
    const list = await t.api('GET', `/v1/submissions?form_id=${formId}&limit=50`, key);
    const reasons = list.json.data.map((s: { quarantine_reason: string | null }) => s.quarantine_reason);
    expect(reasons.filter((r: string | null) => r === 'rate_limited')).toHaveLength(8);
    expect(list.json.data.every((s: { meta: { ip: string } }) => s.meta.ip === '198.51.100.60')).toBe(true);
  });

  it('counts an IPv6 client by its /64, and another /64 apart', async () => {
    const formId = await limitedForm(1);
    expect((await post(formId, 1, '2001:db8:aa:bb::1')).status).toBe(200);
    const same = await post(formId, 2, '2001:db8:aa:bb:1234:5678:9abc:def0');
    expect(same.status).toBe(429);
    expect(same.json.error.code).toBe('rate_limited');
    expect((await post(formId, 3, '2001:db8:aa:bc::1')).status).toBe(200);
  });
});
