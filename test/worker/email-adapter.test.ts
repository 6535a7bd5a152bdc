import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import type { Outbound } from '../../server/core/outbound.js';
import { createMailer, type Mailer } from '../../server/mail.js';
import { asEmail, emailAdapter, replyToOf } from '../../server/worker/adapters/email.js';
import type { AdapterDeps, DestinationTarget, OutboundMessage } from '../../server/worker/types.js';
import { type SinkMail, startSmtpSink } from '../helpers/smtp.js';

type Sink = Awaited<ReturnType<typeof startSmtpSink>>;

/** Email never goes through outbound HTTP: any call is a failure of the test. */
const noOutbound: Outbound = {
  post: async () => {
    throw new Error('the email adapter must not make HTTP requests');
  },
  close: async () => {},
};

let sink: Sink;
let mailer: Mailer;
let deps: AdapterDeps;
let n = 0;

beforeAll(async () => {
  sink = await startSmtpSink();
  const config = loadConfig({ SMTP_URL: sink.url, MAIL_TRANSPORT: 'smtp', MAIL_FROM: 'Forms <forms@formsvc.test>' });
  mailer = createMailer(config);
  deps = { config, mailer, outbound: noOutbound };
});

afterAll(async () => {
  mailer.close();
  await sink.close();
});

/** A destination with a unique recipient, so each test finds its own mail at the sink. */
function dest(config: Record<string, unknown> = {}): DestinationTarget & { rcpt: string } {
  n += 1;
  const rcpt = `owner${n}@example.com`;
  return { id: `ds_${n}`, type: 'email', name: 'mail', config: { to: [rcpt], ...config }, rcpt };
}

function message(over: Partial<OutboundMessage['context']> = {}, event = 'submission.received'): OutboundMessage {
  const submission = { id: 'sb_1', status: 'received', test: false, received_at: '2024-05-01T10:00:00.000Z' };
  return {
    deliveryId: 'dl_1',
    event,
    payload: { id: 'dl_1', type: event },
    context: {
      form: { id: 'fm_1', slug: 'contact', name: 'Contact us', settings: {} },
      submission,
      data: { name: 'Ada', email: 'ada@example.com', message: 'Hello' },
      meta: { ip: '127.0.0.1' },
      subject_hint: null,
      ...over,
    },
  };
}

async function send(d: ReturnType<typeof dest>, msg: OutboundMessage): Promise<SinkMail> {
  const result = await emailAdapter(deps, d, msg);
  expect(result).toMatchObject({ ok: true, status_code: null, error: null });
  expect(result.response_excerpt.length).toBeLessThanOrEqual(500);
  return sink.waitFor((m) => m.to.includes(d.rcpt));
}

const header = (m: SinkMail, name: string) => m.parsed.headers.get(name) as any;

