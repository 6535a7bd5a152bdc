/**
 * Follows the deliveries of one submission until each is final (sent, dead or skipped), the time
 * runs out, or the user interrupts. Polls GET /v1/deliveries?submission_id=… with a growing interval.
 */
import type { Client } from '../shared/client.js';
import { ops } from '../shared/contracts/index.js';
import { pause } from './base.js';

export type DeliveryRow = {
  id: string;
  status: string;
  destination_id: string;
  attempts: number;
  last_error: string | null;
  skip_reason?: string | null;
};

export const FINAL = new Set(['sent', 'dead', 'skipped']);

export type WaitOutcome = {
  end: 'done' | 'timeout' | 'interrupted';
  deliveries: DeliveryRow[];
};

export async function waitForDeliveries(
  client: Client,
  submissionId: string,
  opts: { signal: AbortSignal; timeoutMs: number; onChange: (rows: DeliveryRow[]) => void },
): Promise<WaitOutcome | { error: NonNullable<Awaited<ReturnType<Client['call']>>['error']> }> {
  const deadline = Date.now() + opts.timeoutMs;
  let delay = 300;
  let last = '';
  let rows: DeliveryRow[] = [];
  for (;;) {
    if (opts.signal.aborted) return { end: 'interrupted', deliveries: rows };
    const res = await client
      .call(ops.deliveries.list, {
        query: { submission_id: submissionId, limit: 200 },
        signal: opts.signal,
      })
      .catch((err) => {
        if (opts.signal.aborted) return null;
        throw err;
      });
    if (!res) return { end: 'interrupted', deliveries: rows };
    if (res.error) return { error: res.error };
    rows = res.data.data as DeliveryRow[];
    const key = rows.map((r) => `${r.id}:${r.status}:${r.attempts}`).join(',');
    if (key !== last) {
      last = key;
      delay = 300;
      opts.onChange(rows);
    }
    if (rows.every((r) => FINAL.has(r.status))) return { end: 'done', deliveries: rows };
    if (Date.now() >= deadline) return { end: 'timeout', deliveries: rows };
    await pause(Math.min(delay, Math.max(0, deadline - Date.now())), opts.signal);
    delay = Math.min(delay * 1.5, 3000);
  }
}
