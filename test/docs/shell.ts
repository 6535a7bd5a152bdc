import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Shell helpers of the docs tests: the lines of a markdown text, the ids of an answer, bash with a carried environment. */

/** The indented lines of a markdown text (llms.txt writes its shell lines as indented blocks). */
export function shellLines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => /^ {4}\S/.test(l))
    .map((l) => l.slice(4));
}

/** Every `id` with a prefix in an answer, the first of each prefix, breadth first. */
export function idsOf(answer: unknown): Map<string, string> {
  const out = new Map<string, string>();
  const queue: unknown[] = [answer];
  while (queue.length) {
    const v = queue.shift();
    if (!v || typeof v !== 'object') continue;
    for (const [k, x] of Object.entries(v)) {
      const m = k === 'id' && typeof x === 'string' ? /^([a-z]+)_/.exec(x) : null;
      if (m && !out.has(m[1])) out.set(m[1], x as string);
      if (x && typeof x === 'object') queue.push(x);
    }
  }
  return out;
}

export type Run = { code: number | null; stdout: string; stderr: string; env: Record<string, string> };

/**
 * Runs one line with bash in `cwd` and `env`; answers its output and the environment it leaves. A line
 * still running after `limitMs` is killed (its exit code is then null).
 */
export function bash(line: string, cwd: string, env: Record<string, string>, limitMs = 20_000): Promise<Run> {
  const envFile = path.join(os.tmpdir(), `formsvc-env-${process.pid}-${crypto.randomUUID()}`);
  const script = `${line}\n__rc=$?\nenv -0 > ${JSON.stringify(envFile)}\nexit $__rc\n`;
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const after: Record<string, string> = {};
      const raw = fs.existsSync(envFile) ? fs.readFileSync(envFile, 'utf8') : '';
      fs.rmSync(envFile, { force: true });
      for (const pair of raw.split('\0')) {
        const at = pair.indexOf('=');
        if (at > 0) after[pair.slice(0, at)] = pair.slice(at + 1);
      }
      resolve({ code, stdout, stderr, env: Object.keys(after).length ? after : env });
    });
  });
}

/** A shell line of a markdown page: the page, its line number, and the command without its comment. */
export type DocLine = { file: string; at: number; line: string };

/**
 * The lines of the ```sh blocks of a markdown page, each without its trailing `# comment`; blank and
 * comment-only lines are left out. Other shell fences (bash, shell, console) are refused, so no
 * command hides from the tests in a block they do not read.
 */
export function fencedShellLines(file: string, text: string): DocLine[] {
  const out: DocLine[] = [];
  let inSh = false;
  let inOther = false;
  text.split('\n').forEach((raw, i) => {
    const fence = /^```(\S*)\s*$/.exec(raw);
    if (fence && !inSh && !inOther) {
      if (/^(bash|shell|console|zsh)$/.test(fence[1]))
        throw new Error(`${file}:${i + 1}: use \`\`\`sh for shell lines`);
      if (fence[1] === 'sh') inSh = true;
      else inOther = true;
      return;
    }
    if (fence) {
      inSh = false;
      inOther = false;
      return;
    }
    if (!inSh) return;
    const line = raw.replace(/\s+# .*$/, '').trim();
    if (line && !line.startsWith('#')) out.push({ file, at: i + 1, line });
  });
  return out;
}
