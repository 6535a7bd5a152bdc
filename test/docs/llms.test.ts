import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, healthy, killServer, startServer } from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';
import { startSmtpSink } from '../helpers/smtp.js';
import { bash, fencedShellLines, idsOf, shellLines } from './shell.js';

/**
 * llms.txt runs as written. Every indented shell line of the file the server serves at /llms.txt
 * (the file with the server's base URL in place of http://localhost:8787) runs, in document order,
 * with bash against a fresh server process (its own DATA_DIR, mail to a local SMTP sink), in one
 * working directory and one environment: what a line exports, the next one sees, as in one shell.
 *
 * The placeholders are the ones the file names at its top, and only those are substituted:
 * - `<CODE>`: the 6-digit code of the newest mail to you@example.com since the latest line that
 *   asked for a code (read from the SMTP sink);
 * - `<API_KEY>`: the `api_key` of the latest answer that has one;
 * - `<FORM_ID>`, `<DESTINATION_ID>`, `<STREAM_ID>`, `<ORG_ID>`: the first `id` with that prefix
 *   (`fm_`, `ds_`, `st_`, `org_`, breadth first) of the latest answer that has one;
 * - `<WEBHOOK_URL>`: a local receiver.
 * A placeholder the file does not list fails the test, as does a line whose placeholder has no value.
 *
 * Each line must exit 0 and answer JSON without an error envelope (curl -sS exits 0 on a 4xx);
 * PROMISES below hold what the text beside a line says its answer is. Every answer's `verify.curl`
 * (the test submission the API hands out) runs too and must store a received submission.
 */

const EMAIL = 'you@example.com';
const readme = fs.readFileSync('README.md', 'utf8');
const ID_PLACEHOLDERS: Record<string, string> = {
  FORM_ID: 'fm',
  DESTINATION_ID: 'ds',
  STREAM_ID: 'st',
  ORG_ID: 'org',
};

type Answer = any;
type Ctx = {
  dir: string;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  smtp: Awaited<ReturnType<typeof startSmtpSink>>;
};

