import { Flags } from '@oclif/core';
import { ops } from '../../shared/contracts/index.js';
import { ApiCommand, interruptSignal, Reported, UsageError } from '../base.js';
import { type DeliveryRow, waitForDeliveries } from '../wait.js';

type Result = {
  form: { id: string; name: string; submit_url: string };
  embed: { html: string };
  verify: { curl: string };
  destinations: Array<{ id: string; type: string; name: string }>;
  webhook_signing?: { secret: string; verify: string };
  warnings?: string[];
  approval?: { destinations: string[]; approve_url: string; message: string };
};

export default class Quickstart extends ApiCommand {
  static summary = 'Create a routed form in one call; --wait sends a test submission and follows its deliveries';
  static description =
    'POST /v1/quickstart: the project (if missing), the form, an email destination (--notify-email, else the ' +
    'owner) and a direct route, plus webhook, Telegram, Slack and Discord ones when given. Idempotent by name. Prints the embed ' +
    'HTML. With --wait it posts a _test submission and waits until every delivery is sent or dead.';
  static examples = [
    'formsvc quickstart --name Contact',
    'formsvc quickstart --name Contact --webhook-url https://example.com/hook --wait',
    'formsvc quickstart --name Leads --notify-email sales@example.com --telegram-bot-token 123:abc --telegram-chat-id 42',
    'formsvc quickstart --name Support --slack-url https://hooks.slack.com/services/T000/B000/XXXX --wait',
  ];
  static aliases = ['quickstart:create'];
  static operationIds = [
    ops.quickstart.run.operationId,
    ops.intake.submit.operationId,
    ops.deliveries.list.operationId,
  ];
  static flags = {
    name: Flags.string({ description: 'form name (the quickstart is idempotent by project and name)', required: true }),
    project: Flags.string({ description: 'project slug (created when missing; default "default")' }),
    origin: Flags.string({ description: "your site's origin, e.g. https://example.com (allowed to post)" }),
    'notify-email': Flags.string({ description: 'where email notifications go (default: the owner)' }),
    'webhook-url': Flags.string({ description: 'also deliver each submission to this URL (signed)' }),
    'webhook-secret': Flags.string({ description: 'signing secret for the webhook (default: generated)' }),
    'telegram-bot-token': Flags.string({ description: 'also deliver to Telegram with this bot token' }),
    'telegram-chat-id': Flags.string({ description: 'the Telegram chat to post to' }),
    'slack-url': Flags.string({ description: 'also post each submission to this Slack incoming-webhook URL' }),
    'discord-url': Flags.string({ description: 'also post each submission to this Discord webhook URL' }),
    wait: Flags.boolean({ description: 'send a _test submission and wait until its deliveries are sent or dead' }),
    timeout: Flags.custom<number>({
      description: 'seconds --wait waits at most (default 120)',
      parse: async (v) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n <= 0) throw new Error(`expects a positive number of seconds, got "${v}"`);
        return n;
      },
    })(),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Quickstart);
    await this.setup(flags, { needKey: true });
    const bot = flags['telegram-bot-token'];
    const chat = flags['telegram-chat-id'];
    if (Boolean(bot) !== Boolean(chat))
      throw new UsageError('give --telegram-bot-token and --telegram-chat-id together');
    if (flags['webhook-secret'] && !flags['webhook-url']) throw new UsageError('--webhook-secret needs --webhook-url');
    const body = {
      name: flags.name,
      project: flags.project,
      origin: flags.origin,
      notify_email: flags['notify-email'],
      webhook: flags['webhook-url'] ? { url: flags['webhook-url'], secret: flags['webhook-secret'] } : undefined,
      telegram: bot && chat ? { bot_token: bot, chat_id: chat } : undefined,
      slack: flags['slack-url'] ? { url: flags['slack-url'] } : undefined,
      discord: flags['discord-url'] ? { url: flags['discord-url'] } : undefined,
    };
    const res = await this.client.call(ops.quickstart.run, { body });
    if (res.error) this.failWith(res);
    const q = res.data as unknown as Result;
    const routed = q.destinations.map((d) => `${d.type} ${d.name}`).join(', ') || 'nothing yet';
    const summary = [
      `Form "${q.form.name}" (${q.form.id}) ${res.status === 201 ? 'is ready' : 'existed already'}.`,
      `Submit URL: ${q.form.submit_url}`,
      `Routed to: ${routed}`,
      ...(q.webhook_signing
        ? [`Webhook secret (shown once, keep it): ${q.webhook_signing.secret}`, `  ${q.webhook_signing.verify}`]
        : []),
      ...(q.warnings ?? []).map((w) => `Warning: ${w}`),
      ...(q.approval ? [`Waiting for approval: ${q.approval.message}`] : []),
      '',
      'Embed this HTML:',
      q.embed.html,
    ].join('\n');
    if (!flags.wait) {
      this.out(q, `${summary}\n\nTry it: ${q.verify.curl}`);
      return;
    }
    if (!this.jsonOut) process.stdout.write(`${summary}\n\n`);
    if (q.approval) {
      // Nothing is attempted before a person approves: waiting would only run out the timeout.
      const line = `Not waiting: the test delivery cannot be sent until a person approves at ${q.approval.approve_url}.`;
      if (this.jsonOut)
        process.stdout.write(
          `${JSON.stringify({ ...q, test: { ok: false, end: 'approval_pending', message: line } }, null, 2)}\n`,
        );
      process.stderr.write(`✖ ${line}\n`);
      throw new Reported(1);
    }
    const test = await this.testDelivery(q, flags.origin, (flags.timeout ?? 120) * 1000);
    if (this.jsonOut) process.stdout.write(`${JSON.stringify({ ...q, test }, null, 2)}\n`);
    if (!test.ok) throw new Reported(test.end === 'interrupted' ? 130 : 1);
  }

  /** Posts a _test submission and follows its deliveries; prints the final line. */
  private async testDelivery(q: Result, origin: string | undefined, timeoutMs: number) {
    const sub = await this.client.call(ops.intake.submit, {
      params: { formId: q.form.id },
      body: { message: 'Hello from formsvc quickstart --wait', _test: true },
      headers: origin ? { origin } : {},
    });
    if (sub.error) this.failWith(sub);
    const submission = sub.data as { submission_id: string; status: string };
    const label = (r: DeliveryRow) => {
      const d = q.destinations.find((x) => x.id === r.destination_id);
      return d ? `${d.type} ${d.name}` : r.destination_id;
    };
    const describe = (rows: DeliveryRow[]) =>
      rows.map((r) => `${label(r)}: ${r.status}${r.attempts > 1 ? ` (attempt ${r.attempts})` : ''}`).join(', ');

    // A spinner only on a real terminal with a width (a 0-column pty would make ora redraw forever).
    const columns = process.stderr.isTTY ? (process.stderr.columns ?? 0) : 0;
    const spinner = !this.jsonOut && columns > 20 ? (await import('ora')).default : null;
    const spin = spinner?.({ text: 'Waiting for deliveries…', stream: process.stderr }).start();
    const clip = (text: string) => (text.length > columns - 4 ? `${text.slice(0, columns - 5)}…` : text);
    const interrupt = interruptSignal();
    let outcome: Awaited<ReturnType<typeof waitForDeliveries>>;
    try {
      outcome = await waitForDeliveries(this.client, submission.submission_id, {
        signal: interrupt.signal,
        timeoutMs,
        onChange: (rows) => {
          const text = `Waiting for deliveries… ${describe(rows)}`;
          if (spin) spin.text = clip(text);
          else this.note(text);
        },
      });
    } finally {
      interrupt.dispose();
      spin?.stop();
    }
    if ('error' in outcome) this.failWith({ error: outcome.error, requestId: null });
    const rows = outcome.deliveries;
    const sent = rows.filter((r) => r.status === 'sent');
    const dead = rows.filter((r) => r.status === 'dead');
    const ok = outcome.end === 'done' && dead.length === 0 && submission.status === 'received';
    const follow = `formsvc deliveries tail --form ${q.form.id}`;
    let line: string;
    if (outcome.end === 'interrupted') {
      line = `Interrupted. The test submission ${submission.submission_id} is stored and its deliveries go on; follow them with: ${follow}`;
    } else if (submission.status !== 'received') {
      line = `The test submission was stored as ${submission.status}, so nothing was delivered. Check the form's settings.`;
    } else if (outcome.end === 'timeout') {
      line = `Not finished after ${Math.round(timeoutMs / 1000)} s: ${describe(rows)}. Follow with: ${follow}`;
    } else if (dead.length) {
      const why = dead.map((r) => `${label(r)}${r.last_error ? ` (${r.last_error})` : ''}`).join('; ');
      line = `${dead.length} of ${rows.length} deliveries failed for good: ${why}. Fix the destination, then: formsvc deliveries retry <id>`;
    } else if (rows.length === 0) {
      line = 'The test submission was stored, but no route delivers it.';
    } else {
      line = `✔ Test submission delivered: ${describe(rows)} (${sent.length}/${rows.length} sent).`;
    }
    process.stderr.write(`${ok ? '' : '✖ '}${line}\n`);
    return { ok, end: outcome.end, submission_id: submission.submission_id, deliveries: rows, message: line };
  }
}
