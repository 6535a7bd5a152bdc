import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  freePort,
  healthy,
  http,
  killServer,
  loopbackServerEnv,
  onboardOver,
  startServer,
} from '../../test/helpers/process.js';
import { startSmtpSink } from '../../test/helpers/smtp.js';
import { freshDatabase } from './pg.js';

type Smtp = Awaited<ReturnType<typeof startSmtpSink>>;

/** Cleanup steps run last-in first-out; one failing step does not skip the others. */
export type Cleanups = ReturnType<typeof cleanups>;

export function cleanups() {
  const steps: (() => unknown)[] = [];
  return {
    add(step: () => unknown) {
      steps.push(step);
    },
    async run() {
      for (const step of steps.splice(0).reverse()) {
        try {
          await step();
        } catch (err) {
          console.error('cleanup step failed:', err);
        }
      }
    },
  };
}

/** A fresh database and an SMTP sink for one fault test, both undone by its cleanups. */
export async function databaseAndMail(c: Cleanups, name: string) {
  const db = await freshDatabase(name);
  c.add(() => db.drop());
  const smtp = await startSmtpSink();
  c.add(() => smtp.close());
  return { db, smtp };
}

/** SIGKILL to the process group, then waits until the process is gone (at once if it already is). */
export async function killAndWait(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  killServer(child);
  await gone;
}

/**
 * One `npm start` server (server/main.ts as its own process group) on a port of its own, which can
 * be killed and started again with the same settings. Mail goes to the test's SMTP sink; settings
 * given override the fault-test defaults.
 */
export async function serverProcess(smtp: Smtp, env: Record<string, string>) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-fault-'));
  const full = { ...loopbackServerEnv(port, smtp.url), DATA_DIR: dataDir, ...env };
  const children: ChildProcess[] = [];
  let current: ChildProcess | null = null;
  return {
    base,
    port,
    get pid() {
      return current?.pid;
    },
    /** Starts the process and waits for /healthz (failing at once if the process exits first). */
    async start() {
      const child = startServer(full);
      children.push(child);
      current = child;
      // Should the test process end without its cleanup, its servers go with it.
      const orphan = () => killServer(child);
      process.once('exit', orphan);
      child.once('exit', () => process.off('exit', orphan));
      const exited = new Promise<never>((_, reject) =>
        child.once('exit', (code, signal) => reject(new Error(`server exited during start-up (${code ?? signal})`))),
      );
      exited.catch(() => {});
      await Promise.race([healthy(base), exited]);
    },
    alive() {
      return current !== null && current.exitCode === null && current.signalCode === null;
    },
    /**
     * Sends `signal` to the running process (not its group) and waits for it to exit: its exit
     * code (null when a signal ended it) and when.
     */
    async signal(signal: NodeJS.Signals, then?: () => void): Promise<{ code: number | null; at: number }> {
      const child = current;
      if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error('server not running');
      const gone = new Promise<{ code: number | null; at: number }>((r) =>
        child.once('exit', (code) => r({ code, at: Date.now() })),
      );
      child.kill(signal);
      then?.();
      return gone;
    },
    /** kill -9 of the running process. */
    async kill() {
      if (current) await killAndWait(current);
    },
    /** Kills every process this started and removes its data directory. */
    async stop() {
      for (const c of children) await killAndWait(c);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type ServerProcess = Awaited<ReturnType<typeof serverProcess>>;

/**
 * A new organization (through the real email-code flow) with one form routed to a webhook
 * destination per URL; `settings` are patched onto the form.
 */
export async function tenant(base: string, smtp: Smtp, hookUrls: string[], settings?: Record<string, unknown>) {
  const key = await onboardOver(base, smtp, `fault-${crypto.randomBytes(4).toString('hex')}@example.com`);
  const form = await http(base, 'POST', '/v1/forms', key, { name: 'Fault form' });
  if (form.status !== 201) throw new Error(`create form: ${form.status} ${JSON.stringify(form.json)}`);
  if (settings) {
    const p = await http(base, 'PATCH', `/v1/forms/${form.json.id}`, key, { settings });
    if (p.status !== 200) throw new Error(`patch form: ${p.status} ${JSON.stringify(p.json)}`);
  }
  const destinationIds: string[] = [];
  for (const [i, url] of hookUrls.entries())
    destinationIds.push(await routeTo(base, key, form.json.id, url, `hook ${i}`));
  return { key, formId: form.json.id as string, destinationIds };
}

/** A webhook destination for url and a route from the form to it; returns the destination id. */
export async function routeTo(base: string, key: string, formId: string, url: string, name: string) {
  const dest = await http(base, 'POST', '/v1/destinations', key, { type: 'webhook', name, config: { url } });
  if (dest.status !== 201) throw new Error(`create destination: ${dest.status} ${JSON.stringify(dest.json)}`);
  const route = await http(base, 'POST', '/v1/routes', key, { form_id: formId, destination_id: dest.json.id });
  if (route.status !== 201) throw new Error(`create route: ${route.status} ${JSON.stringify(route.json)}`);
  return dest.json.id as string;
}

/** Every item of a cursor-paginated list (pages of 200). */
export async function listAll(base: string, key: string, pathAndQuery: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  const sep = pathAndQuery.includes('?') ? '&' : '?';
  do {
    const page = await http(
      base,
      'GET',
      `${pathAndQuery}${sep}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      key,
    );
    if (page.status !== 200) throw new Error(`GET ${pathAndQuery}: ${page.status} ${JSON.stringify(page.json)}`);
    out.push(...page.json.data);
    cursor = page.json.next_cursor;
  } while (cursor);
  return out;
}