describe('email adapter', () => {
  it('sends the default subject, both bodies, Reply-To from the first email field', async () => {
    const d = dest();
    const mail = await send(d, message());
    expect(mail.subject).toBe('New submission: Contact us');
    expect(mail.text).toContain('name: Ada');
    expect(mail.text).toContain('email: ada@example.com');
    expect(mail.text).toContain('message: Hello');
    expect(mail.text).toContain('Submission sb_1 received 2024-05-01T10:00:00.000Z');
    expect(mail.html).toContain('<table');
    expect(mail.html).toContain('Ada');
    expect(header(mail, 'reply-to').value[0].address).toBe('ada@example.com');
    expect(header(mail, 'from').value[0].address).toBe('forms@formsvc.test');
  });

  it('renders subject_template (values raw, CR/LF stripped), with cc and from_name', async () => {
    const d = dest({
      subject_template: 'Message from {{ data.name }} via {{form.name}}',
      cc: ['copy@example.com'],
      from_name: 'Acme Forms',
    });
    const mail = await send(d, message({ data: { name: 'Ada & <Bob>\r\nBcc: evil@example.com' } }));
    expect(mail.subject).toBe('Message from Ada & <Bob> Bcc: evil@example.com via Contact us');
    expect(mail.to).toEqual([d.rcpt, 'copy@example.com']);
    expect(header(mail, 'cc').value[0].address).toBe('copy@example.com');
    expect(header(mail, 'bcc')).toBeUndefined();
    expect(header(mail, 'from').value[0]).toEqual({ address: 'forms@formsvc.test', name: 'Acme Forms' });
  });

  it('falls back to the _subject hint when there is no template', async () => {
    const d = dest();
    const mail = await send(d, message({ subject_hint: 'Quote request\nfrom the site' }));
    expect(mail.subject).toBe('Quote request from the site');
  });

  it('takes Reply-To from settings.reply_to_field when it holds an email', async () => {
    const d = dest();
    const form = { id: 'fm_1', slug: 'c', name: 'C', settings: { reply_to_field: 'contact' } };
    const mail = await send(d, message({ form, data: { cc_me: 'first@example.com', contact: 'chosen@example.com' } }));
    expect(header(mail, 'reply-to').value[0].address).toBe('chosen@example.com');
  });

  it('falls back to the first email-looking field when reply_to_field is not an email', async () => {
    const d = dest();
    const form = { id: 'fm_1', slug: 'c', name: 'C', settings: { reply_to_field: 'contact' } };
    const mail = await send(d, message({ form, data: { contact: 'call me', note: 'x', other: 'second@example.com' } }));
    expect(header(mail, 'reply-to').value[0].address).toBe('second@example.com');
  });

  it('sets no Reply-To when no field holds exactly one address', async () => {
    const d = dest();
    const mail = await send(
      d,
      message({ data: { a: 'x@example.com, y@example.com', b: 'z@example.com\r\nBcc: w@example.com', c: 'nope' } }),
    );
    expect(header(mail, 'reply-to')).toBeUndefined();
  });

  it('escapes every value in the HTML part', async () => {
    const d = dest();
    const mail = await send(d, message({ data: { '<th>': '<script>alert(1)</script> & "q"' } }));
    expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;');
    expect(mail.html).toContain('&lt;th&gt;');
    expect(mail.html).not.toContain('<script>');
    expect(mail.text).toContain('<th>: <script>alert(1)</script> & "q"');
  });

  it('lists arrays, objects and file references in the bodies', async () => {
    const d = dest();
    const mail = await send(d, message({ data: { tags: ['a', 'b'], address: { city: 'London' }, cv: 'fl_123' } }));
    expect(mail.text).toContain('tags: a, b');
    expect(mail.text).toContain('address: {"city":"London"}');
    expect(mail.text).toContain('cv: fl_123');
  });

  it('sends a digest with one section per submission', async () => {
    const d = dest({ subject_template: 'ignored for digests {{data.name}}' });
    const submissions = [
      {
        id: 'sb_a',
        status: 'received',
        test: false,
        received_at: '2024-05-01T10:00:00.000Z',
        data: { name: 'Ada' },
        meta: {},
      },
      {
        id: 'sb_b',
        status: 'received',
        test: false,
        received_at: '2024-05-01T11:00:00.000Z',
        data: { name: '<Bob>' },
        meta: {},
      },
    ];
    const mail = await send(d, message({ submission: null, data: {}, meta: {}, submissions }, 'digest.ready'));
    expect(mail.subject).toBe('Digest: 2 submissions to Contact us');
    expect(mail.text).toContain('Submission sb_a received 2024-05-01T10:00:00.000Z');
    expect(mail.text).toContain('name: Ada');
    expect(mail.text).toContain('Submission sb_b');
    expect(mail.text).toContain('name: <Bob>');
    expect(mail.html).toContain('&lt;Bob&gt;');
    expect(header(mail, 'reply-to')).toBeUndefined();
  });

  it('reports an SMTP rejection as a retryable failure with the error', async () => {
    const rejecting = await startSmtpSink({ reject: () => true });
    const config = loadConfig({ SMTP_URL: rejecting.url, MAIL_TRANSPORT: 'smtp' });
    const m = createMailer(config);
    try {
      const result = await emailAdapter({ config, mailer: m, outbound: noOutbound }, dest(), message());
      expect(result.ok).toBe(false);
      expect(result.retryable).toBe(true);
      expect(result.status_code).toBeNull();
      expect(result.error).toMatch(/mailbox unavailable|550/);
      expect(rejecting.messages).toHaveLength(0);
    } finally {
      m.close();
      await rejecting.close();
    }
  });

  it('fails without retrying when mail sending is not configured', async () => {
    const config = loadConfig({ MAIL_TRANSPORT: 'none' });
    const result = await emailAdapter(
      { config, mailer: createMailer(config), outbound: noOutbound },
      dest(),
      message(),
    );
    expect(result).toMatchObject({
      ok: false,
      retryable: false,
      error: 'mail sending is not configured (MAIL_TRANSPORT=none)',
    });
  });

  it('fails without retrying when the destination has no recipients', async () => {
    const result = await emailAdapter(deps, { id: 'ds_x', type: 'email', name: 'm', config: { to: [] } }, message());
    expect(result).toMatchObject({ ok: false, retryable: false });
    expect(result.error).toContain('config.to');
  });
});

describe('email address checks', () => {
  it('asEmail accepts one plain address and nothing else', () => {
    expect(asEmail(' ada@example.com ')).toBe('ada@example.com');
    expect(asEmail('a.b+tag@sub.example.co')).toBe('a.b+tag@sub.example.co');
    for (const bad of [
      'ada',
      'ada@localhost',
      'a@b.c\r\nBcc: x@y.z',
      'a@b.com,c@d.com',
      '"A" <a@b.com>',
      'a b@c.com',
      42,
      null,
    ]) {
      expect(asEmail(bad), String(bad)).toBeNull();
    }
  });

  it('replyToOf ignores a reply_to_field that is not in the data', () => {
    expect(replyToOf({ reply_to_field: 'missing' }, { e: 'e@example.com' })).toBe('e@example.com');
    expect(replyToOf({}, { e: 'nope' })).toBeUndefined();
  });
});
