import { Flags } from '@oclif/core';
import { DELIVERY_STATUSES } from '../../shared/contracts/deliveries.js';
import { ops } from '../../shared/contracts/index.js';
import { ApiCommand, interruptSignal, pause } from '../base.js';
import type { DeliveryRow } from '../wait.js';

type Row = DeliveryRow & { submission_id: string | null; created_at: string; next_attempt_at: string | null };

export default class DeliveriesTail extends ApiCommand {
  static summary = 'Follow deliveries: print each one when first seen and whenever its status changes';
  static description =
    'Polls GET /v1/deliveries (newest page) with a backoff that resets on change; stop with Ctrl-C. ' +
    'With JSON output each change is one JSON object per line.';
  static examples = [
    'formsvc deliveries tail',
    'formsvc deliveries tail --form <fm_…>',
    'formsvc deliveries tail --status dead --json',
  ];
  static operationIds = [ops.deliveries.list.operationId];
  static flags = {
    form: Flags.string({ description: 'only deliveries of this form (fm_…)' }),
    status: Flags.option({ description: 'only deliveries with this status', options: DELIVERY_STATUSES })(),
    interval: Flags.custom<number>({
      description: 'seconds between polls at first (default 1; grows to 15 while nothing changes)',
      parse: async (v) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n <= 0) throw new Error(`expects a positive number of seconds, got "${v}"`);
        return n;
      },
    })(),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(DeliveriesTail);
    await this.setup(flags, { needKey: true });
    const seen = new Map<string, string>();
    const base = (flags.interval ?? 1) * 1000;
    let delay = base;
    const interrupt = interruptSignal();
    process.stderr.write(`Following deliveries on ${this.cfg.baseUrl} (Ctrl-C to stop)…\n`);
    try {
      while (!interrupt.signal.aborted) {
        const res = await this.client
          .call(ops.deliveries.list, {
            query: { form_id: flags.form, status: flags.status, limit: 50 },
            signal: interrupt.signal,
          })
          .catch(() => null);
        if (!res) break; // interrupted mid-request
        if (res.error) {
          if (res.error.code !== 'network_error' && res.error.code !== 'bad_response') this.failWith(res);
          process.stderr.write(`(${res.error.message} Retrying…)\n`);
          delay = Math.min(delay * 2, 30_000);
        } else {
          let changed = false;
          for (const d of (res.data.data as Row[]).slice().reverse()) {
            const state = `${d.status}:${d.attempts}`;
            if (seen.get(d.id) === state) continue;
            seen.set(d.id, state);
            changed = true;
            this.print(d);
          }
          delay = changed ? base : Math.min(delay * 1.5, 15_000);
        }
        await pause(delay, interrupt.signal);
      }
    } finally {
      interrupt.dispose();
    }
    process.stderr.write(`Stopped (${seen.size} deliveries seen).\n`);
  }

  private print(d: Row) {
    if (this.jsonOut) {
      process.stdout.write(`${JSON.stringify(d)}\n`);
      return;
    }
    const extra = [
      d.attempts ? `attempt ${d.attempts}` : '',
      d.status === 'failed' && d.next_attempt_at ? `next ${d.next_attempt_at}` : '',
      d.skip_reason ?? '',
      d.status !== 'sent' && d.last_error ? d.last_error : '',
    ].filter(Boolean);
    const time = new Date().toISOString().slice(11, 19);
    process.stdout.write(
      `${time}  ${d.id}  ${d.status.padEnd(8)} ${d.destination_id}  ${d.submission_id ?? 'digest'}` +
        `${extra.length ? `  (${extra.join(', ')})` : ''}\n`,
    );
  }
}
