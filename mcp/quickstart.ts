import { z } from '../shared/contracts/common.js';
import { Delivery } from '../shared/contracts/deliveries.js';
import { ops } from '../shared/contracts/index.js';
import { SubmitResult } from '../shared/contracts/intake.js';
import { QuickstartBody, QuickstartResult } from '../shared/contracts/quickstart.js';
import type { ToolDef, ToolRun } from './context.js';
import { DRAFT_07, inputSchemaOf, type JsonSchema, outputSchemaOf } from './json-schema.js';
import { errorResult, okResult } from './results.js';

type DeliveryRow = z.output<typeof Delivery>;

/** A delivery that will not change without a retry. */
const SETTLED = new Set(['sent', 'dead', 'skipped']);
const DEFAULT_WAIT_S = 30;
const MAX_WAIT_S = 120;
const POLL_MS = 400;

function inputSchema(): JsonSchema {
  const qs = inputSchemaOf(QuickstartBody);
  const { webhook, name, slack, discord, ...rest } = qs.properties ?? {};
  const hook = webhook?.properties ?? {};
  return {
    $schema: DRAFT_07,
    type: 'object',
    properties: {
      name: { ...name, description: 'form name (default "Contact"); the quickstart is idempotent by (project, name)' },
      ...rest,
      webhook_url: { ...hook.url, description: 'a URL that receives each submission as a signed JSON POST' },
      webhook_secret: {
        ...hook.secret,
        description:
          'signing secret for the webhook (at least 8 characters); default: generated and returned once as webhook_signing',
      },
      slack_url: {
        ...slack?.properties?.url,
        description:
          'a Slack incoming-webhook URL (https://hooks.slack.com/services/…): each submission posts a message',
      },
      discord_url: {
        ...discord?.properties?.url,
        description: 'a Discord webhook URL (https://discord.com/api/webhooks/…): each submission posts a message',
      },
      test_data: {
        type: 'object',
        additionalProperties: true,
        description: 'fields of the test submission (default: an email and a message); _test is added',
      },
      wait_seconds: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_WAIT_S,
        description: `how long to wait for the deliveries to settle (default ${DEFAULT_WAIT_S})`,
      },
    },
    additionalProperties: false,
  };
}

/** What the tool answers: the quickstart's own parts, the test submission and its settled deliveries. */
const VerifyResult = QuickstartResult.pick({
  form: true,
  embed: true,
  destinations: true,
  routes: true,
  webhook_signing: true,
  warnings: true,
}).extend({
  ok: z.boolean().meta({ description: 'true when the test submission was received and every delivery was sent' }),
  settled: z.boolean().meta({ description: 'false when wait_seconds ran out before every delivery settled' }),
  submission: SubmitResult.meta({ description: 'the answer to the _test submission' }),
  deliveries: z.array(Delivery).meta({ description: 'the deliveries of the test submission, as last read' }),
  next: z.array(z.string()).meta({ description: 'what to do now, in words naming the tools' }),
});

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/** Polls each delivery until every one is settled or the wait is over. */
async function settle(ids: string[], waitS: number, run: ToolRun): Promise<{ rows: DeliveryRow[]; settled: boolean }> {
  const rows = new Map<string, DeliveryRow>();
  const end = Date.now() + waitS * 1000;
  for (;;) {
    for (const id of ids) {
      if (SETTLED.has(rows.get(id)?.status ?? '')) continue;
      const r = await run.client.call(ops.deliveries.get, { params: { id }, signal: run.signal });
      if (r.data) rows.set(id, r.data);
    }
    const done = ids.filter((id) => SETTLED.has(rows.get(id)?.status ?? '')).length;
    await run.progress(done, ids.length, `${done}/${ids.length} deliveries settled`);
    if (done === ids.length) return { rows: ids.map((id) => rows.get(id)!), settled: true };
    if (Date.now() >= end || run.signal.aborted) {
      return { rows: ids.map((id) => rows.get(id)).filter((d): d is DeliveryRow => Boolean(d)), settled: false };
    }
    await sleep(POLL_MS, run.signal);
  }
}

/**
 * The compound onboarding tool: quickstart (form, destinations, routes), a `_test` submission,
 * then the deliveries polled until they settle, all through the HTTP API.
 */
