/**
 * The spam evaluation, over any HTTP transport (a server over loopback for `npm run spam:eval`, the
 * app in process for the test): posts a corpus through POST /s/{formId} as visitors would (a
 * browser's User-Agent, the site's origin, no render token, JSON or form-encoded like a site), marks
 * the training part through PATCH /v1/submissions/{id} as an owner would, waits for the model to
 * reach intake, posts the unseen part and counts, per class, the submissions stored as spam or
 * quarantined.
 */
import type { CorpusLine } from './corpus.js';
import { Rng } from './expand.js';
import type { CorpusClass } from './templates.js';

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers of many shapes, read field by field
  json: any;
}
/** One HTTP request to formsvc (path from the root, body already encoded). */
export type Send = (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<Answer>;

export interface EvalOptions {
  send: Send;
  /** A manage key of the organization the evaluation creates its form in. */
  key: string;
  train: CorpusLine[];
  unseen: CorpusLine[];
  /** How long to wait after the marks before the unseen part (the model reaches intake within 2 s). */
  waitMs: number;
  /** Requests in flight at once. */
  concurrency?: number;
  progress?: (text: string) => void;
}

export interface ClassResult {
  cls: CorpusClass;
  posted: number;
  flagged: number;
  /** Our corpus only: the same for the lines of held-out templates. */
  heldOut: { posted: number; flagged: number };
}

export interface EvalResult {
  formId: string;
  marks: number;
  unseen: ClassResult[];
}

/** The evaluation's targets: share of each class flagged (spam at least, the others at most). */
export const TARGETS: Record<CorpusClass, { op: '>=' | '<='; share: number }> = {
  spam: { op: '>=', share: 0.9 },
  ham: { op: '<=', share: 0.01 },
  newsletter: { op: '<=', share: 0.1 },
};

export const ORIGIN = 'https://www.example-shop.test';
export const BROWSER_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';

/** Whether a class's result meets its target. */
export function meets(r: ClassResult): boolean {
  const t = TARGETS[r.cls];
  const share = r.posted ? r.flagged / r.posted : 0;
  return t.op === '>=' ? share >= t.share : share <= t.share;
}

async function api(o: EvalOptions, method: string, path: string, json?: unknown): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${o.key}`, accept: 'application/json' };
  if (json !== undefined) headers['content-type'] = 'application/json';
  const a = await o.send(method, path, headers, json === undefined ? undefined : JSON.stringify(json));
  if (a.status >= 300) throw new Error(`${method} ${path}: ${a.status} ${JSON.stringify(a.json)}`);
  return a;
}

function visitorAddress(n: number): string {
  if (n < 254) return `198.51.100.${n + 1}`;
  if (n < 508) return `203.0.113.${n - 253}`;
  return `2001:db8:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::1`;
}

/** A visitor's post: every other one form-encoded, as a plain HTML form sends it; from an address of its own. */
async function visit(o: EvalOptions, formId: string, line: CorpusLine, n: number): Promise<string> {
  const fields: Record<string, string> = {};
  if (line.name !== undefined) fields.name = line.name;
  if (line.email !== undefined) fields.email = line.email;
  fields.message = line.message;
  const form = n % 2 === 1;
  const headers: Record<string, string> = {
    'user-agent': BROWSER_UA,
    origin: ORIGIN,
    referer: `${ORIGIN}/contact`,
    accept: 'application/json',
    'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
    // A different visitor for each post (loopback is a trusted proxy), so that no per-address count
    // adds up over the run: documentation addresses, IPv4 (RFC 5737) first, then a /64 each (RFC 3849).
    'x-forwarded-for': visitorAddress(n),
  };
  const body = form ? new URLSearchParams(fields).toString() : JSON.stringify(fields);
  const a = await o.send('POST', `/s/${formId}`, headers, body);
  const id = a.json?.submission_id;
  if (a.status !== 200 || typeof id !== 'string') {
    throw new Error(`POST /s/${formId}: ${a.status} ${JSON.stringify(a.json)}`);
  }
  return id;
}

/** Runs fn over items with at most `limit` in flight, in order of start. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Ids of the form's submissions stored as spam or quarantined. */
async function flaggedIds(o: EvalOptions, formId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const status of ['spam', 'quarantined']) {
    let cursor: string | null = null;
    do {
      const q: string = `/v1/submissions?form_id=${formId}&status=${status}&limit=200${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await api(o, 'GET', q);
      for (const s of page.json.data as { id: string }[]) ids.add(s.id);
      cursor = page.json.next_cursor;
    } while (cursor);
  }
  return ids;
}

