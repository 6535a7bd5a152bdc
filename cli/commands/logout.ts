import { Flags } from '@oclif/core';
import { createClient, readProfiles, removeProfile } from '../../shared/client.js';
import { ops } from '../../shared/contracts/index.js';
import { ApiCommand } from '../base.js';

export default class Logout extends ApiCommand {
  static summary = "Revoke the profile's API key and remove the profile";
  static description =
    'Revokes the saved key on the server (DELETE /v1/api-keys/{id}) and deletes the profile from the ' +
    'profile file. --keep-key only forgets it locally.';
  static examples = ['formsvc logout', 'formsvc logout --profile work --keep-key'];
  static operationIds = [ops.keys.revoke.operationId];
  static flags = { 'keep-key': Flags.boolean({ description: 'do not revoke the key on the server' }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(Logout);
    await this.setup(flags);
    const saved = (await readProfiles(this.cfg.configPath)).profiles[this.cfg.profile];
    if (!saved) {
      this.out({ ok: true, removed: false, profile: this.cfg.profile }, `No profile "${this.cfg.profile}" to remove.`);
      return;
    }
    let revoked = false;
    if (!flags['keep-key'] && saved.key_id) {
      const client = createClient({ baseUrl: saved.base_url, apiKey: saved.api_key, retries: 1, timeoutMs: 5000 });
      const res = await client.call(ops.keys.revoke, { params: { id: saved.key_id } });
      revoked = !res.error || res.status === 401; // 401: the key is already invalid
      if (res.error && !revoked) this.note(`Warning: could not revoke ${saved.key_id}: ${res.error.message}`);
    }
    await removeProfile(this.cfg.configPath, this.cfg.profile);
    this.out(
      { ok: true, removed: true, revoked, profile: this.cfg.profile, key_id: saved.key_id ?? null },
      `Removed profile "${this.cfg.profile}"${revoked ? ` and revoked key ${saved.key_id}` : ''}.`,
    );
  }
}
