import { Args, Flags } from '@oclif/core';
import { REPLAY_STATUSES } from '../../shared/contracts/deliveries.js';
import { ops } from '../../shared/contracts/index.js';
import { ApiCommand, UsageError } from '../base.js';

/**
 * `formsvc deliveries retry <dl_…>` retries one delivery; without an id the filter flags replay many
 * at once (`--status dead --destination ds_…`). One command for both, so the name the issue and
 * the docs use works either way; `deliveries retry all` (the bulk operation's generated name) is
 * an alias.
 */
export default class DeliveriesRetry extends ApiCommand {
  static summary = 'Send deliveries again: one by id, or every one matching --destination, --route, --form or --since';
  static description =
    'With an id: POST /v1/deliveries/{id}/retry (a dead, failed or sent delivery becomes pending with a fresh attempt ' +
    'budget). Without: POST /v1/deliveries/retry with the filter flags (status default dead; at least one of ' +
    '--destination, --route, --form or --since), answering {matched, queued}.';
  static examples = [
    'formsvc deliveries retry <dl_…>',
    'formsvc deliveries retry --status dead --destination <ds_…>',
    'formsvc deliveries retry --status dead --status failed --form <fm_…> --since 2026-01-01T00:00:00Z --json',
  ];
  static aliases = ['deliveries:retry:all'];
  static operationIds = [ops.deliveries.retry.operationId, ops.deliveries.retryAll.operationId];
  static args = { id: Args.string({ description: 'one delivery to retry (dl_…); leave out to use the filter flags' }) };
  static flags = {
    status: Flags.option({
      description: 'statuses to queue again (repeatable; default dead)',
      options: REPLAY_STATUSES,
      multiple: true,
    })(),
    destination: Flags.string({ description: 'only deliveries to this destination (ds_…)' }),
    route: Flags.string({ description: 'only deliveries of this route (rt_…)' }),
    form: Flags.string({ description: 'only deliveries of this form (fm_…)' }),
    since: Flags.string({ description: 'only deliveries created at or after this ISO 8601 time' }),
    until: Flags.string({ description: 'only deliveries created before this ISO 8601 time' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(DeliveriesRetry);
    const filter = {
      status: flags.status,
      destination_id: flags.destination,
      route_id: flags.route,
      form_id: flags.form,
      since: flags.since,
      until: flags.until,
    };
    const given = Object.entries(filter).filter(([, v]) => v !== undefined);
    if (args.id && given.length) {
      throw new UsageError('give a delivery id or filter flags, not both (formsvc deliveries retry --help)');
    }
    await this.setup(flags, { needKey: true });
    if (args.id) {
      const d = (await this.call(ops.deliveries.retry, { params: { id: args.id } })) as { id: string; status: string };
      this.out(d, `${d.id}: ${d.status} again (fresh attempt budget); follow it with formsvc deliveries get ${d.id}`);
      return;
    }
    const r = (await this.call(ops.deliveries.retryAll, { body: Object.fromEntries(given) })) as {
      matched: number;
      queued: number;
    };
    this.out(r, `${r.queued} of ${r.matched} matching deliveries queued again`);
  }
}
