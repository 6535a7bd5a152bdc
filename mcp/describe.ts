import type { Operation } from '../shared/contracts/common.js';

/** When to call a tool and which tools usually come next. `then` names tools (checked by test/mcp). */
export interface Guidance {
  when?: string;
  then: string[];
  note?: string;
}

/** Hand-written guidance for the tools an agent meets first; the rest follow the verb rules below. */
export const GUIDANCE: Record<string, Guidance> = {
  auth_providers: { when: 'to see how people can sign in to this server', then: ['auth_request_code'] },
  auth_request_code: {
    when: 'there is no API key yet: it emails a 6-digit code to the person',
    then: ['auth_verify_code'],
    note: 'ask the person for the code from that mail',
  },
  auth_verify_code: {
    when: 'the person gave you the emailed code: it returns an API key (shown once)',
    then: ['quickstart_and_verify', 'me_get'],
    note: 'over stdio the MCP session switches to the new key at once',
  },
  me_get: {
    when: 'to check the organization, plan, key scopes, limits and usage',
    then: ['forms_list', 'quickstart_and_verify'],
  },
  quickstart_create: {
    when: 'to get a routed form in one call (email, webhook or Telegram destinations)',
    then: ['intake_submit', 'deliveries_get'],
    note: 'send a _test submission and poll its deliveries; quickstart_and_verify does all three',
  },
  forms_create: {
    then: ['destinations_create', 'routes_create', 'intake_submit'],
    note: 'or quickstart_and_verify for form, destination and route at once',
  },
  forms_embed: { when: 'to get HTML, fetch, React, Astro or Next.js snippets for a site', then: ['intake_submit'] },
  destinations_create: { then: ['destinations_test', 'routes_create'] },
  destinations_test: {
    when: 'to prove a destination works with a sample message (marks it verified)',
    then: ['routes_create'],
  },
  routes_create: {
    when: 'to connect a form or stream to a destination (match: a JSON condition, e.g. {"data.topic": "sales"})',
    then: ['intake_submit', 'deliveries_list'],
    note: 'send a _test submission, then list deliveries by submission_id (skip_reason "match": the condition did not match)',
  },
  intake_submit: {
    when: 'to send a submission as a website would: the form fields go next to formId; _test: true marks a test',
    then: ['deliveries_get'],
    note: 'poll each id in deliveries until sent or dead',
  },
  submissions_get: { then: ['submissions_explain', 'deliveries_list', 'submissions_update'] },
  submissions_explain: {
    when: 'to know why a submission was or was not delivered: intake checks, routes, every attempt, one-line summary',
    then: ['deliveries_retry', 'destinations_update', 'submissions_update'],
    note: 'read its summary first; it names the call that moves the submission on (retry, enable the destination)',
  },
  deliveries_list: { then: ['deliveries_get', 'deliveries_retry'] },
  deliveries_get: {
    when: 'to follow one delivery until it is sent or dead',
    then: ['submissions_explain', 'deliveries_retry', 'destinations_test'],
    note: 'retry a dead one after fixing its destination; submissions_explain says why one was not sent',
  },
  schemas_infer: { when: 'to draft a schema from the submissions received so far', then: ['schemas_publish'] },
  drift_list: { then: ['schemas_publish', 'drift_dismiss'] },
  streams_create: { then: ['routes_create', 'streams_preview'] },
  sandboxes_create: {
    when: 'without any account, to try a form for 24 hours (5 test submissions, nothing delivered)',
    then: ['intake_submit', 'sandboxes_read', 'sandboxes_claim'],
    note: 'keep the sandbox_token: reading and claiming need it',
  },
  sandboxes_read: { when: 'to see what a sandbox received', then: ['sandboxes_claim'] },
  sandboxes_claim: {
    when: 'to keep a sandbox: moves its form into the key’s organization',
    then: ['destinations_create', 'routes_create'],
  },
  webhooks_create: { then: ['webhooks_deliveries', 'events_list'] },
  events_list: { when: 'to see what happened in the organization (deliveries, drift, schema changes)', then: [] },
  plan_grants_create: { when: 'only as a platform operator (ADMIN_EMAILS)', then: ['plan_grants_list'] },
  admin_growth_get: { when: 'only as a platform operator (ADMIN_EMAILS)', then: ['plan_grants_list'] },
  invitations_create: {
    then: ['invitations_list'],
    note: 'the invited person accepts in the dashboard, signed in as the invited address',
  },
  invitations_get: {
    when: 'to see what an invitation offers',
    then: [],
    note: 'accepting needs the invited person’s dashboard session',
  },
  api_keys_get: { then: ['api_keys_revoke'] },
  forms_submissions: { when: 'to read what one form received', then: ['submissions_get'] },
  submissions_attachment: {
    when: 'to fetch a file a submission carried (its fl_ id is in submissions_get)',
    then: ['submissions_get'],
    note: 'the bytes come back as an embedded resource',
  },
  forms_export: {
    when: 'someone wants a form’s data in a spreadsheet or a warehouse',
    then: ['submissions_get'],
    note: 'the tool returns the first rows and the command that downloads the whole file; run that, do not page it here',
  },
  submissions_erase: {
    when: 'a person asks to have everything about them deleted: run it with dry_run first',
    then: ['events_list'],
    note: 'submissions_list with email shows what would go',
  },
  deliveries_retry: { when: 'a delivery is dead or failed and its destination is fixed', then: ['deliveries_get'] },
  deliveries_retry_all: {
    when: 'many deliveries died while a destination was broken and it is fixed (filter by destination, route, form or since)',
    then: ['deliveries_list'],
  },
  webhooks_deliveries: { when: 'to see whether a system webhook got its events', then: ['webhooks_update'] },
  webhooks_deliveries_retry: {
    when: "a system webhook's events died while it was down and it is back",
    then: ['webhooks_deliveries'],
  },
  schemas_get: { then: ['schemas_publish', 'forms_embed'] },
  schemas_publish: { when: 'to set or change the fields a form expects', then: ['forms_embed', 'drift_list'] },
  schemas_versions: { when: 'to see how a form’s schema changed over time', then: ['schemas_get'] },
  drift_dismiss: { when: 'a drifted field is expected and should stay quiet', then: ['drift_list'] },
  streams_schema_get: { then: ['streams_schema_publish'] },
  streams_schema_publish: { when: 'to change the output schema of a stream', then: ['streams_sources_list'] },
  streams_sources_attach: {
    when: 'to feed a stream from more forms',
    then: ['streams_preview', 'streams_sources_list'],
  },
  streams_preview: { when: 'to check the mappings on real submissions before routing', then: ['routes_create'] },
  plan_redeem: { when: 'someone gave you a plan grant code', then: ['me_get'] },
  organizations_create: { then: ['organizations_list'] },
  organizations_update: { then: ['organizations_list'] },
  spam_get: {
    when: 'to see what the spam filter learned from marks and the organization’s block/allow lists',
    then: ['submissions_update', 'spam_forget'],
  },
  spam_forget: { when: 'the filter learned from wrong marks and should start over', then: ['spam_get'] },
};

