import { describe, expect, it } from 'vitest';
import { McpSessions } from '../../server/routes/mcp-sessions.js';

/** The in-memory MCP session store of /mcp: idle expiry, open streams, the cap and the credential check. */
function session(closed: string[], id: string) {
  return {
    transport: { handleRequest: async () => new Response(null) },
    close: async () => {
      closed.push(id);
    },
    via: { env: {}, extra: {} },
  };
}

describe('McpSessions', () => {
  it('ends sessions idle past the limit, keeps used ones and those with an open stream', async () => {
    let now = 0;
    const closed: string[] = [];
    const store = new McpSessions(1000, 10, () => now);
    for (const id of ['a', 'b', 'c']) store.add(id, session(closed, id), 'key');
    let end!: () => void;
    const body = new ReadableStream({
      start(ctl) {
        end = () => ctl.close();
      },
    });
    const stream = store.track('c', new Response(body, { status: 200 }));
    now = 900;
    expect(store.use('b', 'key', { env: {}, extra: {} })?.owned).toBe(true);
    now = 1500;
    store.sweep();
    expect(closed).toEqual(['a']);
    expect(store.use('a', 'key', { env: {}, extra: {} })).toBeNull();
    now = 5000;
    store.sweep();
    expect(closed).toEqual(['a', 'b']); // c's stream is still open
    end();
    await stream.text();
    now = 7000;
    store.sweep();
    expect(closed).toEqual(['a', 'b', 'c']);
    expect(store.size).toBe(0);
  });

  it('holds at most `cap` sessions, making room from idle ones only', () => {
    let now = 0;
    const closed: string[] = [];
    const store = new McpSessions(1000, 2, () => now);
    store.add('a', session(closed, 'a'), undefined);
    store.add('b', session(closed, 'b'), undefined);
    expect(store.hasRoom()).toBe(false);
    now = 2000;
    expect(store.hasRoom()).toBe(true);
    expect(closed).toEqual(['a', 'b']);
  });

  it('answers a session only to the credential that started it', () => {
    const store = new McpSessions();
    store.add('s', session([], 's'), 'svc_live_one');
    expect(store.use('s', 'svc_live_one', { env: {}, extra: {} })?.owned).toBe(true);
    expect(store.use('s', 'svc_live_two', { env: {}, extra: {} })?.owned).toBe(false);
    expect(store.use('s', undefined, { env: {}, extra: {} })?.owned).toBe(false);
    expect(store.use('nope', 'svc_live_one', { env: {}, extra: {} })).toBeNull();
    store.remove('s');
  });
});
