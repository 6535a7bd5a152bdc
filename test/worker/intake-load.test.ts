import { afterEach, describe, expect, it, vi } from 'vitest';
import { IntakeLoad } from '../../server/worker/intake-load.js';

/** Intake first: when sends yield to intake, by how much, and when they stop yielding. */

let now = 0;
const load = () => new IntakeLoad({ clock: () => now });

/** n requests begun, then m of them answered. */
function requests(l: IntakeLoad, n: number, m = n) {
  for (let i = 0; i < n; i += 1) l.started();
  for (let i = 0; i < m; i += 1) l.finished();
}

/** Sends allowed now, taking them until refused (at most 100). */
function allowed(l: IntakeLoad) {
  let n = 0;
  while (n < 100 && l.mayStart()) n += 1;
  return n;
}

afterEach(() => {
  vi.useRealTimers();
  now = 0;
});

describe('IntakeLoad', () => {
  it('lets every send start while intake keeps up: requests one at a time, however many', () => {
    const l = load();
    for (let i = 0; i < 500; i += 1) requests(l, 1);
    expect(l.busy()).toBe(false);
    expect(allowed(l)).toBe(100);
  });

  it('while requests queue, allows one send per ten requests answered', () => {
    const l = load();
    requests(l, 20, 8);
    expect(l.busy()).toBe(true);
    // The eighth answer made it busy: a tenth of a send so far.
    expect(allowed(l)).toBe(0);
    requests(l, 0, 9);
    expect(allowed(l)).toBe(1);
    expect(allowed(l)).toBe(0);
    requests(l, 30);
    expect(allowed(l)).toBe(3);
  });

  it('saves up a few sends at most', () => {
    const l = load();
    requests(l, 200);
    expect(l.busy()).toBe(true);
    expect(allowed(l)).toBe(4);
  });

  it('does not count slow requests that answer little as queueing', () => {
    const l = load();
    requests(l, 30, 5);
    expect(l.busy()).toBe(false);
    expect(allowed(l)).toBe(100);
  });

  it('is calm again once a window and the next pass without the load', () => {
    const l = load();
    requests(l, 20);
    expect(l.busy()).toBe(true);
    now += 100;
    // The previous window still counts.
    expect(l.busy()).toBe(true);
    now += 100;
    expect(l.busy()).toBe(false);
    requests(l, 20);
    now += 250;
    expect(l.busy()).toBe(false);
  });

  it('calls a waiting send when credit is earned, and waiting claims when the burst is over', () => {
    vi.useFakeTimers();
    const l = load();
    requests(l, 20, 8);
    expect(allowed(l)).toBe(0);
    const send = vi.fn();
    const claim = vi.fn();
    l.whenFree(send);
    l.whenCalm(claim);
    requests(l, 0, 8);
    expect(send).not.toHaveBeenCalled();
    requests(l, 0, 1);
    expect(send).toHaveBeenCalledTimes(1);
    expect(claim).not.toHaveBeenCalled();
    // Still busy at the next check: nothing; calm at the one after.
    vi.advanceTimersByTime(100);
    expect(claim).not.toHaveBeenCalled();
    now += 300;
    vi.advanceTimersByTime(100);
    expect(claim).toHaveBeenCalledTimes(1);
    // Not busy: a wait for calm is answered at once.
    const again = vi.fn();
    l.whenCalm(again);
    expect(again).toHaveBeenCalledTimes(1);
  });

  it('forgets its waiters when closed', () => {
    vi.useFakeTimers();
    const l = load();
    requests(l, 20);
    const claim = vi.fn();
    l.whenCalm(claim);
    l.close();
    now += 1000;
    vi.advanceTimersByTime(1000);
    expect(claim).not.toHaveBeenCalled();
  });
});
