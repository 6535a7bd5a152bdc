import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../server/log.js';
import { collectWhenIdle } from '../../server/memory.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A logger at debug level whose lines land in `lines`. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('debug', { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines, collections: () => lines.filter((l) => String(l.msg).startsWith('idle: full garbage')) };
}

/** Keeps the event loop busy for `ms` while allocating objects that live a while, as requests do. */
async function burst(ms: number) {
  const end = Date.now() + ms;
  let keep: unknown[] = [];
  while (Date.now() < end) {
    for (let i = 0; i < 20_000; i += 1) keep.push({ i, s: `request ${i}`, a: [i, i + 1] });
    if (keep.length > 400_000) keep = keep.slice(200_000);
    await new Promise((r) => setImmediate(r));
  }
  return keep.length;
}

describe('collectWhenIdle', () => {
  it('runs one full collection in the first quiet interval after a burst, and the heap shrinks', async () => {
    const { log, collections } = capture();
    const release = collectWhenIdle(100, log);
    try {
      const held = v8.getHeapStatistics().total_heap_size;
      expect(await burst(800)).toBeGreaterThan(0);
      const grown = v8.getHeapStatistics().total_heap_size;
      expect(grown - held).toBeGreaterThan(16 * 2 ** 20); // the burst grew the heap past the threshold
      await sleep(400);
      const done = collections();
      expect(done).toHaveLength(1);
      const { heap_mb, after_mb } = done[0] as { heap_mb: number; after_mb: number };
      expect(after_mb).toBeLessThan(heap_mb);
      expect(v8.getHeapStatistics().total_heap_size).toBeLessThan(grown);
      // Idle afterwards: no further collection without new work.
      await sleep(400);
      expect(collections()).toHaveLength(1);
    } finally {
      release();
    }
  });

  it('leaves a quiet process alone, and 0 turns it off', async () => {
    const idle = capture();
    const release = collectWhenIdle(50, idle.log);
    await sleep(300);
    release();
    expect(idle.collections()).toHaveLength(0);

    const off = capture();
    const none = collectWhenIdle(0, off.log);
    await burst(300);
    await sleep(200);
    none();
    expect(off.collections()).toHaveLength(0);
  });
});
