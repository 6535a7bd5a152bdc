import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { KeptRouter } from '../../server/http/router.js';

/** An app with the shapes the contract has: a static segment beside a parameter that has children. */
function app(router?: KeptRouter<never>) {
  const a = new Hono(router ? { router } : {});
  a.use('*', async (c, next) => {
    await next();
    c.header('x-seen', 'yes');
  });
  a.get('/v1/deliveries/:id', (c) => c.text(`get ${c.req.param('id')}`));
  a.post('/v1/deliveries/retry', (c) => c.text('bulk retry'));
  a.post('/v1/deliveries/:id/retry', (c) => c.text(`retry ${c.req.param('id')}`));
  a.post('/s/:formId', (c) => c.text(`submit ${c.req.param('formId')}`));
  a.notFound((c) => c.text('no route', 404));
  return a;
}

const asks: [string, string][] = [
  ['GET', '/v1/deliveries/dl_1'],
  ['GET', '/v1/deliveries/retry'],
  ['POST', '/v1/deliveries/retry'],
  ['POST', '/v1/deliveries/dl_2/retry'],
  ['POST', '/v1/deliveries/retry/retry'],
  ['POST', '/s/fm_1'],
  ['POST', '/s/fm%20x'],
  ['DELETE', '/s/fm_1'],
  ['GET', '/nothing'],
];

async function answers(a: Hono, rounds: number) {
  const out: string[] = [];
  for (let i = 0; i < rounds; i += 1) {
    for (const [method, path] of asks) {
      const r = await a.request(path, { method });
      out.push(`${method} ${path} → ${r.status} ${await r.text()} ${r.headers.get('x-seen')}`);
    }
  }
  return out;
}

describe('KeptRouter', () => {
  it('answers every path as Hono’s own router does, the first time and from what it kept', async () => {
    const kept = await answers(app(new KeptRouter()), 3);
    const plain = await answers(app(), 3);
    expect(kept).toEqual(plain);
    expect(kept).toContain('POST /v1/deliveries/retry → 200 bulk retry yes');
    expect(kept).toContain('POST /v1/deliveries/dl_2/retry → 200 retry dl_2 yes');
    expect(kept).toContain('POST /s/fm%20x → 200 submit fm x yes');
  });

  it('matches a kept path once, and keeps a bounded number of paths', () => {
    const router = new KeptRouter<string>();
    router.add('POST', '/s/:formId', 'submit');
    const first = router.match('POST', '/s/fm_1');
    expect(router.match('POST', '/s/fm_1')).toBe(first); // the same answer object: not matched again
    expect(router.match('POST', '/s/fm_2')).not.toBe(first);
    for (let i = 0; i < 2000; i += 1) router.match('POST', `/s/fm_${i}`);
    expect(router.match('POST', '/s/fm_1')).not.toBe(first); // 2,000 paths later it was let go
    const long = `/s/${'x'.repeat(300)}`;
    expect(router.match('POST', long)).not.toBe(router.match('POST', long)); // long paths are not kept
    expect(router.match('POST', long)[0][0][0]).toBe('submit');
  });
});
