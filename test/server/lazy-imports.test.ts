import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, healthy, http, killServer } from '../helpers/process.js';

/** Packages a server loads only when a request or a send needs them (each costs megabytes of heap). */
const LAZY = ['@modelcontextprotocol/sdk', 'nodemailer', 'undici', 'ajv', 'ajv-formats', 'postgres'];
const loaded = (urls: string[], pkg: string) => urls.some((u) => u.includes(`/node_modules/${pkg}/`));

describe('what the server loads at start', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-imports-'));
  const record = path.join(dir, 'imports.txt');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('leaves the MCP SDK, nodemailer, undici, ajv and the other driver for later', { timeout: 90_000 }, async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './test/helpers/record-imports.mjs', 'server/main.ts'],
      {
        env: {
          ...process.env,
          DATABASE_URL: '',
          DATA_DIR: path.join(dir, 'data'),
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          MAIL_TRANSPORT: 'smtp',
          SMTP_URL: 'smtp://127.0.0.1:1',
          RECORD_IMPORTS: record,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
        detached: true,
      },
    );
    try {
      const base = `http://127.0.0.1:${port}`;
      await healthy(base);
      const atStart = fs.readFileSync(record, 'utf8').split('\n');
      expect(loaded(atStart, '@electric-sql/pglite')).toBe(true); // the recorder sees packages
      expect(LAZY.filter((pkg) => loaded(atStart, pkg))).toEqual([]);

      // The first MCP request (the keyless onboarding endpoint) loads the SDK and answers as before.
      const list = await http(base, 'POST', '/mcp/public', undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(list.status).toBe(200);
      expect(list.json.result.tools.length).toBeGreaterThan(0);
      expect(loaded(fs.readFileSync(record, 'utf8').split('\n'), '@modelcontextprotocol/sdk')).toBe(true);
    } finally {
      killServer(child);
    }
  });
});