function tally(lines: CorpusLine[], ids: string[], flagged: Set<string>): ClassResult[] {
  return (['spam', 'ham', 'newsletter'] as const).map((cls) => {
    const r: ClassResult = { cls, posted: 0, flagged: 0, heldOut: { posted: 0, flagged: 0 } };
    lines.forEach((line, i) => {
      if (line.class !== cls) return;
      const hit = flagged.has(ids[i]) ? 1 : 0;
      r.posted += 1;
      r.flagged += hit;
      if (line.heldOut) {
        r.heldOut.posted += 1;
        r.heldOut.flagged += hit;
      }
    });
    return r;
  });
}

export async function evaluate(o: EvalOptions): Promise<EvalResult> {
  const say = o.progress ?? (() => {});
  const limit = o.concurrency ?? 4;
  const form = await api(o, 'POST', '/v1/forms', { name: 'Spam evaluation' });
  const formId = form.json.id as string;
  // The site's form: only its origin may post (others are quarantined, which would count as flagged).
  await api(o, 'PATCH', `/v1/forms/${formId}`, { settings: { allowed_origins: [ORIGIN] } });
  say(`training: ${o.train.length} posts, each marked as its class says`);
  const trainIds = await pool(o.train, limit, async (line, i) => {
    const id = await visit(o, formId, line, i);
    // The owner's marks: spam as spam, the rest as fine (a received submission marked received teaches too).
    await api(o, 'PATCH', `/v1/submissions/${id}`, { status: line.class === 'spam' ? 'spam' : 'received' });
    return id;
  });
  say(`waiting ${o.waitMs / 1000} s for the model to reach intake`);
  await new Promise((r) => setTimeout(r, o.waitMs));
  say(`unseen: ${o.unseen.length} posts`);
  const unseenIds = await pool(o.unseen, limit, (line, i) => visit(o, formId, line, o.train.length + i));
  const flagged = await flaggedIds(o, formId);
  return {
    formId,
    marks: trainIds.length,
    unseen: tally(o.unseen, unseenIds, flagged),
  };
}

/** The result as a table for a person, and whether every target holds. */
export function report(r: EvalResult): { text: string; ok: boolean } {
  const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)} %` : '—');
  const rows = r.unseen.map((c) => {
    const t = TARGETS[c.cls];
    return [
      c.cls,
      String(c.posted),
      String(c.flagged),
      pct(c.flagged, c.posted),
      c.heldOut.posted ? `${pct(c.heldOut.flagged, c.heldOut.posted)} of ${c.heldOut.posted}` : '—',
      `${t.op} ${t.share * 100} %`,
      meets(c) ? 'ok' : 'MISSED',
    ];
  });
  const head = ['class', 'unseen', 'flagged', 'share', 'held-out templates', 'target', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const text = [
    `marks: ${r.marks} (through PATCH /v1/submissions/{id}); flagged = stored as spam or quarantined`,
    line(head),
    ...rows.map(line),
  ].join('\n');
  return { text, ok: r.unseen.every(meets) };
}

/**
 * The training and unseen parts of a corpus: its `split` when it has one (ours does), else a
 * shuffle; at most `train` lines to mark and `unseen` to post after.
 */
export function splitCorpus(lines: CorpusLine[], train: number, unseen = Number.POSITIVE_INFINITY) {
  const split = lines.some((l) => l.split);
  // A corpus without a split is shuffled (seeded): files are often sorted by class.
  const all = split ? lines : new Rng(1).shuffle([...lines]);
  const t = split ? all.filter((l) => l.split === 'train') : all.slice(0, train);
  const u = split ? all.filter((l) => l.split !== 'train') : all.slice(train);
  return { train: t.slice(0, train), unseen: u.slice(0, unseen) };
}
