/**
 * npx tsx scripts/mbox-to-jsonl.ts --class spam|ham|newsletter [--split train|unseen] FILE.mbox:
 * prints one spam-eval corpus line per message of an mbox file (docs/spam.md): the subject and the
 * plain-text body as `message`, the From address as `email` and its display name as `name`. Only
 * what a form would carry is kept: the first text/plain part (quoted-printable and base64 decoded),
 * or the HTML part's text when there is none.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';

interface Part {
  headers: Map<string, string>;
  body: string;
}

/** Headers (unfolded, names lowercased) and body of one message or MIME part. */
function parsePart(raw: string): Part {
  const cut = raw.search(/\r?\n\r?\n/);
  const head = cut < 0 ? raw : raw.slice(0, cut);
  const body = cut < 0 ? '' : raw.slice(cut).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body };
}

const utf8 = (latin1: string) => Buffer.from(latin1, 'latin1').toString('utf8');

/** RFC 2047 encoded words (=?utf-8?B?…?= and =?…?Q?…?=) of a header, decoded. */
function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([bq])\?([^?]*)\?=/gi, (_, charset: string, enc: string, text: string) => {
    const bytes =
      enc.toLowerCase() === 'b'
        ? Buffer.from(text, 'base64')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
            'latin1',
          );
    return new TextDecoder(/utf-?8/i.test(charset) ? 'utf-8' : 'latin1').decode(bytes);
  });
}

function decodeBody(part: Part): string {
  const enc = (part.headers.get('content-transfer-encoding') ?? '').toLowerCase();
  if (enc === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (enc === 'quoted-printable') {
    const bytes = part.body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  // The file is read as latin1 (bytes kept as they are): 8-bit bodies are UTF-8 mostly.
  return utf8(part.body);
}

/** The text of a message: its first text/plain part, else its first text/html part without tags. */
function textOf(part: Part): string {
  const type = (part.headers.get('content-type') ?? 'text/plain').toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(part.headers.get('content-type') ?? '')?.[1];
  if (type.startsWith('multipart/') && boundary) {
    const parts = part.body.split(`--${boundary}`).slice(1, -1).map(parsePart);
    const plain = parts.find((p) =>
      (p.headers.get('content-type') ?? 'text/plain').toLowerCase().startsWith('text/plain'),
    );
    const nested = parts.find((p) => (p.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/'));
    const html = parts.find((p) => (p.headers.get('content-type') ?? '').toLowerCase().startsWith('text/html'));
    const pick = plain ?? nested ?? html;
    return pick ? textOf(pick) : '';
  }
  const text = decodeBody(part);
  return type.startsWith('text/html') ? text.replace(/<[^>]*>/g, ' ').replace(/&nbsp;/g, ' ') : text;
}

/** Messages of an mbox: split on the "From " lines that start each one. */
export function mboxMessages(mbox: string): string[] {
  return mbox
    .split(/^From .*\r?\n/m)
    .map((m) => m.replace(/^>From /gm, 'From '))
    .filter((m) => m.trim());
}

export function corpusLine(raw: string, cls: string, split?: string) {
  const part = parsePart(raw);
  const from = decodeWords(utf8(part.headers.get('from') ?? ''));
  const email = /<([^>]+)>/.exec(from)?.[1] ?? /\S+@\S+/.exec(from)?.[0];
  const name = from
    .replace(/<[^>]*>/, '')
    .replace(/"/g, '')
    .trim();
  const subject = decodeWords(utf8(part.headers.get('subject') ?? ''));
  const message = `${subject}\n\n${textOf(part)}`.trim().slice(0, 20_000);
  return {
    class: cls,
    ...(name && name !== email ? { name } : {}),
    ...(email ? { email } : {}),
    message,
    ...(split ? { split } : {}),
  };
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  const { values, positionals } = parseArgs({
    options: { class: { type: 'string' }, split: { type: 'string' } },
    allowPositionals: true,
  });
  if (!values.class || !['spam', 'ham', 'newsletter'].includes(values.class) || positionals.length !== 1) {
    process.stderr.write(
      'usage: npx tsx scripts/mbox-to-jsonl.ts --class spam|ham|newsletter [--split train|unseen] FILE.mbox\n',
    );
    process.exit(2);
  }
  for (const raw of mboxMessages(fs.readFileSync(positionals[0], 'latin1'))) {
    process.stdout.write(`${JSON.stringify(corpusLine(raw, values.class, values.split))}\n`);
  }
}
