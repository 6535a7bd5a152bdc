import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from './log.js';

/** Heap growth since the last idle collection below which an idle moment is left alone. */
const GROWTH_BYTES = 16 * 1024 * 1024;
/** Event-loop utilisation of one interval at or above which the process counts as working. */
const BUSY = 0.05;

type Gc = () => void;

let shared: { users: number; timer: NodeJS.Timeout } | null = null;

/**
 * Gives back the memory a burst of work took, once the process goes idle.
 *
 * Under load, requests live across database round trips, so many of their objects survive young
 * collections and die in the old generation, which V8 lets grow to its next limit before it
 * collects (after the bench's 3-s warm-up: 103 MB of old space holding 40 MB of live objects).
 * V8's memory reducer gives that back only 8 s after the last full collection; browsers tell V8
 * when they are idle, Node.js does not. This does: every `everyMs` it reads the event loop's
 * utilisation, and the first quiet interval after a working one runs one full collection if the
 * heap grew by 16 MB or more since the last one. A steady trickle never triggers it, and nothing
 * runs while requests keep the loop busy. One timer per process, however many servers it runs;
 * `everyMs` 0 turns it off. Answers a function that releases this server's use of it.
 */
export function collectWhenIdle(everyMs: number, log: Logger): () => void {
  if (everyMs <= 0) return () => {};
  if (!shared) {
    const gc = exposedGc();
    if (!gc) return () => {};
    shared = { users: 0, timer: idleTimer(gc, everyMs, log) };
  }
  shared.users += 1;
  let released = false;
  return () => {
    if (released || !shared) return;
    released = true;
    shared.users -= 1;
    if (shared.users === 0) {
      clearInterval(shared.timer);
      shared = null;
    }
  };
}

function idleTimer(gc: Gc, everyMs: number, log: Logger): NodeJS.Timeout {
  let last = performance.eventLoopUtilization();
  let worked = false;
  let heapAfter = v8.getHeapStatistics().total_heap_size;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    if (utilization >= BUSY) {
      worked = true;
      return;
    }
    if (!worked) return;
    worked = false;
    const before = v8.getHeapStatistics().total_heap_size;
    if (before - heapAfter < GROWTH_BYTES) return;
    const t0 = performance.now();
    compacting(gc);
    heapAfter = v8.getHeapStatistics().total_heap_size;
    log.debug(
      {
        heap_mb: Math.round(before / 2 ** 20),
        after_mb: Math.round(heapAfter / 2 ** 20),
        ms: Math.round(performance.now() - t0),
      },
      'idle: full garbage collection after a burst of work',
    );
  }, everyMs);
  timer.unref();
  return timer;
}

/**
 * One full collection that also compacts: V8 evacuates only its most fragmented pages by default,
 * which after a burst leaves old space at about twice what it holds. The flag is V8's own and set
 * for this collection only.
 */
function compacting(gc: Gc) {
  v8.setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    v8.setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

/** V8's gc(), taken from a fresh context with the flag set for that moment only; null if refused. */
function exposedGc(): Gc | null {
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as Gc) : null;
  } catch {
    return null;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}
