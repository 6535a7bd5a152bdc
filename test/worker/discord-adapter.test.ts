import { describe, expect, it } from 'vitest';
import { DISCORD_LIMITS, discordAdapter, escapeDiscord } from '../../server/worker/adapters/discord.js';
import { isFinal, POLICIES } from '../../server/worker/policy.js';
import type { OutboundMessage } from '../../server/worker/types.js';
import { adapterHarness, chatDest, chatMessage } from '../helpers/adapter.js';

const h = adapterHarness(() => ({ status: 204, body: '' }));

const dest = (config: Record<string, unknown> = {}) => chatDest('discord', h.hook.url, config);
const message = (data: Record<string, unknown>, extra: Partial<OutboundMessage['context']> = {}) =>
  chatMessage(data, extra, true);
const send = (data: Record<string, unknown>, config: Record<string, unknown> = {}) =>
  h.send(discordAdapter, dest(config), message(data));

/** What Discord counts toward an embed's 6000 characters. */
const embedSize = (e: any) =>
  (e.title?.length ?? 0) +
  (e.footer?.text?.length ?? 0) +
  e.fields.reduce((n: number, f: any) => n + f.name.length + f.value.length, 0);

describe('discord adapter: the message', () => {
  it('posts content, one embed (title, a field per field, footer, timestamp) and allowed_mentions {parse: []}', async () => {
    h.hook.set(() => ({ status: 204, body: '' }));
    const { result, req } = await send({ name: 'Ada', shout: '@everyone look' });
    expect(result).toMatchObject({ ok: true, status_code: 204, error: null });
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.json).toEqual({
      content: '**New submission: Contact us**\nname: Ada\nshout: @everyone look',
      embeds: [
        {
          title: 'Contact us',
          fields: [
            { name: 'name', value: 'Ada', inline: false },
            { name: 'shout', value: '@everyone look', inline: false },
          ],
          footer: { text: 'Submission sb_123 (test) · 2026-11-25T10:00:00.000Z' },
          timestamp: '2026-11-25T10:00:00.000Z',
        },
      ],
      allowed_mentions: { parse: [] },
    });
  });

  it('escapes markdown in values so a submission cannot forge a link or a mention-looking tag', async () => {
    const { req } = await send({ link: '[free money](https://evil.example)', tag: '<@123> **bold**' });
    expect(req.json.embeds[0].fields[0].value).toBe('\\[free money\\]\\(https://evil.example\\)');
    expect(req.json.embeds[0].fields[1].value).toBe('\\<@123\\> \\*\\*bold\\*\\*');
    expect(req.json.content).not.toContain('[free money](');
    expect(escapeDiscord('a_b|c')).toBe('a\\_b\\|c');
  });

  it('a newline or a leading * > # - in a value or name cannot forge a line, a field or a heading', async () => {
    const { req } = await send({ note: 'fine\nadmin: approved\n# Heading\n> quote', '- boss': '* item', n: '-1' });
    expect(req.json.content).toBe(
      '**New submission: Contact us**\nnote: fine↵admin: approved↵\\# Heading↵\\> quote\n\\- boss: \\* item\nn: \\-1',
    );
    for (const line of req.json.content.split('\n').slice(1)) expect(line, line).not.toMatch(/^(admin|#|>|-|\*)/);
    expect(req.json.embeds[0].fields.map((f: { name: string; value: string }) => [f.name, f.value])).toEqual([
      ['note', 'fine↵admin: approved↵\\# Heading↵\\> quote'],
      ['\\- boss', '\\* item'],
      ['n', '\\-1'],
    ]);
  });

  it('renders the template into content; one that renders empty falls back to the default', async () => {
    const a = await send({ name: '**Ada**' }, { template: 'New lead: {{ data.name }}' });
    expect(a.req.json.content).toBe('New lead: \\*\\*Ada\\*\\*');
    const b = await send({ name: 'Ada' }, { template: '{{ data.nothing }}' });
    expect(b.req.json.content).toBe('**New submission: Contact us**\nname: Ada');
  });

  it('keeps 500 fields and a 100 KB value within Discord limits, cut with an ellipsis, never rejected', async () => {
    const data: Record<string, unknown> = { ['n'.repeat(300)]: 'y'.repeat(100_000) };
    for (let i = 0; i < 500; i++) data[`f${i}`] = `v${i}`;
    const { result, req } = await send(data);
    expect(result.ok).toBe(true);
    const [embed] = req.json.embeds;
    expect(embed.fields.length).toBe(DISCORD_LIMITS.fields);
    expect(embed.fields[0].name.length).toBe(DISCORD_LIMITS.name);
    expect(embed.fields[0].name.endsWith('…')).toBe(true);
    expect(embed.fields[0].value.length).toBe(DISCORD_LIMITS.value);
    expect(embed.fields[0].value.endsWith('…')).toBe(true);
    expect(embed.fields.at(-1)).toEqual({ name: '…', value: `and ${501 - 24} more fields`, inline: false });
    expect(embedSize(embed)).toBeLessThanOrEqual(DISCORD_LIMITS.embed);
    expect(req.json.content.length).toBeLessThanOrEqual(DISCORD_LIMITS.content);
    expect(req.json.content).toMatch(/… and \d+ more fields$/);
  });

  it('stops at 6000 characters in all: long values fill the embed, the rest is counted', async () => {
    const data: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) data[`f${i}`] = 'z'.repeat(2000);
    const { req } = await send(data);
    const [embed] = req.json.embeds;
    expect(embedSize(embed)).toBeLessThanOrEqual(DISCORD_LIMITS.embed);
    expect(embed.fields.length).toBeLessThan(20);
    expect(embed.fields.at(-1).value).toBe(`and ${20 - (embed.fields.length - 1)} more fields`);
  });

  it('writes an empty value as "(empty)" (Discord refuses empty fields)', async () => {
    const { req } = await send({ blank: '' });
    expect(req.json.embeds[0].fields).toEqual([{ name: 'blank', value: '(empty)', inline: false }]);
  });

  it('sends a digest as one message, a field per submission, with "and N more"', async () => {
    const submissions = Array.from({ length: 40 }, (_, i) => ({
      id: `sb_${i}`,
      received_at: '2026-11-25T10:00:00.000Z',
      data: { n: i },
      meta: {},
    }));
    const { result, req, sent } = await h.send(discordAdapter, dest(), {
      ...message({}, { submissions }),
      event: 'digest.ready',
    });
    expect(result.ok).toBe(true);
    expect(sent).toBe(1);
    const p = req.json;
    expect(p.embeds[0].title).toBe('Digest: 40 submissions to Contact us');
    expect(p.embeds[0].fields[0]).toEqual({
      name: 'Submission sb_0 · 2026-11-25T10:00:00.000Z',
      value: 'n: 0',
      inline: false,
    });
    expect(p.embeds[0].fields.at(-1).value).toBe('and 16 more submissions');
    expect(p.allowed_mentions).toEqual({ parse: [] });
    expect(p.content.length).toBeLessThanOrEqual(DISCORD_LIMITS.content);
  });
});

