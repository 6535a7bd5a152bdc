import { meOps } from '../../shared/contracts/me.js';
import { ApiCommand } from '../base.js';

export default class Whoami extends ApiCommand {
  static summary = 'Show the organization, plan and scopes of the API key in use';
  static description = 'GET /v1/me: who the key belongs to, its scopes, the plan limits and usage.';
  static examples = ['formsvc whoami', 'formsvc whoami --json'];
  static aliases = ['me:get'];
  static operationIds = [meOps.get.operationId];

  async run(): Promise<void> {
    const { flags } = await this.parse(Whoami);
    await this.setup(flags, { needKey: true });
    const res = await this.client.call(meOps.get);
    if (res.error) this.failWith(res);
    const me = res.data;
    const text = [
      `organization: ${me.organization.name} (${me.organization.slug}, ${me.organization.id})`,
      `plan: ${me.organization.plan}`,
      `scopes: ${me.key.scopes.join(', ')}`,
      `forms: ${me.limits.used.forms}${me.limits.forms === null ? '' : ` of ${me.limits.forms}`}`,
      `server: ${this.cfg.baseUrl} (key from ${this.cfg.source.apiKey}${this.cfg.source.apiKey === 'profile' ? ` "${this.cfg.profile}"` : ''})`,
    ].join('\n');
    this.out(me, text);
  }
}
