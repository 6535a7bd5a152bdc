import { REPLAY_STATUSES } from '../../../../shared/contracts/deliveries.js';

/** The log's filters that the page keeps in its query string (empty ones left out). */
export type Filters = { status?: string; destination_id?: string; form_id?: string };

export function filtersOf(source: Record<string, string | undefined>): Filters {
  const pick = (k: string) => (source[k]?.trim() ? source[k]?.trim() : undefined);
  return { status: pick('status'), destination_id: pick('destination_id'), form_id: pick('form_id') };
}

/** The bulk replay's filter for the log's filters, or why there is none. */
export function replayOf(f: Filters): { body: Record<string, unknown> } | { why: string } {
  if (f.status && !(REPLAY_STATUSES as readonly string[]).includes(f.status)) {
    return { why: `Only dead or failed deliveries are retried together; this list shows ${f.status} ones.` };
  }
  if (!f.destination_id && !f.form_id) {
    return { why: 'To retry many at once, first choose a destination or a form above.' };
  }
  return {
    body: {
      status: f.status ? [f.status] : ['dead', 'failed'],
      ...(f.destination_id ? { destination_id: f.destination_id } : {}),
      ...(f.form_id ? { form_id: f.form_id } : {}),
    },
  };
}

export type Replay = ReturnType<typeof replayOf>;
