import type { Adapter } from '../types.js';

/**
 * Slack and Discord destinations are accepted by the API but have no adapter yet: their deliveries
 * fail at once, without retries, saying so, instead of pretending to have been sent.
 */
export const unavailableAdapter: Adapter = async (_deps, dest) => ({
  ok: false,
  status_code: null,
  latency_ms: 0,
  response_excerpt: '',
  error: `the ${dest.type} adapter is not available yet; use a webhook destination (config.url) or email meanwhile`,
  retryable: false,
});
