/** The spec's cap on one backoff step: six hours. */
export const MAX_BACKOFF_MS = 6 * 60 * 60 * 1000;

/**
 * Delay before the next attempt after `attempts` attempts: min(2^attempts × base, 6 h) with ±20 %
 * jitter. A Retry-After the destination asked for is honoured when it is longer, within the same cap.
 */
export function backoffMs(attempts: number, baseMs: number, retryAfterMs = 0, random: () => number = Math.random) {
  const step = Math.min(2 ** attempts * baseMs, MAX_BACKOFF_MS);
  const jittered = step * (0.8 + 0.4 * random());
  return Math.round(Math.min(Math.max(jittered, retryAfterMs), MAX_BACKOFF_MS));
}
