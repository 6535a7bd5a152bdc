import { Args, Flags } from '@oclif/core';
import { ops } from '../../shared/contracts/index.js';
import { ApiCommand, UsageError } from '../base.js';

const token = Flags.string({ description: 'the sandbox_token from sandbox create (env FORMSVC_SANDBOX_TOKEN)' });
const id = Args.string({ required: true, description: 'the sandbox id (sbx_…)' });

function needToken(flag: string | undefined): string {
  const t = flag ?? process.env.FORMSVC_SANDBOX_TOKEN;
  if (!t) throw new UsageError('give --token <sandbox_token> (or set FORMSVC_SANDBOX_TOKEN)');
  return t;
}

export class SandboxCreate extends ApiCommand {
  static summary = 'Create an anonymous sandbox form (no account): 5 test submissions, 24 hours';
  static description =
    'POST /v1/public/sandboxes with a fresh UUIDv4 Idempotency-Key. Prints the sandbox token once: keep it to ' +
    'read the sandbox (sandbox show) and to claim it into your organization (sandbox claim).';
  static examples = ['formsvc sandbox create --name Contact', 'formsvc sandbox create --name Contact --json'];
  static aliases = ['sandboxes:create'];
  static operationIds = [ops.sandboxes.create.operationId];
  static flags = {
    name: Flags.string({ description: 'form name', required: true }),
    origin: Flags.string({ description: 'the site that will post, e.g. https://example.com' }),
    'claim-email': Flags.string({ description: 'only this person may claim the sandbox' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(SandboxCreate);
    await this.setup(flags);
    const body = { name: flags.name, origin: flags.origin, claim_email: flags['claim-email'] };
    // The client sends a fresh lowercase UUIDv4 Idempotency-Key with every POST (and reuses it on retries).
    const res = await this.client.call(ops.sandboxes.create, { body });
    if (res.error) this.failWith(res);
    const s = res.data;
    this.out(
      s,
      [
        `Sandbox ${s.sandbox.id} (expires ${s.sandbox.expires_at}).`,
        `Submit URL: ${s.sandbox.submit_url}`,
        `Sandbox token (shown once): ${s.sandbox_token}`,
        `See it: formsvc sandbox show ${s.sandbox.id} --token ${s.sandbox_token}`,
        `Keep it: formsvc sandbox claim ${s.sandbox.id} --token ${s.sandbox_token}`,
      ].join('\n'),
    );
  }
}

export class SandboxShow extends ApiCommand {
  static summary = 'Show a sandbox and its test submissions (Authorization: Sandbox <token>)';
  static description = 'GET /v1/public/sandboxes/{id} with the sandbox token; no API key needed.';
  static examples = ['formsvc sandbox show <sbx_…> --token <sandbox_token>'];
  static aliases = ['sandboxes:read'];
  static operationIds = [ops.sandboxes.read.operationId];
  static args = { id };
  static flags = { token };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SandboxShow);
    await this.setup(flags);
    const headers = { authorization: `Sandbox ${needToken(flags.token)}` };
    const res = await this.client.call(ops.sandboxes.read, { params: { id: args.id }, headers });
    if (res.error) this.failWith(res);
    const s = res.data;
    const subs = s.submissions.map((x) => `  ${x.id}  ${x.received_at}  ${JSON.stringify(x.data)}`);
    this.out(
      s,
      [
        `Sandbox ${s.id} "${s.name}": ${s.status}, ${s.accepted_count} submissions, ${s.remaining} left, expires ${s.expires_at}`,
        `Submit URL: ${s.submit_url}`,
        ...(subs.length ? ['Submissions:', ...subs] : ['No submissions yet.']),
      ].join('\n'),
    );
  }
}

export class SandboxClaim extends ApiCommand {
  static summary = 'Claim a sandbox into your organization (manage key + Service-Sandbox-Token)';
  static description =
    'POST /v1/sandboxes/{id}/claim: the form keeps its id and submit URL and becomes a normal form of the ' +
    'organization of the API key in use.';
  static examples = ['formsvc sandbox claim <sbx_…> --token <sandbox_token>'];
  static aliases = ['sandboxes:claim'];
  static operationIds = [ops.sandboxes.claim.operationId];
  static args = { id };
  static flags = { token };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SandboxClaim);
    await this.setup(flags, { needKey: true });
    const headers = { 'service-sandbox-token': needToken(flags.token) };
    const res = await this.client.call(ops.sandboxes.claim, { params: { id: args.id }, headers });
    if (res.error) this.failWith(res);
    const c = res.data;
    this.out(c, `Claimed: form ${c.form.id} "${c.form.name}" is now yours.\nSubmit URL: ${c.form.submit_url}`);
  }
}
