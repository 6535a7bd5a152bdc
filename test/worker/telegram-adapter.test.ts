import { describe, expect, it } from 'vitest';
import type { HttpResult, Outbound } from '../../server/core/outbound.js';
import { TELEGRAM_MAX_TEXT, telegramAdapter } from '../../server/worker/adapters/telegram.js';
import type { DestinationTarget, OutboundMessage } from '../../server/worker/types.js';
import { adapterHarness } from '../helpers/adapter.js';

/**
 * Test-only outbound client: global fetch against the loopback fake Bot API, with the
 * HttpResult shape the real client returns (2xx ok, 500-character excerpt, Retry-After).
 */
const loopbackOutbound: Outbound = {
  async post(url, body, headers, opts): Promise<HttpResult> {
    if (!url.startsWith('http://127.0.0.1:'))
      return { ok: false, status: null, latencyMs: 0, excerpt: '', error: 'refused', refused: true };
    const started = performance.now();
    try {
      const res = await fetch(url, {
        method: 'POST',
        body,
        headers,
        redirect: 'manual',
        signal: AbortSignal.timeout(opts?.timeoutMs ?? 5000),
      });
      const text = await res.text();
      const retryAfter = Number(res.headers.get('retry-after'));
      return {
        ok: res.status >= 200 && res.status < 300,
        status: res.status,
        latencyMs: performance.now() - started,
        excerpt: text.slice(0, 500),
        error: res.ok ? null : `HTTP ${res.status}`,
        ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      };
    } catch (err) {
      return {
        ok: false,
        status: null,
        latencyMs: performance.now() - started,
        excerpt: '',
        error: (err as Error).message,
      };
    }
  },
  close: async () => {},
};

const TOKEN = '123456789:AAH-secret_token_value';
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json', ...headers },
});

/** Answers like the Bot API: ok with the sent message, or the error the test sets. */
const h = adapterHarness(
  (req) => json(200, { ok: true, result: { message_id: 1, chat: { id: req.json?.chat_id }, text: req.json?.text } }),
  { env: (url) => ({ TELEGRAM_API_BASE: url.replace(/\/hook$/, '') }), outbound: loopbackOutbound },
);

const dest = (config: Record<string, unknown> = {}): DestinationTarget => ({
  id: 'ds_tg',
  type: 'telegram',
  name: 'tg',
  config: { bot_token: TOKEN, chat_id: -100123, ...config },
});

function message(over: Partial<OutboundMessage['context']> = {}, event = 'submission.received'): OutboundMessage {
  return {
    deliveryId: 'dl_1',
    event,
    payload: { id: 'dl_1', type: event },
    context: {
      form: { id: 'fm_1', slug: 'contact', name: 'Contact & <Co>', settings: {} },
      submission: { id: 'sb_1', status: 'received', test: false, received_at: '2024-05-01T10:00:00.000Z' },
      data: { name: '<b>bold</b> & co', email: 'ada@example.com' },
      meta: {},
      subject_hint: null,
      ...over,
    },
  };
}

const send = (d: DestinationTarget, msg: OutboundMessage) => h.send(telegramAdapter, d, msg);

