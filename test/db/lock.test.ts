import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPglite } from '../../server/db/client.js';

describe('the embedded database lock', () => {
  it('refuses a second server on the same DATA_DIR and frees it on close', { timeout: 60_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-lock-'));
    try {
      const first = await openPglite(dir);
      await expect(openPglite(dir)).rejects.toThrow(new RegExp(`in use by process ${process.pid}`));
      await first.close();
      const again = await openPglite(dir);
      await again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes over a lock left by a process that died', { timeout: 60_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-lock-'));
    try {
      // A socket file nobody listens on is what a killed server leaves behind.
      fs.writeFileSync(path.join(dir, 'formsvc.lock.sock'), '');
      const db = await openPglite(dir);
      await db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
