import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Args, type Interfaces } from '@oclif/core';
import { type ApiErrorBody, buildPath } from '../../shared/client.js';
import { ops } from '../../shared/contracts/index.js';
import { ApiCommand, interruptSignal } from '../base.js';
import { flagFor, scalarFields } from '../schema-flags.js';

const op = ops.submissions.export;
const fields = scalarFields(op.request?.query);

/** The export's query flags, from the contract (format defaults to csv). */
const flags: Interfaces.FlagInput = Object.fromEntries(fields.map((f) => [f.flag, flagFor(f, '(query)')]));

/**
 * `formsvc forms export`: the generated command would read the whole export into memory before
 * printing it; this one streams the response to stdout as it arrives, so a million rows go to a
 * file in bounded memory, with a progress line on stderr when stderr is a terminal.
 */
export default class FormsExport extends ApiCommand {
  static summary = 'Export a form’s submissions as CSV or NDJSON to stdout (streamed)';
  static description = `${op.summary}. Redirect stdout to a file; progress goes to stderr when it is a terminal.`;
  static examples = [
    'formsvc forms export fm_123 --format csv > submissions.csv',
    'formsvc forms export fm_123 --format ndjson --status received --since 2026-01-01 > submissions.ndjson',
  ];
  static operationIds = [op.operationId];
  static args = { id: Args.string({ required: true, description: 'the form id (fm_…)' }) };
  static flags = flags;

  async run(): Promise<void> {
    const { args, flags: given } = await this.parse(FormsExport);
    await this.setup(given, { needKey: true });
    const values = given as Record<string, unknown>;
    const url = new URL(`${this.cfg.baseUrl.replace(/\/$/, '')}${buildPath(op.path, { id: args.id })}`);
    url.searchParams.set('format', 'csv');
    for (const f of fields) if (values[f.flag] !== undefined) url.searchParams.set(f.wire, String(values[f.flag]));
    const interrupt = interruptSignal();
    let res: Response;
    try {
      res = await fetch(url, {
        headers: {
          authorization: `Bearer ${this.cfg.apiKey}`,
          'user-agent': `formsvc-cli/${this.config.version}`,
        },
        signal: interrupt.signal,
      });
    } catch (err) {
      const error: ApiErrorBody = {
        code: 'network_error',
        message: `Could not reach ${this.cfg.baseUrl}: ${(err as Error).message}`,
        hint: 'Check that the server runs and --base-url points at it.',
      };
      return this.failWith({ error, requestId: null });
    }
    if (!res.ok || !res.body) {
      const text = await res.text();
      let error: ApiErrorBody;
      try {
        error = (JSON.parse(text) as { error: ApiErrorBody }).error;
        if (!error?.code) throw new Error('no envelope');
      } catch {
        error = { code: 'bad_response', message: `HTTP ${res.status}: ${text.slice(0, 200)}` };
      }
      return this.failWith({ error, requestId: res.headers.get('x-request-id') });
    }
    const progress = progressLine(url.searchParams.get('format') === 'csv');
    await pipeline(
      Readable.fromWeb(res.body as never),
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          progress.add(chunk);
          yield chunk;
        }
      },
      process.stdout as unknown as Writable,
      { end: false },
    );
    progress.done();
  }
}

/** "12,000 rows, 3.1 MB" (CSV: lines, as a quoted cell may span several) on stderr, rewritten at most every 200 ms; nothing when stderr is no terminal. */
function progressLine(csv: boolean) {
  const tty = process.stderr.isTTY === true;
  let rows = csv ? -1 : 0; // a CSV's first line is its header
  let bytes = 0;
  let shown = 0;
  const show = () => {
    const n = Math.max(rows, 0).toLocaleString('en-US');
    process.stderr.write(`\r${n} ${csv ? 'lines' : 'rows'}, ${(bytes / 1e6).toFixed(1)} MB`);
  };
  return {
    add(chunk: Buffer) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows += 1;
      if (tty && Date.now() - shown > 200) {
        shown = Date.now();
        show();
      }
    },
    done() {
      if (!tty) return;
      show();
      process.stderr.write(' — done\n');
    },
  };
}
