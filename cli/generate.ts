/**
 * One oclif command per registry operation, built at load time: nothing here names a path or a
 * field. Naming rule: the operationId with every `_` read as a space (`forms_create` → `forms
 * create`, `streams_sources_attach` → `streams sources attach`, `api_keys_list` → `api keys list`).
 * Path params are positional args (in path order), query params are flags, a JSON body comes from
 * `--data` plus one typed flag per top-level scalar body field; typed flags win over `--data`.
 */
import { Args, Flags, type Interfaces } from '@oclif/core';
import type { Operation } from '../shared/contracts/common.js';
import { ID_PREFIX, type IdKind } from '../shared/ids.js';
import { ApiCommand, readData, UsageError } from './base.js';
import { exampleValue, type FieldSpec, flagFor, RESERVED_FLAGS, scalarFields } from './schema-flags.js';

/** Operations that get no command, and why (the drift test accepts only these). */
export const NOT_IN_CLI: Record<string, string> = {
  auth_sign_in: 'sets a browser session cookie; the CLI signs in with `formsvc login`',
  auth_sign_out: 'ends a browser session cookie',
  api_keys_create: 'needs a dashboard session cookie; `formsvc login` mints a key',
  billing_webhook: "called by the billing provider with the provider's signature",
  destinations_approve: 'a person approves in the dashboard (owner or admin session); keys get 403',
  destinations_reject: 'a person rejects in the dashboard (owner or admin session); keys get 403',
};

/** The oclif id of an operation's command (`forms:create`; typed as `forms create`). */
export const commandId = (operationId: string) => operationId.split('_').join(':');

/** The command as typed: `formsvc forms create`. */
export const commandName = (operationId: string) => operationId.split('_').join(' ');

const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);

/** What a path parameter names, by the collection it follows (`/v1/forms/{id}` is a form). */
const PARAM_KIND: Record<string, IdKind> = {
  'api-keys': 'apiKey',
  projects: 'project',
  forms: 'form',
  s: 'form',
  destinations: 'destination',
  routes: 'route',
  submissions: 'submission',
  attachments: 'file',
  deliveries: 'delivery',
  webhooks: 'webhook',
  drift: 'drift',
  streams: 'stream',
  sources: 'streamSource',
  'plan-grants': 'planGrant',
  sandboxes: 'sandbox',
  claim: 'sandbox',
  organizations: 'organization',
  members: 'membership',
  invitations: 'invitation',
};

/** A path parameter as help shows it: `<fm_…>` for a form id, `<name>` when the kind is unknown. */
function paramShape(path: string, param: string): { kind?: IdKind; placeholder: string } {
  const collection = new RegExp(`([^/]+)/\\{${param}\\}`).exec(path)?.[1] ?? '';
  const kind = PARAM_KIND[collection];
  return { kind, placeholder: kind ? `<${ID_PREFIX[kind]}_…>` : `<${param}>` };
}

function jsonBodySchema(o: Operation): unknown {
  const content = (o.request?.body as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
  return content?.['application/json']?.schema;
}

function successIsJson(o: Operation): boolean {
  return Object.entries(o.responses).some(
    ([status, r]) => /^2/.test(status) && 'application/json' in ((r as { content?: object }).content ?? {}),
  );
}

/**
 * Whether an operation gets a generated command: every /v1 operation except NOT_IN_CLI, and the
 * public non-/v1 reads that answer JSON (health, a form's public schema). Pages, preflights and
 * raw text are left to browsers and curl.
 */
export function wantsCommand(o: Operation): boolean {
  if (NOT_IN_CLI[o.operationId]) return false;
  if (o.path.startsWith('/v1/')) return true;
  return o.method === 'get' && successIsJson(o);
}

interface Plan {
  args: string[];
  query: FieldSpec[];
  headers: FieldSpec[];
  body: FieldSpec[] | null;
}

function plan(o: Operation): Plan {
  const args = pathParams(o.path);
  const taken = new Set([...RESERVED_FLAGS, ...args]);
  const pick = (fields: FieldSpec[]) =>
    fields.filter((f) => {
      if (taken.has(f.flag)) return false;
      taken.add(f.flag);
      return true;
    });
  const query = pick(scalarFields(o.request?.query));
  const headers = pick(scalarFields(o.request?.headers).filter((f) => f.wire !== 'authorization'));
  const bodySchema = jsonBodySchema(o);
  const body = o.request?.body ? pick(scalarFields(bodySchema)) : null;
  return { args, query, headers, body };
}

function examples(o: Operation, p: Plan): string[] {
  const head = ['formsvc', commandName(o.operationId), ...p.args.map((a) => paramShape(o.path, a).placeholder)].join(
    ' ',
  );
  const out: string[] = [];
  if (p.body) {
    const required = p.body.filter((f) => !f.optional);
    const shown = (required.length ? required : p.body.slice(0, 1))
      .slice(0, 3)
      .map((f) => (f.kind === 'boolean' ? `--${f.flag}` : `--${f.flag} ${exampleValue(f)}`));
    out.push(shown.length ? `${head} ${shown.join(' ')}` : `${head} --data '{}'`);
    out.push(`${head} --data @body.json`);
  } else if (p.query.some((f) => f.wire === 'limit')) out.push(head, `${head} --limit 20 --json`);
  else out.push(head);
  return out;
}

/** The oclif command class for one operation. */
export function buildCommand(o: Operation): typeof ApiCommand {
  const p = plan(o);
  const flags: Interfaces.FlagInput = {};
  for (const f of p.query) flags[f.flag] = flagFor(f, '(query)');
  for (const f of p.headers) flags[f.flag] = flagFor(f, '(header)');
  if (p.body) {
    flags.data = Flags.string({
      description: 'request body as JSON, @file.json, or @- for stdin; typed flags override its fields',
      helpValue: "'<json>'|@file",
    });
    for (const f of p.body) flags[f.flag] = flagFor(f);
  }
  const argDefs = Object.fromEntries(
    p.args.map((a) => {
      const { kind, placeholder } = paramShape(o.path, a);
      const what = kind
        ? `the ${kind.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)} id (${placeholder.slice(1, -1)})`
        : a;
      return [a, Args.string({ required: true, description: `${what}, a path parameter` })];
    }),
  );

  class Generated extends ApiCommand {
    static summary = o.summary;
    static description = o.description;
    static examples = examples(o, p);
    static operationIds = [o.operationId];
    static args = argDefs;
    static flags = flags;

    async run(): Promise<void> {
      const { args, flags: given } = await this.parse(Generated);
      await this.setup(given, { needKey: o['x-scope'] !== 'public' });
      const values = given as Record<string, unknown>;
      const pickAll = (fields: FieldSpec[]) => {
        const out: Record<string, unknown> = {};
        for (const f of fields) if (values[f.flag] !== undefined) out[f.wire] = values[f.flag];
        return out;
      };
      let body: Record<string, unknown> | undefined;
      if (p.body) {
        body = { ...(await readData(values.data as string | undefined)), ...pickAll(p.body) };
      } else if (values.data !== undefined) throw new UsageError(`${commandName(o.operationId)} takes no body`);
      const headers = Object.fromEntries(Object.entries(pickAll(p.headers)).map(([k, v]) => [k, String(v)]));
      const data = await this.call(o, {
        params: args as Record<string, string>,
        query: pickAll(p.query),
        body,
        headers,
      });
      this.out(data);
    }
  }
  return Generated;
}
