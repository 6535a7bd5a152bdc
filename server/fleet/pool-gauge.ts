/**
 * How busy this process keeps its PostgreSQL pool. postgres.js does not expose its connection
 * queues, so the statements and transactions under way are counted where they are issued: every
 * statement of drizzle and of Database.prepared goes through `unsafe`, every transaction through
 * `begin`. In use = what is under way, up to the pool's size; waiting = the rest.
 */
export interface PoolGauge {
  inUse(): number;
  waiting(): number;
}

interface Thenable {
  then(onfulfilled?: (v: unknown) => unknown, onrejected?: (e: unknown) => unknown): unknown;
}

/** Wraps a postgres.js client in place: `unsafe` and `begin` are counted while they run. */
export function countPool<T extends object>(client: T, max: number): PoolGauge {
  let running = 0;
  const done = () => {
    running -= 1;
  };
  const c = client as unknown as {
    unsafe: (...args: unknown[]) => Thenable;
    begin: (...args: unknown[]) => Promise<unknown>;
  };
  const unsafe = c.unsafe.bind(client);
  c.unsafe = (...args: unknown[]) => {
    const query = unsafe(...args);
    // A postgres.js query runs when it is first awaited: counted from then until it settles.
    const then = query.then.bind(query);
    let counted = false;
    query.then = (onfulfilled, onrejected) => {
      if (!counted) {
        counted = true;
        running += 1;
        then(done, done);
      }
      return then(onfulfilled, onrejected);
    };
    return query;
  };
  const begin = c.begin.bind(client);
  c.begin = (...args: unknown[]) => {
    running += 1;
    const run = begin(...args);
    run.then(done, done);
    return run;
  };
  return {
    inUse: () => Math.min(running, max),
    waiting: () => Math.max(0, running - max),
  };
}