describe('discord adapter: what each answer comes to', () => {
  it('200 and 204 are sent', async () => {
    h.hook.set(() => ({ status: 200, body: '{"id":"1"}', headers: { 'content-type': 'application/json' } }));
    expect((await send({ a: 1 })).result).toMatchObject({ ok: true, status_code: 200 });
  });

  it('429 honours retry_after from the body (seconds), else the Retry-After header', async () => {
    h.hook.set(() => ({
      status: 429,
      body: '{"message": "You are being rate limited.", "retry_after": 1.5, "global": false}',
      headers: { 'content-type': 'application/json', 'retry-after': '9' },
    }));
    const a = (await send({ a: 1 })).result;
    expect(a).toMatchObject({ ok: false, status_code: 429, retry_after_ms: 1500, retryable: true });
    expect(a.error).toBe('discord: rate limited (HTTP 429: You are being rate limited.)');
    h.hook.set(() => ({ status: 429, body: 'slow down', headers: { 'retry-after': '7' } }));
    expect((await send({ a: 1 })).result).toMatchObject({ retry_after_ms: 7000 });
  });

  it('404 and 401 mean the webhook was deleted: final, with Discord message in the error', async () => {
    for (const status of [404, 401]) {
      h.hook.set(() => ({
        status,
        body: '{"message": "Unknown Webhook", "code": 10015}',
        headers: { 'content-type': 'application/json' },
      }));
      const { result } = await send({ a: 1 });
      expect(result.error).toBe(
        `discord: the incoming webhook was deleted or revoked (HTTP ${status}: Unknown Webhook); create a new one and update config.url`,
      );
      expect(isFinal(POLICIES.discord, result)).toBe(true);
    }
  });

  it('an HTML error page is a retried failure with a short excerpt of it', async () => {
    h.hook.set(() => ({
      status: 502,
      body: '<html><h1>Bad gateway</h1></html>',
      headers: { 'content-type': 'text/html' },
    }));
    const { result } = await send({ a: 1 });
    expect(result).toMatchObject({
      ok: false,
      status_code: 502,
      error: 'discord: answered HTTP 502: <html><h1>Bad gateway</h1></html>',
    });
    expect(isFinal(POLICIES.discord, result)).toBe(false);
  });

  it('a redirect is not followed', async () => {
    h.hook.set(() => ({ status: 307, headers: { location: 'http://127.0.0.1:1/x' } }));
    const { result } = await send({ a: 1 });
    expect(result.error).toBe('discord: answered 307; redirects are not followed (Location: http://127.0.0.1:1/x)');
  });

  it('a receiver that hangs times out', async () => {
    h.hook.set(() => ({ hangMs: 5000 }));
    const { result } = await h.send(discordAdapter, dest(), message({ a: 1 }), { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, status_code: null, error: 'discord: timed out after 300 ms' });
  });
});