/** Generic guidance by verb (the last part of the operationId), pointing only at tools that exist. */
function byVerb(o: Operation, isTool: (id: string) => boolean): Guidance {
  const parts = o.operationId.split('_');
  const verb = parts.pop() ?? '';
  const resource = parts.join('_');
  const tool = (v: string) => (isTool(`${resource}_${v}`) ? [`${resource}_${v}`] : []);
  const [get, list, update] = [tool('get'), tool('list'), tool('update')];
  switch (verb) {
    case 'list':
      return { when: 'to find ids or browse, newest first', then: get, note: 'pass next_cursor as cursor for more' };
    case 'get':
      return { when: 'you have an id and need the whole record', then: update };
    case 'create':
      return { when: 'to add a new one', then: get };
    case 'update':
      return { when: 'to change an existing one: send only the fields that change', then: get };
    case 'delete':
    case 'revoke':
    case 'remove':
    case 'detach':
      return { when: 'to remove it for good', then: list };
    default:
      return { then: get };
  }
}

const SCOPE_TEXT: Record<string, string> = {
  public: 'no API key needed',
  submit: 'any API key',
  read: 'a read or manage key',
  manage: 'a manage key',
  session: 'a dashboard session',
};

/** A tool description: the contract's summary, when to use it, what comes next, and what it calls. */
export function describe(o: Operation, isTool: (id: string) => boolean): string {
  const g = { ...byVerb(o, isTool), ...GUIDANCE[o.operationId] };
  const summary = (o.summary ?? o.operationId).replace(/\.?$/, '.');
  const lines = [summary];
  if (g.when) lines.push(`Use when ${g.when.replace(/^to /, 'you want to ')}.`);
  const next = [g.then.length ? g.then.join(', ') : '', g.note ?? ''].filter(Boolean).join(' — ');
  if (next) lines.push(`Next: ${next}.`);
  lines.push(`(${o.method.toUpperCase()} ${o.path}; ${SCOPE_TEXT[o['x-scope']]}.)`);
  return lines.join('\n');
}
