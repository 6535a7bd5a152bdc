import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { escapeSlack, SLACK_LIMITS, slackAdapter } from '../../server/worker/adapters/slack.js';
import { isFinal, POLICIES } from '../../server/worker/policy.js';
import { adapterHarness, chatDest, chatMessage } from '../helpers/adapter.js';

const h = adapterHarness(() => ({ status: 200, body: 'ok' }));

const dest = (config: Record<string, unknown> = {}) => chatDest('slack', h.hook.url, config);
const send = (data: Record<string, unknown>, config: Record<string, unknown> = {}) =>
  h.send(slackAdapter, dest(config), chatMessage(data));

/** Every string anywhere in a JSON value. */
const strings = (v: unknown, out: string[] = []): string[] => {
  if (typeof v === 'string') out.push(v);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
  return out;
};

describe('slack adapter: the message', () => {
  it('posts JSON {text, blocks}: the form name and a line per field, a header, a section per field, the id', async () => {
    h.hook.set(() => ({ status: 200, body: 'ok' }));
    const { result, req } = await send({ name: 'Ada', message: 'hello' });
    expect(result).toMatchObject({ ok: true, status_code: 200, error: null });
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.json.text).toBe('New submission: Contact us\nname: Ada\nmessage: hello');
    expect(req.json.blocks).toEqual([
      { type: 'header', text: { type: 'plain_text', text: 'Contact us', emoji: false } },
      { type: 'section', text: { type: 'mrkdwn', text: '*name*\nAda' } },
      { type: 'section', text: { type: 'mrkdwn', text: '*message*\nhello' } },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: 'Submission sb_123 · 2026-11-25T10:00:00.000Z' }],
      },
    ]);
  });

  it('escapes &, < and > in every value and name: no <!channel>, no forged link', async () => {
    const { req } = await send({
      alert: '<!channel> wake up',
      link: '<https://evil.example|click here>',
      'a<b>': 'Tom & Jerry',
    });
    const all = strings(req.json);
    expect(all.some((s) => s.includes('<!channel>'))).toBe(false);
    expect(all.some((s) => s.includes('<https://evil.example|'))).toBe(false);
    expect(req.json.text).toContain('alert: &lt;!channel&gt; wake up');
    expect(req.json.text).toContain('a&lt;b&gt;: Tom &amp; Jerry');
    expect(escapeSlack('<@U1> & <#C1>')).toBe('&lt;@U1&gt; &amp; &lt;#C1&gt;');
  });

  it('a newline or a leading * > # - in a value or name cannot forge a line, a field or a quote', async () => {
    const { req } = await send(
      { note: 'fine\nadmin: approved\r\n> quoted', '*boss*': '- item', head: '# Title' },
      { template: '{{ data.note }}\n{{ data.head }}' },
    );
    // The template's own line break stays; the values' breaks are shown as ↵.
    expect(req.json.text).toBe('fine↵admin: approved↵&gt; quoted\n\u200b# Title');
    const lines = req.json.text.split('\n');
    expect(lines.some((l: string) => /^(admin|&gt;|>|#|-|\*)/.test(l))).toBe(false);
    const sections = req.json.blocks.filter((b: { type: string }) => b.type === 'section');
    expect(sections.map((b: { text: { text: string } }) => b.text.text)).toEqual([
      '*note*\nfine↵admin: approved↵&gt; quoted',
      '*\u200b*boss**\n\u200b- item',
      '*head*\n\u200b# Title',
    ]);
    // No line of any block starts with a marker or a forged "name: value" of its own.
    for (const text of strings(req.json.blocks)) {
      for (const line of text.split('\n')) expect(line, line).not.toMatch(/^(admin:|&gt;|>|#|-)/);
    }
  });

  it('renders the template into text with escaped values; a template that renders empty falls back', async () => {
    const a = await send({ name: '<!here>' }, { template: '<!subteam^S1> {{ data.name }} wrote to {{ form.name }}' });
    expect(a.req.json.text).toBe('<!subteam^S1> &lt;!here&gt; wrote to Contact us');
    expect(a.req.json.blocks[0].type).toBe('header');
    const b = await send({ name: 'Ada' }, { template: '  {{ data.missing }} ' });
    expect(b.req.json.text).toBe('New submission: Contact us\nname: Ada');
  });

  it('cuts 500 fields and a 100 KB value to Slack limits, saying how many more there are', async () => {
    const data: Record<string, unknown> = { big: `<${'x'.repeat(100_000)}` };
    for (let i = 0; i < 500; i++) data[`f${i}`] = `v${i}`;
    const { result, req } = await send(data);
    expect(result.ok).toBe(true);
    const { text, blocks } = req.json;
    expect(text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    expect(text).toMatch(/… and \d+ more fields$/);
    expect(blocks.length).toBe(SLACK_LIMITS.blocks);
    expect(blocks[1].text.text.startsWith('*big*\n&lt;xxx')).toBe(true);
    expect(blocks[1].text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.section);
    expect(blocks[1].text.text.endsWith('…')).toBe(true);
    expect(blocks.at(-2)).toEqual({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `… and ${501 - 47} more fields` }],
    });
    expect(blocks.at(-1).elements[0].text).toContain('sb_123');
  });

  it('never cuts an escape in half', async () => {
    const { req } = await send({ v: '&'.repeat(5000) });
    const section = req.json.blocks[1].text.text as string;
    expect(section).toMatch(/^\*v\*\n(&amp;)+…$/);
  });

  it('sends a digest as one message listing the submissions, with "and N more"', async () => {
    const submissions = Array.from({ length: 60 }, (_, i) => ({
      id: `sb_${i}`,
      received_at: `2026-11-25T10:${String(i).padStart(2, '0')}:00.000Z`,
      data: { n: i, who: '<!everyone>' },
      meta: {},
    }));
    const msg = { ...chatMessage({}, { submissions }), event: 'digest.ready' };
    const { result, req, sent } = await h.send(slackAdapter, dest(), msg);
    expect(result.ok).toBe(true);
    expect(sent).toBe(1);
    const { text, blocks } = req.json;
    expect(blocks[0].text.text).toBe('Digest: 60 submissions to Contact us');
    expect(blocks.length).toBe(SLACK_LIMITS.blocks);
    expect(blocks.at(-1).elements[0].text).toBe(`… and ${60 - 48} more submissions`);
    expect(blocks[1].text.text).toBe('*Submission sb_0 · 2026-11-25T10:00:00.000Z*\nn: 0\nwho: &lt;!everyone&gt;');
    expect(text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    expect(strings(req.json).some((s) => s.includes('<!everyone>'))).toBe(false);
  });
});

describe('slack adapter: what each answer comes to', () => {
  it('200 with a body other than "ok" (an HTML page) is a failure carrying the text', async () => {
    h.hook.set(() => ({
      status: 200,
      body: '<html>\n<body>Sign in</body></html>',
      headers: { 'content-type': 'text/html' },
    }));
    const { result } = await send({ a: 1 });
    expect(result).toMatchObject({ ok: false, status_code: 200, retryable: true });
    expect(result.error).toBe('slack: unexpected answer (HTTP 200: <html> <body>Sign in</body></html>)');
  });

  it('400 keeps Slack text in the error and is retried', async () => {
    h.hook.set(() => ({ status: 400, body: 'invalid_blocks' }));
    const { result } = await send({ a: 1 });
    expect(result).toMatchObject({ ok: false, status_code: 400, error: 'slack: answered HTTP 400: invalid_blocks' });
    expect(isFinal(POLICIES.slack, result)).toBe(false);
  });

  it('404 and 401 mean the webhook was deleted: final, and the error says so', async () => {
    for (const [status, body] of [
      [404, 'no_service'],
      [401, 'invalid_token'],
    ] as const) {
      h.hook.set(() => ({ status, body }));
      const { result } = await send({ a: 1 });
      expect(result.error).toBe(
        `slack: the incoming webhook was deleted or revoked (HTTP ${status}: ${body}); create a new one and update config.url`,
      );
      expect(isFinal(POLICIES.slack, result)).toBe(true);
    }
  });

  it('429 carries the Retry-After Slack asked for', async () => {
    h.hook.set(() => ({ status: 429, body: 'rate_limited', headers: { 'retry-after': '30' } }));
    const { result } = await send({ a: 1 });
    expect(result).toMatchObject({ ok: false, status_code: 429, retry_after_ms: 30_000 });
    expect(result.error).toBe('slack: rate limited (HTTP 429: rate_limited)');
  });

  it('a redirect is not followed: a failure naming the Location', async () => {
    h.hook.set((req) =>
      req.url === '/hook' ? { status: 302, headers: { location: `${h.hook.url}?moved` } } : { status: 200, body: 'ok' },
    );
    const { result, sent } = await send({ a: 1 });
    expect(result).toMatchObject({ ok: false, status_code: 302, retryable: true });
    expect(result.error).toContain('redirects are not followed');
    expect(sent).toBe(1);
  });

  it('a receiver that hangs times out with a clear error', async () => {
    h.hook.set(() => ({ hangMs: 5000 }));
    const { result } = await h.send(slackAdapter, dest(), chatMessage({ a: 1 }), { timeoutMs: 300 });
    expect(result).toMatchObject({
      ok: false,
      status_code: null,
      error: 'slack: timed out after 300 ms',
      retryable: true,
    });
  });

  it('a 50 MB answer is not read: an excerpt, and the send ends', async () => {
    let written = 0;
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (written < 50 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
      res.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big`;
      const result = await slackAdapter(h.deps, { ...dest(), config: { url } }, chatMessage({ a: 1 }));
      expect(result).toMatchObject({ ok: false, status_code: 200 });
      expect(result.response_excerpt.length).toBe(500);
      expect(result.error?.length).toBeLessThan(300);
      expect(written).toBeLessThan(50 * 1024 * 1024);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('a destination without a URL fails without retrying and sends nothing', async () => {
    const { result, sent } = await h.send(slackAdapter, { ...dest(), config: {} }, chatMessage({ a: 1 }));
    expect(result).toMatchObject({ ok: false, retryable: false });
    expect(sent).toBe(0);
  });
});

describe('cutting chat text', () => {
  it('cuts before an escape or a surrogate pair, never inside, and reads no further than the limit', async () => {
    const { cutText } = await import('../../server/worker/adapters/chat.js');
    expect(cutText('short', 10)).toBe('short');
    expect(cutText('ab&amp;cd', 5)).toBe('ab…');
    expect(cutText('ab\\*cd', 4)).toBe('ab…');
    expect(cutText('ab😀cd', 4)).toBe('ab…');
    expect(cutText('abcdef', 4)).toBe('abc…');
  });

  it('lists lines within the limit and always has room to say how many are left out', async () => {
    const { listLines } = await import('../../server/worker/adapters/chat.js');
    expect(listLines(['a', 'b', 'c'], 100, 'fields')).toBe('a\nb\nc');
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`);
    const out = listLines(lines, 60, 'fields');
    expect(out.length).toBeLessThanOrEqual(60);
    expect(out).toMatch(/^line 0\nline 1\n[\s\S]*… and \d+ more fields$/);
    const kept = out.split('\n').length - 1;
    expect(out.endsWith(`… and ${100 - kept} more fields`)).toBe(true);
    expect(listLines(['x'.repeat(500), 'y'], 40, 'fields')).toBe(`${'x'.repeat(20)}…\n… and 1 more field`);
  });
});