describe('telegram adapter', () => {
  it('posts sendMessage in HTML mode with values escaped and chat_id as a string', async () => {
    const { result, req } = await send(dest(), message());
    expect(result).toMatchObject({ ok: true, status_code: 200, error: null });
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe(`/bot${TOKEN}/sendMessage`);
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.json).toMatchObject({ chat_id: '-100123', parse_mode: 'HTML', disable_web_page_preview: true });
    const text: string = req?.json.text;
    expect(text).toContain('<b>New submission: Contact &amp; &lt;Co&gt;</b>');
    expect(text).toContain('<b>name</b>: &lt;b&gt;bold&lt;/b&gt; &amp; co');
    expect(text).toContain('<b>email</b>: ada@example.com');
    expect(result.response_excerpt).not.toContain(TOKEN);
  });

  it('honours the template, escaping values but not the template markup', async () => {
    const { result, req } = await send(
      dest({ template: '<b>{{ form.name }}</b>\n{{data.name}} ({{ submission.id }}) {{ data.missing }}!' }),
      message(),
    );
    expect(result.ok).toBe(true);
    expect(req?.json.text).toBe('<b>Contact &amp; &lt;Co&gt;</b>\n&lt;b&gt;bold&lt;/b&gt; &amp; co (sb_1) !');
  });

  it('cuts a long message to 4096 characters without breaking entities', async () => {
    const { result, req } = await send(dest(), message({ data: { long: '&'.repeat(5000) } }));
    expect(result.ok).toBe(true);
    const text: string = req?.json.text;
    expect(text.length).toBeLessThanOrEqual(TELEGRAM_MAX_TEXT);
    expect(text.endsWith('&amp;…')).toBe(true);
  });

  it('sends a digest with a header and each submission', async () => {
    const submissions = [
      { id: 'sb_a', received_at: '2024-05-01T10:00:00.000Z', data: { name: 'Ada' }, meta: {} },
      { id: 'sb_b', received_at: '2024-05-01T11:00:00.000Z', data: { name: '<Bob>' }, meta: {} },
    ];
    const { req } = await send(dest(), message({ submission: null, data: {}, submissions }, 'digest.ready'));
    const text: string = req?.json.text;
    expect(text).toContain('<b>Digest: 2 submissions to Contact &amp; &lt;Co&gt;</b>');
    expect(text).toContain('<b>name</b>: Ada');
    expect(text).toContain('<b>name</b>: &lt;Bob&gt;');
    const templated = await send(
      dest({ template: '{{submission.id}}: {{data.name}}' }),
      message({ submission: null, data: {}, submissions }, 'digest.ready'),
    );
    expect(templated.req?.json.text).toContain('sb_a: Ada\n\nsb_b: &lt;Bob&gt;');
  });

  it('a 400 "chat not found" is final and the token appears nowhere', async () => {
    h.hook.set(() =>
      json(400, { ok: false, error_code: 400, description: `Bad Request: chat not found (bot${TOKEN})` }),
    );
    try {
      const { result } = await send(dest(), message());
      expect(result).toMatchObject({ ok: false, status_code: 400, retryable: false });
      expect(result.error).toBe('telegram: Bad Request: chat not found (bot[redacted])');
      expect(JSON.stringify(result)).not.toContain(TOKEN);
      expect(JSON.stringify(result)).not.toContain('AAH-secret');
    } finally {
      h.hook.set((req) => json(200, { ok: true, result: { message_id: 2, text: req.json?.text } }));
    }
  });

  it('a 401 bad token is final too', async () => {
    h.hook.set(() => json(401, { ok: false, error_code: 401, description: 'Unauthorized' }));
    try {
      const { result } = await send(dest(), message());
      expect(result).toMatchObject({ ok: false, retryable: false, error: 'telegram: Unauthorized' });
    } finally {
      h.hook.set(() => json(200, { ok: true, result: {} }));
    }
  });

  it('a 429 is retried after the time Telegram asks for', async () => {
    h.hook.set(() =>
      json(429, {
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 7',
        parameters: { retry_after: 7 },
      }),
    );
    try {
      const { result } = await send(dest(), message());
      expect(result).toMatchObject({
        ok: false,
        status_code: 429,
        retryable: true,
        retry_after_ms: 7000,
        error: 'telegram: Too Many Requests: retry after 7',
      });
    } finally {
      h.hook.set(() => json(200, { ok: true, result: {} }));
    }
  });

  it('a 5xx without JSON is retryable', async () => {
    h.hook.set(() => ({ status: 502, body: 'bad gateway' }));
    try {
      const { result } = await send(dest(), message());
      expect(result).toMatchObject({ ok: false, status_code: 502, retryable: true, error: 'telegram: HTTP 502' });
    } finally {
      h.hook.set(() => json(200, { ok: true, result: {} }));
    }
  });

  it('a group moved to a supergroup says which chat id to use', async () => {
    h.hook.set(() =>
      json(400, {
        ok: false,
        error_code: 400,
        description: 'Bad Request: group chat was upgraded to a supergroup chat',
        parameters: { migrate_to_chat_id: -1009 },
      }),
    );
    try {
      const { result } = await send(dest(), message());
      expect(result.retryable).toBe(false);
      expect(result.error).toContain('the group is now chat -1009; update config.chat_id');
    } finally {
      h.hook.set(() => json(200, { ok: true, result: {} }));
    }
  });

  it('refuses a missing chat or a token that could bend the URL, sending nothing', async () => {
    for (const config of [{ chat_id: '' }, { bot_token: '' }, { bot_token: '../../evil?x=' }, { bot_token: 'a/b' }]) {
      const { result, sent } = await send(dest(config), message());
      expect(result).toMatchObject({ ok: false, retryable: false });
      expect(result.error).not.toContain('evil');
      expect(sent).toBe(0);
    }
  });

  it('an unreachable Bot API is a retryable failure without the token in the error', async () => {
    const config = { ...h.deps.config, telegramApiBase: 'http://127.0.0.1:1' };
    const result = await telegramAdapter({ ...h.deps, config }, dest(), message());
    expect(result).toMatchObject({ ok: false, status_code: null, retryable: true });
    expect(result.error).toMatch(/^telegram: /);
    expect(JSON.stringify(result)).not.toContain(TOKEN);
  });
});
