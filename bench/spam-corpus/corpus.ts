/**
 * Our own spam corpus, generated with a fixed seed: spam of many kinds, ordinary contact-form
 * messages and newsletter-like legitimate ones, each composed from many fragments. The last template
 * of every kind is held out: the `train` split never holds it, half of the `unseen` split is drawn
 * from it (the other half are new compositions of the other templates, none equal to a training
 * message). Run directly to print it as JSONL: `npx tsx bench/spam-corpus/corpus.ts > corpus.jsonl`.
 */
import { expand, Rng } from './expand.js';
import { honestSender, SLOTS, spamSender } from './slots.js';
import { type CorpusClass, KINDS, type Kind } from './templates.js';

/** One line of a corpus (the JSONL format spam-eval reads); kind, template and split are optional. */
export interface CorpusLine {
  class: CorpusClass;
  name?: string;
  email?: string;
  message: string;
  /** Where the line belongs: marked by the owner (`train`) or posted after (`unseen`). */
  split?: 'train' | 'unseen';
  /** Our corpus only: the kind, the template's number within it, and whether it is held out. */
  kind?: string;
  template?: number;
  heldOut?: boolean;
}

export const DEFAULT_SEED = 31;
export const DEFAULT_COUNTS: Record<CorpusClass, number> = { spam: 1600, ham: 1400, newsletter: 600 };

function draw(r: Rng, kind: Kind, template: number, split: 'train' | 'unseen'): CorpusLine {
  const message = expand(kind.templates[template], r, SLOTS);
  const line: CorpusLine = { class: kind.cls, message, split, kind: kind.kind, template, heldOut: false };
  if (kind.cls === 'spam') {
    const s = spamSender(r);
    // Bots fill every field; some leave the name out or put the address in it.
    if (r.chance(0.8)) line.name = r.chance(0.1) ? s.email : s.name;
    line.email = s.email;
  } else if (kind.cls === 'ham') {
    Object.assign(line, honestSender(r));
  } else {
    // A newsletter sent to the form: the sender's list address and its name.
    line.name = SLOTS.company(r);
    line.email = `${r.pick(['news', 'hello', 'info', 'events', 'team'])}@${r.pick(['harborbakery.com', 'northfieldyoga.co.uk', 'cedarworkshop.de', 'lumenbooks.com', 'oakhouse-studio.com'])}`;
  }
  line.heldOut = template === kind.templates.length - 1;
  return line;
}

/** The corpus: per class, half `train` (seen templates) and half `unseen` (half of them held out). */
export function generateCorpus(seed = DEFAULT_SEED, counts = DEFAULT_COUNTS): CorpusLine[] {
  const r = new Rng(seed);
  const out: CorpusLine[] = [];
  for (const cls of ['spam', 'ham', 'newsletter'] as const) {
    const kinds = KINDS.filter((k) => k.cls === cls);
    const trainN = Math.floor(counts[cls] / 2);
    const seen = new Set<string>();
    for (let i = 0; i < trainN; i += 1) {
      const kind = kinds[i % kinds.length];
      const line = draw(r, kind, r.int(0, kind.templates.length - 2), 'train');
      seen.add(line.message);
      out.push(line);
    }
    let made = trainN;
    for (let i = 0; made < counts[cls] && i < counts[cls] * 4; i += 1) {
      const kind = kinds[i % kinds.length];
      const last = kind.templates.length - 1;
      const line = draw(r, kind, r.chance(0.5) ? last : r.int(0, last - 1), 'unseen');
      if (seen.has(line.message)) continue;
      seen.add(line.message);
      out.push(line);
      made += 1;
    }
  }
  return r.shuffle(out);
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  const seed = Number(process.argv[2] ?? DEFAULT_SEED);
  for (const line of generateCorpus(seed)) process.stdout.write(`${JSON.stringify(line)}\n`);
}