export const quickstartAndVerify: ToolDef = {
  name: 'quickstart_and_verify',
  title: 'Quickstart and verify',
  description: [
    'One call from an API key to a form whose delivery is proven: runs quickstart_create (project, form, an email',
    'destination to notify_email or the owner, plus webhook_url / slack_url / discord_url / telegram ones, and their',
    'routes), sends a _test',
    'submission to the form, and waits until every delivery is sent or dead (bounded by wait_seconds).',
    'Use when you have a key (after auth_verify_code) and want a working form for a site.',
    'Answers ok, the form, its deliveries, the embed snippets, next steps and, for a webhook given without a secret,',
    'webhook_signing: the generated secret (shown once) and how a receiver verifies it.',
    'Next: paste embed.html into the site; deliveries_get / deliveries_retry if a delivery is not sent.',
    'When the organization asks a person to approve new destinations (approval in the answer), nothing is sent',
    'until an owner or admin approves them in the dashboard at approval.approve_url: tell the person.',
    '(POST /v1/quickstart, POST /s/{formId}, GET /v1/deliveries/{id}; a manage key.)',
  ].join('\n'),
  scope: 'manage',
  inputSchema: inputSchema(),
  outputSchema: { $schema: DRAFT_07, ...outputSchemaOf(VerifyResult) },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(args, run) {
    const a = args as Record<string, never> & {
      name?: string;
      webhook_url?: string;
      webhook_secret?: string;
      slack_url?: string;
      discord_url?: string;
      test_data?: Record<string, unknown>;
      wait_seconds?: number;
    };
    const { webhook_url, webhook_secret, slack_url, discord_url, test_data, wait_seconds, ...rest } = a;
    const body = {
      ...(rest as z.input<typeof QuickstartBody>),
      name: a.name ?? 'Contact',
      ...(webhook_url ? { webhook: { url: webhook_url, ...(webhook_secret ? { secret: webhook_secret } : {}) } } : {}),
      ...(slack_url ? { slack: { url: slack_url } } : {}),
      ...(discord_url ? { discord: { url: discord_url } } : {}),
    };
    const qs = await run.client.call(ops.quickstart.run, { body, signal: run.signal });
    if (qs.error) return errorResult(qs.error, qs.status, qs.requestId);
    const { form, embed, destinations, routes, webhook_signing, warnings, approval } = qs.data;
    if (approval) {
      // A person must approve first (settings.approve_destinations "keys"): nothing would be sent while we wait.
      return okResult(`Not verified: ${approval.message}`, {
        ok: false,
        settled: false,
        form,
        destinations,
        routes,
        ...(webhook_signing ? { webhook_signing } : {}),
        ...(warnings ? { warnings } : {}),
        approval,
        embed,
        next: [
          `Ask an owner or admin to approve at ${approval.approve_url}; then destinations_get shows approval "approved" and a _test submission is delivered.`,
        ],
      });
    }
    await run.progress(1, undefined, `form ${form.id} ready; sending a _test submission`);

    // A form with allowed origins quarantines a post without Origin: send as the site would.
    const origins = (form.settings.allowed_origins as string[] | undefined) ?? [];
    const sub = await run.client.call(ops.intake.submit, {
      params: { formId: form.id },
      body: { email: 'test@example.com', message: 'Hello from quickstart_and_verify', ...test_data, _test: true },
      headers: origins[0] ? { origin: origins[0] } : {},
      signal: run.signal,
    });
    if (sub.error) return errorResult(sub.error, sub.status, sub.requestId);
    const submission = sub.data;
    const ids = submission.deliveries ?? [];
    const wait = Math.min(Math.max(Number(wait_seconds ?? DEFAULT_WAIT_S) || DEFAULT_WAIT_S, 1), MAX_WAIT_S);
    const { rows, settled } = await settle(ids, wait, run);

    const sent = rows.filter((d) => d.status === 'sent').length;
    const ok = submission.status === 'received' && ids.length > 0 && sent === ids.length;
    const bad = rows.filter((d) => d.status !== 'sent');
    const next = ok
      ? ['Paste embed.html (or embed.fetch / embed.react) into the site.', 'forms_get to see the form and its counts.']
      : [
          ...bad.map((d) =>
            d.status === 'dead'
              ? `deliveries_retry ${d.id} after fixing destination ${d.destination_id} (last_error: ${d.last_error})`
              : `deliveries_get ${d.id} later: it is ${d.status}${d.last_error ? ` (last_error: ${d.last_error})` : ''}`,
          ),
          ...(submission.status !== 'received'
            ? [`The test submission was stored as ${submission.status}: check the form settings.`]
            : []),
        ];
    const signing = webhook_signing
      ? `\nWebhook secret (shown once, keep it): ${webhook_signing.secret}\n${webhook_signing.verify}`
      : '';
    const summary =
      (ok
        ? `Verified: form ${form.id} (${form.name}) delivered its _test submission to ${sent} destination(s).`
        : `Not verified yet: ${sent}/${ids.length} deliveries sent${settled ? '' : ` after ${wait} s`}; see next.`) +
      signing;
    return okResult(summary, {
      ok,
      settled,
      form,
      submission,
      deliveries: rows,
      destinations,
      routes,
      ...(webhook_signing ? { webhook_signing } : {}),
      ...(warnings ? { warnings } : {}),
      embed,
      next,
    });
  },
};
