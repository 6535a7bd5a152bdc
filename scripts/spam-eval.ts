/**
 * npm run spam:eval -- [--corpus file.jsonl] [--url http://…] [--train N] [--unseen N] [--wait S]
 * [--no-targets]: the spam evaluation (docs/spam.md). Without --url it builds and starts a formsvc
 * server of its own on a temporary DATA_DIR (PGlite) and onboards an organization through the email
 * code; with --url it uses that server and the manage key in FORMSVC_API_KEY. Without --corpus it
 * generates our corpus (bench/spam-corpus) with its fixed seed. Exits 1 when a target is missed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type CorpusLine, generateCorpus } from '../bench/spam-corpus/corpus.js';
import { evaluate, report, type Send, splitCorpus } from '../bench/spam-corpus/evaluate.js';
import { freePort, healthy, killServer, loopbackServerEnv, onboardOver, startServer } from '../test/helpers/process.js';
import { startSmtpSink } from '../test/helpers/smtp.js';

const USAGE = `npm run spam:eval -- [options]
  --corpus FILE   JSONL, one {"class":"spam"|"ham"|"newsletter","name"?,"email"?,"message","split"?} a line
                  (default: our generated corpus, bench/spam-corpus)
  --url URL       a running formsvc (needs FORMSVC_API_KEY, a manage key); default: start one on a temp DATA_DIR
  --train N       messages marked through PATCH before the unseen ones (default 400)
  --unseen N      at most this many unseen messages (default: all of the corpus's unseen part)
  --wait S        seconds between the marks and the unseen posts (default 10)
  --no-targets    report only; exit 0 even when a target is missed`;

const CLASSES = new Set(['spam', 'ham', 'newsletter']);

function readCorpus(file: string): CorpusLine[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const line = JSON.parse(l) as CorpusLine;
      if (!CLASSES.has(line.class) || typeof line.message !== 'string') {
        throw new Error(`${file}:${i + 1}: expected {"class":"spam"|"ham"|"newsletter","message":"…"}`);
      }
      return line;
    });
}

/** A server of our own: built if stale, on a temp DATA_DIR, with an organization onboarded. */
async function ownServer() {
  const built = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('build failed');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-spam-eval-'));
  const smtp = await startSmtpSink();
  const port = await freePort();
  const child = startServer({
    ...loopbackServerEnv(port, smtp.url),
    DATA_DIR: dir,
    WORKER: 'false',
    LOG_LEVEL: 'error',
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    killServer(child);
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await healthy(base);
    const key = await onboardOver(base, smtp, `spam-eval-${process.pid}@example.com`);
    return { base, key, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function sender(base: string): Send {
  return async (method, p, headers, body) => {
    const res = await fetch(`${base}${p}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };
}

async function main() {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string' },
      url: { type: 'string' },
      train: { type: 'string', default: '400' },
      unseen: { type: 'string' },
      wait: { type: 'string', default: '10' },
      'no-targets': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const lines = values.corpus ? readCorpus(values.corpus) : generateCorpus();
  const { train, unseen } = splitCorpus(lines, Number(values.train), values.unseen ? Number(values.unseen) : undefined);
  let server: { base: string; key: string; stop: () => Promise<void> };
  if (values.url) {
    const key = process.env.FORMSVC_API_KEY;
    if (!key) throw new Error('--url needs a manage key in FORMSVC_API_KEY');
    server = { base: values.url.replace(/\/$/, ''), key, stop: async () => {} };
  } else {
    server = await ownServer();
  }
  try {
    const started = Date.now();
    const result = await evaluate({
      send: sender(server.base),
      key: server.key,
      train,
      unseen,
      waitMs: Number(values.wait) * 1000,
      progress: (t) => process.stderr.write(`${t}\n`),
    });
    const { text, ok } = report(result);
    process.stdout.write(`${text}\n(${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
    if (!ok && !values['no-targets']) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`spam-eval: ${(err as Error).message}\n`);
  process.exit(2);
});
