import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Args, Flags } from '@oclif/core';
import { ops } from '../../shared/contracts/index.js';
import { ApiCommand, readData, UsageError } from '../base.js';

/** `k=v` → [k, v]; the key may not be empty. */
function pair(flag: string, raw: string): [string, string] {
  const i = raw.indexOf('=');
  if (i <= 0) throw new UsageError(`${flag} expects name=value, got "${raw}"`);
  return [raw.slice(0, i), raw.slice(i + 1)];
}

export default class Submit extends ApiCommand {
  static summary = 'Submit to a form as a website would (JSON, or multipart when files are attached)';
  static description =
    'POST /s/{formId} without credentials. Repeat --field for each field (a repeated name becomes a list) and ' +
    '--file for each attachment. --test marks it a _test submission (delivered, but flagged as a test).';
  static examples = [
    'formsvc submit <fm_…> --field email=ada@example.com --field message=Hi',
    'formsvc submit <fm_…> --field name=Ada --file cv=./cv.pdf',
    'formsvc submit <fm_…> --data \'{"email":"ada@example.com"}\' --test',
  ];
  static aliases = ['intake:submit'];
  static operationIds = [ops.intake.submit.operationId];
  static args = { formId: Args.string({ required: true, description: 'the form id (fm_…)' }) };
  static flags = {
    field: Flags.string({ description: 'a field as name=value (repeatable)', multiple: true }),
    file: Flags.string({ description: 'an attachment as field=path (repeatable)', multiple: true }),
    data: Flags.string({ description: 'fields as a JSON object, @file.json or @-' }),
    test: Flags.boolean({ description: 'send as a _test submission' }),
    origin: Flags.string({ description: 'Origin header to send, e.g. https://example.com' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Submit);
    await this.setup(flags);
    const fields: Record<string, unknown> = { ...(await readData(flags.data)) };
    for (const raw of flags.field ?? []) {
      const [k, v] = pair('--field', raw);
      const prev = fields[k];
      fields[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    if (flags.test) fields._test = true;
    const files = (flags.file ?? []).map((raw) => pair('--file', raw));
    for (const [, path] of files) {
      const st = await stat(path).catch(() => null);
      if (!st?.isFile()) throw new UsageError(`--file ${path}: no such file`);
    }
    let body: Record<string, unknown> | FormData = fields;
    if (files.length) {
      const { openAsBlob } = await import('node:fs');
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) {
        for (const item of Array.isArray(v) ? v : [v]) {
          form.append(k, typeof item === 'string' ? item : JSON.stringify(item));
        }
      }
      for (const [k, path] of files) form.append(k, await openAsBlob(path), basename(path));
      body = form;
    }
    const res = await this.client.call(ops.intake.submit, {
      params: { formId: args.formId },
      body,
      headers: flags.origin ? { origin: flags.origin } : {},
    });
    if (res.error) this.failWith(res);
    const r = res.data as { submission_id: string; status: string; deliveries?: string[] };
    const deliveries = r.deliveries?.length ? `; deliveries: ${r.deliveries.join(', ')}` : '';
    this.out(r, `Stored ${r.submission_id} as ${r.status}${deliveries}.`);
  }
}
