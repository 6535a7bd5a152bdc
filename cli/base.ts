/**
 * The base of every formsvc command: the global flags, the resolved configuration, the shared
 * client, output in JSON (default off a terminal) or text, and the exit codes: 1 for API errors,
 * 2 for usage errors.
 */
import { Command, Flags } from '@oclif/core';
import {
  type ApiErrorBody,
  type ApiResult,
  type CallInput,
  type Client,
  createClient,
  type ResolvedConfig,
  resolveConfig,
} from '../shared/client.js';
import type { Operation } from '../shared/contracts/common.js';
import { errorText, toText } from './output.js';

/** A usage error: printed as one line by cli/main.ts, exit 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** A failure already reported to the user: cli/main.ts only sets the exit code. */
export class Reported extends Error {
  constructor(readonly exitCode: number) {
    super('reported');
  }
}

export type GlobalFlags = { json?: boolean; 'base-url'?: string; 'api-key'?: string; profile?: string };

export abstract class ApiCommand extends Command {
  static baseFlags = {
    json: Flags.boolean({
      description: 'print JSON (the default when stdout is not a terminal); --no-json prints text',
      allowNo: true,
      helpGroup: 'GLOBAL',
    }),
    'base-url': Flags.string({
      description: 'server address (env FORMSVC_BASE_URL; else the profile, else http://127.0.0.1:8787)',
      helpGroup: 'GLOBAL',
    }),
    'api-key': Flags.string({ description: 'API key (env FORMSVC_API_KEY; else the profile)', helpGroup: 'GLOBAL' }),
    profile: Flags.string({
      description: 'named profile in the config file (env FORMSVC_PROFILE; default: the last login)',
      helpGroup: 'GLOBAL',
    }),
  };

  /** The operations this command calls; the drift test checks that each exists. */
  static operationIds: string[] = [];

  protected jsonOut = !process.stdout.isTTY;
  /** Whether this command authenticates with the API key (a 401 then means the key). */
  private keyed = false;
  protected cfg!: ResolvedConfig;
  protected client!: Client;

  /** Resolves configuration and builds the client; call right after parse(). */
  protected async setup(flags: GlobalFlags, opts: { needKey?: boolean } = {}): Promise<void> {
    if (flags.json !== undefined) this.jsonOut = flags.json;
    this.keyed = opts.needKey === true;
    try {
      this.cfg = await resolveConfig({ baseUrl: flags['base-url'], apiKey: flags['api-key'], profile: flags.profile });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    try {
      new URL(this.cfg.baseUrl);
    } catch {
      throw new UsageError(`"${this.cfg.baseUrl}" is not a URL; pass --base-url http://host:port`);
    }
    if (opts.needKey && !this.cfg.apiKey) {
      const why = this.cfg.note ? ` (${this.cfg.note})` : '';
      throw new UsageError(
        `No API key for ${this.cfg.baseUrl}${why}: run formsvc login, or set FORMSVC_API_KEY or --api-key`,
      );
    }
    this.client = createClient({
      baseUrl: this.cfg.baseUrl,
      apiKey: this.cfg.apiKey,
      userAgent: `formsvc-cli/${this.config.version}`,
    });
  }

  /** Calls one operation; on failure prints the API's error and exits 1. */
  protected async call(operation: Operation | string, input?: CallInput): Promise<unknown> {
    const res = await this.client.call(operation as string, input);
    if (res.error) this.failWith(res);
    return res.data;
  }

  /**
   * Prints an API error and exits 1: with JSON the envelope on stdout, and on stderr in every case
   * the message, the invalid fields of a 422 and the hint, so a person reading a piped run sees them.
   */
  protected failWith(res: Pick<ApiResult, 'error' | 'requestId'>): never {
    const error = this.withCliHint(res.error as ApiErrorBody);
    if (this.jsonOut) process.stdout.write(`${JSON.stringify({ error }, null, 2)}\n`);
    process.stderr.write(`${errorText(error, this.jsonOut ? null : res.requestId)}\n`);
    throw new Reported(1);
  }

  /**
   * A refused key: the API's hint speaks HTTP; on the command line the way out is `formsvc login`.
   * Only for commands that authenticate with the key (a wrong email code is a 401 too).
   */
  private withCliHint(error: ApiErrorBody): ApiErrorBody {
    if (error.code !== 'unauthorized' || !this.keyed) return error;
    const from = this.cfg?.source.apiKey;
    const where =
      from === 'flag'
        ? '--api-key'
        : from === 'env'
          ? 'FORMSVC_API_KEY'
          : from
            ? `profile "${this.cfg.profile}"`
            : null;
    const hint = where
      ? `The API key from ${where} is not valid for ${this.cfg.baseUrl}. Run formsvc login --email <you@example.com> for a new one, or pass a valid key with --api-key or FORMSVC_API_KEY.`
      : `Run formsvc login --email <you@example.com> to save a key for ${this.cfg?.baseUrl ?? 'this server'}, or pass one with --api-key or FORMSVC_API_KEY.`;
    return { ...error, hint };
  }

  /** Prints a result: JSON, or the given text (default: a generic rendering). */
  protected out(data: unknown, text?: string): void {
    if (this.jsonOut) process.stdout.write(`${JSON.stringify(data ?? null, null, 2)}\n`);
    else process.stdout.write(`${text ?? toText(data)}\n`);
  }

  /** A progress or status line for people: stderr, and only when not printing JSON. */
  protected note(text: string): void {
    if (!this.jsonOut) process.stderr.write(`${text}\n`);
  }
}

/** Reads `--data '<json>'`, `--data @file.json` or `--data @-` (stdin) into an object. */
export async function readData(value: string | undefined): Promise<Record<string, unknown> | undefined> {
  if (value === undefined) return undefined;
  let text = value;
  if (value.startsWith('@')) {
    const { readFile } = await import('node:fs/promises');
    const file = value.slice(1);
    try {
      text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
    } catch (err) {
      throw new UsageError(`--data ${value}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? err})`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--data is not valid JSON: ${(err as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError('--data must be a JSON object, e.g. --data \'{"name":"Contact"}\'');
  }
  return parsed as Record<string, unknown>;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Resolves after ms, or at once when the signal aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** An AbortSignal that fires on the first Ctrl-C (SIGINT) or SIGTERM; `dispose` removes the handlers. */
export function interruptSignal() {
  const ctrl = new AbortController();
  const onSignal = () => ctrl.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: ctrl.signal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
