import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../server/config.js';
import type { Outbound } from '../../server/core/outbound.js';
import { createMailer } from '../../server/mail.js';
import { createOutbound } from '../../server/worker/outbound.js';
import type {
  Adapter,
  AdapterDeps,
  DestinationTarget,
  OutboundMessage,
  SendOptions,
} from '../../server/worker/types.js';
import { type Behaviour, type Received, startReceiver } from './receiver.js';

export interface AdapterHarness {
  hook: Awaited<ReturnType<typeof startReceiver>>;
  deps: AdapterDeps;
  /** Sends once; `req` is the first request the receiver got from it, `sent` how many it got. */
  send(
    adapter: Adapter,
    dest: DestinationTarget,
    msg: OutboundMessage,
    opts?: SendOptions,
  ): Promise<{ result: Awaited<ReturnType<Adapter>>; req: Received; sent: number }>;
}

/**
 * The set-up of an adapter test file, registered as its beforeAll and afterAll: a loopback receiver
 * answering `first` until a test calls `hook.set`, and the deps an adapter runs with (mail off, and
 * the real guarded outbound client allowed to reach loopback unless the file brings its own).
 * `env` adds settings that depend on the receiver's URL.
 */
export function adapterHarness(
  first: Behaviour,
  opts: { env?: (hookUrl: string) => Record<string, string>; outbound?: Outbound } = {},
): AdapterHarness {
  const h = {
    async send(adapter, dest, msg, sendOpts) {
      const before = h.hook.requests.length;
      const result = await adapter(h.deps, dest, msg, sendOpts);
      return { result, req: h.hook.requests[before], sent: h.hook.requests.length - before };
    },
  } as AdapterHarness;
  beforeAll(async () => {
    h.hook = await startReceiver(first);
    const config = loadConfig({ MAIL_TRANSPORT: 'none', ...opts.env?.(h.hook.url) });
    const outbound = opts.outbound ?? createOutbound({ allowPrivate: true, timeoutMs: 2000 });
    h.deps = { config, mailer: createMailer(config), outbound };
  });
  afterAll(async () => {
    await h.deps.outbound.close();
    await h.hook.close();
  });
  return h;
}

/** A chat destination (Slack or Discord) posting to `url`. */
export const chatDest = (type: 'slack' | 'discord', url: string, config: Record<string, unknown> = {}) => ({
  id: `ds_${type}`,
  type,
  name: type,
  config: { url, ...config },
});

/** A submission.received message: submission sb_123 to the form "Contact us", carrying `data`. */
export function chatMessage(
  data: Record<string, unknown>,
  extra: Partial<OutboundMessage['context']> = {},
  test = false,
): OutboundMessage {
  const submission = { id: 'sb_123', status: 'received', test, received_at: '2026-11-25T10:00:00.000Z' };
  return {
    deliveryId: 'dl_1',
    event: 'submission.received',
    payload: { id: 'dl_1', data },
    context: {
      form: { id: 'fm_1', slug: 'contact', name: 'Contact us', settings: {} },
      submission,
      data,
      meta: { received_at: submission.received_at },
      subject_hint: null,
      ...extra,
    },
  };
}
