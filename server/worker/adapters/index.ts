import type { Adapter } from '../types.js';
import { emailAdapter } from './email.js';
import { telegramAdapter } from './telegram.js';
import { unavailableAdapter } from './unavailable.js';
import { webhookAdapter } from './webhook.js';

/** The adapter of each destination type. */
export const ADAPTERS: Record<string, Adapter> = {
  email: emailAdapter,
  telegram: telegramAdapter,
  webhook: webhookAdapter,
  slack: unavailableAdapter,
  discord: unavailableAdapter,
};

const unknownAdapter: Adapter = async (_deps, dest) => ({
  ok: false,
  status_code: null,
  latency_ms: 0,
  response_excerpt: '',
  error: `unknown destination type "${dest.type}"; use email, telegram or webhook`,
  retryable: false,
});

/** The adapter for a destination type; an unknown type gets one that fails without retrying. */
export function adapterFor(type: string): Adapter {
  return Object.hasOwn(ADAPTERS, type) ? ADAPTERS[type] : unknownAdapter;
}
