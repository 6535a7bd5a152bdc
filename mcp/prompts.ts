import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { McpContext } from './context.js';
import { completeFormId, completeSubmissionId } from './resources.js';

/** A prompt's answer: one user message holding the workflow. */
function workflow(description: string, lines: string[]): GetPromptResult {
  return { description, messages: [{ role: 'user', content: { type: 'text', text: lines.join('\n') } }] };
}

/** Ids and free text are quoted as JSON strings, so a value cannot break out of its line. */
const q = (v: string) => JSON.stringify(v);

/**
 * The prompts: short workflows over the tools, each naming the exact tools to call in order. Id
 * arguments complete from the API with the connection's key (forms of the organization, its
 * recent submissions).
 */
export function registerPrompts(server: McpServer, ctx: McpContext): void {
  const formId = () =>
    completable(
      z.string().min(1).describe('the form id (fm_…); completes from the organization’s forms, by id or name'),
      (value) => completeFormId(ctx, value ?? ''),
    );

  server.registerPrompt(
    'set_up_form',
    {
      title: 'Set up a form',
      description: 'From a goal in words to a routed form whose test submission is proven delivered',
      argsSchema: {
        goal: z.string().min(1).describe('what the form is for, in words (e.g. "a contact form for our landing page")'),
        notify_email: z
          .string()
          .optional()
          .describe('an address to mail each submission to (default: the account owner)'),
        webhook_url: z.string().optional().describe('a URL that should receive each submission as a signed JSON POST'),
        origin: z
          .string()
          .optional()
          .describe('the website origin that will post to the form (e.g. https://www.example.com)'),
      },
    },
    ({ goal, notify_email, webhook_url, origin }) =>
      workflow('Set up a routed form and verify a test delivery', [
        `Set up a formsvc form for this goal: ${q(goal)}.`,
        '',
        '1. Pick a short form name and the fields the goal needs (e.g. email, message).',
        `2. Call quickstart_and_verify with {name${notify_email ? `, notify_email: ${q(notify_email)}` : ''}${
          webhook_url ? `, webhook_url: ${q(webhook_url)}` : ''
        }${origin ? `, origin: ${q(origin)}` : ''}, test_data: {the fields with sample values}}. It creates the form, its destinations and routes, posts a _test submission and waits until every delivery is sent or dead.`,
        '3. If its answer has ok: true, the form works. If not, read each delivery’s last_error: fix the destination with destinations_update, then deliveries_retry the delivery, and check it with deliveries_get until it is sent.',
        '4. If the goal names required fields, publish them as the form’s schema with schemas_publish {id: <form id>, …} so bad posts are refused.',
        '5. Answer with the form id, its submit URL, the embed HTML from the answer, and which destinations were proven (delivery ids and statuses). Mention any webhook secret shown once.',
      ]),
  );

  server.registerPrompt(
    'triage_spam',
    {
      title: 'Triage spam',
      description: 'Review a form’s quarantined and spam submissions, propose marks, apply only the accepted ones',
      argsSchema: { form_id: formId() },
    },
    ({ form_id }) =>
      workflow('Review quarantined and spam submissions with the person, then apply the accepted marks', [
        `Triage the held and spam submissions of form ${q(form_id)} (resource formsvc://forms/${form_id}/submissions).`,
        '',
        `1. Call forms_submissions {id: ${q(form_id)}, status: "quarantined"} and forms_submissions {id: ${q(form_id)}, status: "spam"} (follow next_cursor for more pages).`,
        '2. For each submission, read its spam verdict (spam.score, spam.reasons) and quarantine_reason; submissions_get gives the details. spam_get shows how the organization’s spam filter is set.',
        '3. Propose one mark per submission in a short table: "spam" (keep it out) or "received" (not spam; releases a quarantined one), with the reason in a few words.',
        '4. Ask the person which proposals they accept. Do not change anything before they answer; apply only the ones they accept.',
        '5. For each accepted mark call submissions_update {id: <submission id>, status: "spam" | "received"}. Marking plans no deliveries: for a released submission that should still be delivered, list its deliveries with deliveries_list {submission_id} and call deliveries_retry on each.',
        '6. Report what was marked, what was left as it was, and any errors with their hint.',
      ]),
  );

  server.registerPrompt(
    'why_no_delivery',
    {
      title: 'Why was this not delivered?',
      description: 'A submission id → the causal chain from submissions_explain, answered in plain words',
      argsSchema: {
        submission_id: completable(
          z.string().min(1).describe('the submission id (sb_…); completes from the organization’s recent submissions'),
          (value) => completeSubmissionId(ctx, value ?? ''),
        ),
      },
    },
    ({ submission_id }) =>
      workflow('Explain why a submission was or was not delivered', [
        `Find out why submission ${q(submission_id)} was or was not delivered (resource formsvc://submissions/${submission_id}).`,
        '',
        `1. Call submissions_explain {id: ${q(submission_id)}}. It returns what is stored: each intake check with its verdict, each route considered and why it planned a delivery or not, each delivery with its attempts, and a one-line summary.`,
        '2. Answer from it: start with its summary, then the first step in the chain that stopped the delivery (a check, a route, a destination, an attempt) with its stored reason.',
        '3. Say what fixes it, from the explanation’s own hint (e.g. enable the destination with destinations_update, then deliveries_retry). Change nothing unless the person asks.',
        '4. Do not guess beyond the explanation; if submissions_explain is not in this server’s tools, read submissions_get (its deliveries) and deliveries_get for each delivery instead and say so.',
      ]),
  );

  server.registerPrompt(
    'schema_from_traffic',
    {
      title: 'Schema from traffic',
      description: 'Infer a schema from a form’s real submissions and propose it as a version, with its drift',
      argsSchema: { form_id: formId() },
    },
    ({ form_id }) =>
      workflow('Propose a schema version from real submissions, with the drift it closes', [
        `Propose a schema for form ${q(form_id)} from its real submissions (resources formsvc://forms/${form_id} and formsvc://forms/${form_id}/drift).`,
        '',
        `1. Call schemas_get {id: ${q(form_id)}} (404 means no schema is published yet) and drift_list {id: ${q(form_id)}} for the open drift.`,
        `2. Call schemas_infer {id: ${q(form_id)}}: a draft built from recent received submissions. Nothing is published by it.`,
        '3. Show the person the proposed version: each field with its type and whether it is required, what changes against the current version, and which open drift events it would close (new_field, missing_field, type_change).',
        '4. Only when the person agrees, call schemas_publish {id: <form id>, json_schema, ui, inferred: true} with the draft (edited as agreed) and confirm with drift_list that the drift it answers is closed.',
      ]),
  );
}
