import type { FC } from 'hono/jsx';
import type { DeliveryResultOut as DeliveryResult } from '../../../present/deliveries.js';
import type { presentDestination } from '../../../present/destinations.js';
import { Badge } from '../../render.js';

export type Dest = ReturnType<typeof presentDestination>;

/** Health, verified and enabled as badges (with why it is disabled). */
export const DestinationFlags: FC<{ d: Dest }> = ({ d }) => (
  <>
    <Badge value={d.health === 'ok' ? 'healthy' : d.health} />{' '}
    {d.verified ? <Badge value="verified" /> : <span class="muted">not verified</span>}{' '}
    {d.enabled ? <Badge value="enabled" /> : <Badge value="disabled" />}
    {!d.enabled && d.disabled_reason ? <span class="muted">{` (${d.disabled_reason})`}</span> : null}
  </>
);

/** A stored config as read through the API (secrets already redacted), one line per key. */
export function configLines(config: Record<string, unknown>) {
  return Object.entries(config).map(([k, v]) => {
    let text: string;
    if (Array.isArray(v)) text = v.map(String).join(', ');
    else if (v && typeof v === 'object')
      text = Object.entries(v as Record<string, unknown>)
        .map(([n, x]) => `${n}: ${String(x)}`)
        .join('\n');
    else text = String(v);
    return { key: k, text };
  });
}

/** What a test send (or an attempt) answered. */
export const ResultBox: FC<{ r: DeliveryResult; title: string }> = ({ r, title }) => (
  <section class={r.ok ? 'card notice-card' : 'card'} aria-labelledby="test-result-title">
    <h2 id="test-result-title">{title}</h2>
    <p role="status">
      {r.ok ? <Badge value="sent" /> : <Badge value="failed" />}{' '}
      {r.status_code !== null ? `HTTP ${r.status_code}` : 'no HTTP answer'} in {Math.round(r.latency_ms)} ms
    </p>
    {r.error ? <p class="field-error">{r.error}</p> : null}
    {r.response_excerpt ? <pre tabindex={0}>{r.response_excerpt}</pre> : null}
  </section>
);
