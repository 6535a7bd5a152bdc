import { createInterface } from 'node:readline/promises';
import { Flags } from '@oclif/core';
import { saveProfile } from '../../shared/client.js';
import { ops } from '../../shared/contracts/index.js';
import { ApiCommand, UsageError } from '../base.js';

async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

export default class Login extends ApiCommand {
  static summary = 'Sign in by email code and save an API key to a profile';
  static description =
    'Emails a 6-digit code (POST /v1/auth/request-code), then exchanges it for an API key ' +
    '(POST /v1/auth/verify-code) saved to the profile file (0600). On a terminal it asks for the email ' +
    'and the code; in scripts pass --email to send the code and --email with --code to finish. ' +
    'In development the console mailer prints the code in the server log.';
  static examples = [
    'formsvc login',
    'formsvc login --email you@example.com',
    'formsvc login --email you@example.com --code 123456 --profile work',
  ];
  static operationIds = [ops.auth.requestCode.operationId, ops.auth.verifyCode.operationId];
  static flags = {
    email: Flags.string({ description: 'your email address' }),
    code: Flags.string({ description: 'the 6-digit code from the email (skips sending a new one)' }),
    'key-name': Flags.string({ description: 'name of the new API key (default agent-YYYY-MM-DD)' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Login);
    await this.setup(flags);
    const interactive = Boolean(process.stdin.isTTY && process.stderr.isTTY);
    const email = flags.email ?? (interactive ? await ask('Email: ') : undefined);
    if (!email) throw new UsageError('login needs --email when not run on a terminal');
    let code = flags.code;
    if (!code) {
      const sent = (await this.call(ops.auth.requestCode, { body: { email } })) as { expires_in: number };
      const minutes = Math.round(sent.expires_in / 60);
      if (!interactive) {
        this.out(
          { ok: true, email, expires_in: sent.expires_in, next: `formsvc login --email ${email} --code <code>` },
          `Code sent to ${email} (valid ${minutes} min). Finish with: formsvc login --email ${email} --code <code>`,
        );
        return;
      }
      process.stderr.write(`Code sent to ${email} (valid ${minutes} min; in development it is in the server log).\n`);
      code = await ask('Code: ');
    }
    if (!/^\d{6}$/.test(code)) throw new UsageError('--code must be the 6 digits from the email');
    const body = { email, code, ...(flags['key-name'] ? { key_name: flags['key-name'] } : {}) };
    const v = (await this.call(ops.auth.verifyCode, { body })) as {
      api_key: string;
      key_id: string;
      scopes: string[];
      organization: { id: string; slug: string; name: string };
      user: { email: string; created: boolean };
    };
    await saveProfile(this.cfg.configPath, this.cfg.profile, {
      base_url: this.cfg.baseUrl,
      api_key: v.api_key,
      key_id: v.key_id,
      email: v.user.email,
      organization: v.organization,
    });
    this.out(
      {
        ok: true,
        profile: this.cfg.profile,
        config_path: this.cfg.configPath,
        base_url: this.cfg.baseUrl,
        email: v.user.email,
        organization: v.organization,
        key_id: v.key_id,
        scopes: v.scopes,
      },
      `Logged in as ${v.user.email} (organization ${v.organization.slug}); key ${v.key_id} saved to profile ` +
        `"${this.cfg.profile}" in ${this.cfg.configPath}.\nNext: formsvc quickstart --name Contact --wait`,
    );
  }
}
