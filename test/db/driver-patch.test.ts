import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { driverFiles, PATCH_MARK } from '../../scripts/patch-postgres.mjs';

const url = process.env.TEST_DATABASE_URL;

describe('postgres.js write-timer patch (scripts/patch-postgres.mjs)', () => {
  it('is applied to every copy of the driver that can be loaded', () => {
    const files = driverFiles();
    expect(files.map((f) => path.relative(process.cwd(), f)).sort()).toEqual(
      expect.arrayContaining([
        'node_modules/postgres/cjs/src/connection.js',
        'node_modules/postgres/src/connection.js',
      ]),
    );
    for (const f of files) expect(fs.readFileSync(f, 'utf8')).toContain(PATCH_MARK);
  });

  // A connection whose socket closes while a small write waits for its setImmediate used to keep a
  // stale timer: every later start-up message on that connection was buffered and never sent, so
  // each use hung until connect_timeout and failed (after an outage, one pool connection answered
  // 503 again and again). The socket option lets the test close the socket at exactly that moment.
  it.skipIf(!url)('a connection whose socket closed with a write pending connects again', async () => {
    const target = new URL(url as string);
    let socket: net.Socket | null = null;
    // `socket` (a function giving the connected socket) is a driver option its types leave out.
    const options = {
      max: 1,
      connect_timeout: 3,
      onnotice: () => {},
      socket: () =>
        new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(Number(target.port || 5432), target.hostname);
          s.once('connect', () => resolve(s)).once('error', reject);
          socket = s;
        }),
    };
    const sql = postgres(url as string, options as postgres.Options<Record<string, never>>);
    try {
      expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
      // The query's messages wait for the next setImmediate, and the socket's close is handled
      // before it runs (as when a reset is read in the same poll phase as the data that queued them).
      const lost = sql`select 2 as two`.execute().catch((e: unknown) => e);
      await new Promise((r) => process.nextTick(r));
      const s = socket as net.Socket | null;
      s?.emit('close', false);
      s?.destroy();
      expect(await lost).toMatchObject({ code: 'CONNECTION_CLOSED' });
      // The next query opens the connection again and is answered (it hung until CONNECT_TIMEOUT).
      expect(await sql`select 3 as three`).toEqual([{ three: 3 }]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