/** What the text beside a line promises, keyed by the line (each must match some line). */
const PROMISES: { line: RegExp; check: (a: Answer, ctx: Ctx) => void | Promise<void> }[] = [
  { line: /\/v1\/auth\/request-code/, check: (a) => expect(a).toMatchObject({ ok: true }) },
  {
    line: /\/v1\/auth\/verify-code/,
    check: (a) => expect(a).toMatchObject({ api_key: expect.stringMatching(/^svc_live_/), scopes: ['manage'] }),
  },
  { line: /\/v1\/me /, check: (a) => expect(a.organization.id).toMatch(/^org_/) },
  {
    line: /-X POST \S+\/v1\/forms -H/,
    check: (a) => {
      expect(a.submit_url).toMatch(/\/s\/fm_/);
      expect(Object.keys(a.embed).sort()).toEqual(['astro', 'fetch', 'html', 'nextjs_action', 'react']);
      expect(a.verify.curl).toContain(a.submit_url);
      expect(a.next.length).toBeGreaterThan(0);
    },
  },
  {
    line: /\/v1\/quickstart/,
    check: (a) => {
      for (const k of ['form', 'embed', 'verify', 'next', 'destinations', 'routes']) expect(a).toHaveProperty(k);
      expect(a.form.settings.allowed_origins).toEqual(['https://www.example.com']);
      expect(a.destinations[0]).toMatchObject({ type: 'email', config: { to: [EMAIL] } });
      expect(a.next[0]).toMatchObject({ method: 'POST', path: `/s/${a.form.id}` });
    },
  },
  {
    line: /\/s\/fm_/,
    check: (a) => {
      expect(a).toMatchObject({ ok: true, status: 'received' });
      expect(a.deliveries.length).toBeGreaterThan(0);
    },
  },
  {
    line: /-X POST \S+\/v1\/destinations -H/,
    check: (a) => expect(a).toMatchObject({ type: 'webhook', config: { secret: '[redacted]' } }),
  },
  { line: /"form_id":"fm_\w+","destination_id"/, check: (a) => expect(a.form_id).toMatch(/^fm_/) },
  {
    line: /\/v1\/destinations\/ds_\w+\/test/,
    check: (a, { receiver }) => {
      expect(a).toMatchObject({ ok: true, status_code: 200 });
      expect(receiver.requests.some((r) => r.headers['service-event'] === 'destination.test')).toBe(true);
    },
  },
  { line: /\/v1\/forms\/fm_\w+\/schema/, check: (a) => expect(a.version).toBe(1) },
  {
    line: /-X POST \S+\/v1\/streams -H/,
    check: (a) => {
      expect(a).toMatchObject({ slug: 'leads' });
      expect(a.sources[0].mapping_status).toBe('valid');
    },
  },
  { line: /"stream_id":"st_/, check: (a) => expect(a.stream_id).toMatch(/^st_/) },
  {
    line: /\/v1\/public\/sandboxes/,
    check: (a) => {
      expect(a.sandbox).toMatchObject({ status: 'active', remaining: 5 });
      expect(typeof a.sandbox_token).toBe('string');
    },
  },
  {
    line: /\/v1\/auth\/sign-in/,
    check: (_a, { dir }) => expect(fs.readFileSync(path.join(dir, 'cookies.txt'), 'utf8')).toMatch(/formsvc_session/),
  },
  {
    line: /\/v1\/api-keys/,
    check: (a) => expect(a).toMatchObject({ api_key: expect.stringMatching(/^svc_live_/), scopes: ['submit'] }),
  },
  {
    line: /-X POST \S+\/v1\/organizations -H/,
    check: (a) => expect(a).toMatchObject({ name: 'Acme', timezone: 'Europe/Berlin', personal: false }),
  },
  { line: /\/switch$/, check: (a) => expect(JSON.stringify(a)).toContain('Acme') },
  {
    line: /\/v1\/invitations/,
    check: async (a, { smtp }) => {
      expect(a).toMatchObject({ role: 'admin', accept_url: expect.stringContaining('/v1/invitations/') });
      await smtp.waitFor((m) => m.to.includes('teammate@example.com'), 10_000);
    },
  },
];

/** Resolves once `check` holds (polled), or fails after 20 s. */
async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${check}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('llms.txt and the README run as written against a fresh server', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-llms-'));
  const work = path.join(dir, 'shell');
  const cleanups: (() => unknown)[] = [];
  let base = '';
  let ctx: Ctx;

  beforeAll(async () => {
    const smtp = await startSmtpSink();
    const receiver = await startReceiver();
    cleanups.push(
      () => smtp.close(),
      () => receiver.close(),
    );
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    fs.mkdirSync(work, { recursive: true });
    // npm start with the settings a fresh machine has, except where mail goes and where it listens.
    const server = startServer({
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      DATA_DIR: path.join(dir, 'data'),
      DATABASE_URL: '',
      SMTP_URL: smtp.url,
      MAIL_TRANSPORT: 'smtp',
    });
    cleanups.push(() => killServer(server));
    await healthy(base);
    ctx = { dir: work, receiver, smtp };
  }, 60_000);

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every shell line, in order, exits 0 and answers what the text beside it says', async () => {
    const served = await (await fetch(`${base}/llms.txt`)).text();
    const file = fs.readFileSync('llms.txt', 'utf8');
    expect(served).toBe(file.replaceAll('http://localhost:8787', base));
    for (const name of [...Object.keys(ID_PLACEHOLDERS), 'CODE', 'API_KEY', 'WEBHOOK_URL']) {
      expect(file, `llms.txt names <${name}> at its top`).toContain(`\`<${name}>\``);
    }
    const lines = shellLines(served);
    expect(lines.length).toBeGreaterThan(15);

    const ids = new Map<string, string>();
    let apiKey: string | undefined;
    let codeMark = 0;
    let env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: ctx.dir,
      LANG: 'C.UTF-8',
    };
    const used = new Set<number>();
    const seen = (answer: unknown) => {
      for (const [prefix, id] of idsOf(answer)) ids.set(prefix, id);
      const key = (answer as { api_key?: unknown })?.api_key;
      if (typeof key === 'string') apiKey = key;
    };
    const placeholder = async (name: string): Promise<string | undefined> => {
      if (name === 'CODE') {
        const mail = await ctx.smtp.waitFor((m) => ctx.smtp.messages.indexOf(m) >= codeMark && m.to.includes(EMAIL));
        return /\b(\d{6})\b/.exec(mail.subject)?.[1];
      }
      if (name === 'API_KEY') return apiKey;
      if (name === 'WEBHOOK_URL') return ctx.receiver.url;
      const prefix = ID_PLACEHOLDERS[name];
      if (!prefix) throw new Error(`<${name}> is not a placeholder llms.txt names`);
      return ids.get(prefix);
    };
    /** Runs one line as the shell would after substitution, and checks what every line must do. */
    const run = async (raw: string) => {
      let line = raw;
      for (const m of raw.matchAll(/<([A-Z_]+)>/g)) {
        const value = await placeholder(m[1]);
        if (!value) throw new Error(`no value for <${m[1]}> yet in: ${raw}`);
        line = line.replaceAll(m[0], value);
      }
      if (line.includes('/v1/auth/request-code')) codeMark = ctx.smtp.messages.length;
      const r = await bash(line, ctx.dir, env);
      env = r.env;
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      if (!r.stdout.trim()) return { line, answer: undefined };
      let answer: Answer;
      try {
        answer = JSON.parse(r.stdout);
      } catch {
        throw new Error(`not JSON from: ${line}\n${r.stdout.slice(0, 500)}`);
      }
      // An error envelope (curl -sS exits 0 on a 4xx): {"error": {"code", "message", "hint", …}}.
      expect(answer?.error?.code, `${line}\n${r.stdout}`).toBeUndefined();
      seen(answer);
      return { line, answer };
    };

    for (const raw of lines) {
      const { line, answer } = await run(raw);
      for (const [i, p] of PROMISES.entries()) {
        if (!p.line.test(line)) continue;
        used.add(i);
        await p.check(answer, ctx);
      }
      // The test submission an answer hands out works as pasted: it stores a received submission.
      if (typeof answer?.verify?.curl === 'string') {
        const test = await run(answer.verify.curl);
        expect(test.answer, answer.verify.curl).toMatchObject({ ok: true, status: 'received' });
      }
    }
    const stale = PROMISES.filter((_, i) => !used.has(i)).map((p) => String(p.line));
    expect(stale, 'promises that match no line of llms.txt').toEqual([]);
  }, 60_000);

  it("the README's tour runs as written: curl from sign-in to a delivered webhook, then the CLI's quickstart", async () => {
    const lines = fencedShellLines('README.md', readme).map((l) => l.line);
    const receiverLine = lines.find((l) => l.startsWith('node scripts/receiver.mjs')) as string;
    expect(receiverLine).toBeDefined();
    const tour = lines.filter((l) => /^(curl|export) /.test(l));
    const cli = lines.filter((l) => l.startsWith('npx formsvc '));
    expect(tour.length).toBeGreaterThan(5);
    expect(cli).toContain(`npx formsvc login --email ${EMAIL}`);

    // Only the ports move: the receiver's (PORT, as the README says) and the server's.
    const port = await freePort();
    const local = (line: string) =>
      line.replaceAll('http://127.0.0.1:8787', base).replaceAll('127.0.0.1:9999/', `127.0.0.1:${port}/`);
    const receiver = spawn('bash', ['-c', `exec ${receiverLine}`], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let printed = '';
    receiver.stdout.on('data', (c) => {
      printed += c;
    });
    try {
      await until(() => printed.includes('receiving webhooks'));
      // The curl lines, in order, in one shell: placeholders as the README names them.
      const ids = new Map<string, string>();
      let apiKey: string | undefined;
      let codeMark = 0;
      let env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ctx.dir, LANG: 'C.UTF-8' };
      const values: Record<string, () => Promise<string | undefined>> = {
        CODE: async () => {
          const mail = await ctx.smtp.waitFor((m) => ctx.smtp.messages.indexOf(m) >= codeMark && m.to.includes(EMAIL));
          return /\b(\d{6})\b/.exec(mail.subject)?.[1];
        },
        API_KEY: async () => apiKey,
        FORM_ID: async () => ids.get('fm'),
        DESTINATION_ID: async () => ids.get('ds'),
      };
      const answers: Answer[] = [];
      for (const raw of tour) {
        let line = local(raw);
        for (const m of raw.matchAll(/<([A-Z_]+)>/g)) {
          const value = await values[m[1]]?.();
          if (!value) throw new Error(`no value for <${m[1]}> in: ${raw}`);
          line = line.replaceAll(m[0], value);
        }
        if (line.includes('/v1/auth/request-code')) codeMark = ctx.smtp.messages.length;
        const r = await bash(line, ctx.dir, env);
        env = r.env;
        expect(r.code, `${line}\n${r.stderr}`).toBe(0);
        if (!r.stdout.trim()) continue;
        const answer = JSON.parse(r.stdout);
        expect(answer?.error?.code, `${line}\n${r.stdout}`).toBeUndefined();
        answers.push(answer);
        for (const [prefix, id] of idsOf(answer)) ids.set(prefix, id);
        if (typeof answer?.api_key === 'string') apiKey = answer.api_key;
      }
      // What the text beside the lines says: a form with its embed, a received submission, a webhook.
      const form = answers.find((a) => a?.submit_url);
      expect(form.hosted_url).toContain(`/f/${form.id}`);
      expect(form.embed.html).toContain(`<form action="${form.submit_url}" method="POST">`);
      expect(form.embed.html).toContain('name="_gotcha"');
      const submitted = answers.find((a) => typeof a?.submission_id === 'string');
      expect(submitted).toMatchObject({ ok: true, status: 'received' });
      // The deliveries list names the submission's one webhook delivery (sent, or on its way).
      const listed = answers.at(-1);
      expect(listed.data.map((d: Answer) => d.submission_id)).toEqual([submitted.submission_id]);
      await until(() => printed.includes(`"id":"${submitted.submission_id}"`));
      expect(printed).toMatch(/service-event: submission\.received/);

      // The agent's part: the CLI from the clone, as the README runs it; npm offline, so npx can only
      // run the project's own bin. The scripted login: send the code, then finish with it.
      const clone = process.cwd();
      const cliEnv = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: ctx.dir,
        npm_config_offline: 'true',
        FORMSVC_CONFIG: path.join(dir, 'readme-profiles.json'),
        FORMSVC_BASE_URL: base,
      };
      for (const line of cli) {
        const mark = ctx.smtp.messages.length;
        // npx, the CLI's start and quickstart --wait's deliveries: slow on a busy machine, so a minute each.
        const r = await bash(local(line), clone, cliEnv, 60_000);
        expect(r.code, `${line}\n${r.stderr}`).toBe(0);
        if (line.startsWith('npx formsvc login')) {
          const mail = await ctx.smtp.waitFor((m) => ctx.smtp.messages.indexOf(m) >= mark && m.to.includes(EMAIL));
          const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
          const login = await bash(`${line} --code ${code}`, clone, cliEnv, 60_000);
          expect(login.code, login.stderr).toBe(0);
        } else if (line.startsWith('npx formsvc quickstart')) {
          const out = JSON.parse(r.stdout);
          expect(out.test).toMatchObject({ ok: true, end: 'done' });
          expect(printed).toContain(`"id":"${out.test.submission_id}"`);
        }
      }
    } finally {
      receiver.kill('SIGKILL');
    }
  }, 240_000);
});
