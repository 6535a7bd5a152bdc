import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { type Database, MIGRATIONS, openPglite } from '../../server/db/client.js';
import { seedFile, writeSeed } from '../../server/db/pglite-seed.js';

const identifier = async (db: Database) =>
  String((await db.rows<{ id: string }>(sql`select system_identifier::text as id from pg_control_system()`))[0].id);

describe('the embedded database seed', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-seed-test-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('starts an empty DATA_DIR from the seed, migrated, and one without a seed from initdb', {
    timeout: 180_000,
  }, async () => {
    const seedDir = path.join(root, 'seed');
    expect(await writeSeed(seedDir, MIGRATIONS)).toBe(seedFile(seedDir));

    const ids: string[] = [];
    for (const dir of ['a', 'b']) {
      const db = await openPglite(path.join(root, dir), { seedDir });
      try {
        // The schema is there: a table of the last migrations answers.
        expect(await db.rows(sql`select count(*)::int as n from forms`)).toEqual([{ n: 0 }]);
        expect((await db.rows<{ shared_buffers: string }>(sql`show shared_buffers`))[0].shared_buffers).toBe('16MB');
        ids.push(await identifier(db));
      } finally {
        await db.close();
      }
    }
    // Both came from the one seed (initdb gives every cluster an identifier of its own) ...
    expect(ids[0]).toBe(ids[1]);
    // ... and a restart keeps what the first start unpacked.
    const again = await openPglite(path.join(root, 'a'), { seedDir });
    try {
      expect(await identifier(again)).toBe(ids[0]);
    } finally {
      await again.close();
    }
    // Without a seed for this PGlite, initdb makes a cluster of its own.
    const plain = await openPglite(path.join(root, 'c'), { seedDir: path.join(root, 'none') });
    try {
      expect(await identifier(plain)).not.toBe(ids[0]);
      expect(await plain.rows(sql`select count(*)::int as n from forms`)).toEqual([{ n: 0 }]);
    } finally {
      await plain.close();
    }
  });
});
