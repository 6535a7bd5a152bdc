import os from 'node:os';
import path from 'node:path';
import { Command, Flags } from '@oclif/core';

/** The per-user data folder of `formsvc serve`: $XDG_DATA_HOME/formsvc, else the platform's usual place. */
export function userDataDir(env: Record<string, string | undefined> = process.env): string {
  if (env.XDG_DATA_HOME) return path.join(env.XDG_DATA_HOME, 'formsvc');
  if (process.platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'formsvc');
  if (process.platform === 'win32' && env.LOCALAPPDATA) return path.join(env.LOCALAPPDATA, 'formsvc');
  return path.join(os.homedir(), '.local', 'share', 'formsvc');
}

export default class Serve extends Command {
  static summary = 'Run the formsvc server: the HTTP API, form intake and the delivery worker';
  static description =
    'The same server as `npm start` in a clone, in this process. Settings come from the environment ' +
    '(docs/operations.md lists them); --port and --data-dir win over PORT and DATA_DIR. Without DATABASE_URL the ' +
    'data lives in embedded PGlite in a per-user folder: $XDG_DATA_HOME/formsvc, else ~/.local/share/formsvc ' +
    '(~/Library/Application Support/formsvc on macOS). Ctrl-C stops it gracefully.';
  static examples = [
    'formsvc serve',
    'formsvc serve --port 9000 --data-dir ./formsvc-data',
    'DATABASE_URL=postgres://user@127.0.0.1:5432/formsvc formsvc serve',
  ];
  static operationIds: string[] = [];
  static flags = {
    port: Flags.integer({ description: 'listen port (env PORT; default 8787)', min: 0, max: 65535 }),
    'data-dir': Flags.string({
      description: 'folder of the embedded database and the attachments (env DATA_DIR; default: the per-user folder)',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    const env = { ...process.env };
    if (flags.port !== undefined) env.PORT = String(flags.port);
    env.DATA_DIR = path.resolve(flags['data-dir'] ?? (env.DATA_DIR || userDataDir(env)));
    const { startServer, stopOnSignals, storageLine, StartError } = await import('../../server/start.js');
    try {
      const server = await startServer({ env });
      stopOnSignals(server);
      process.stdout.write(
        `formsvc serve: listening on ${server.url} (public base ${server.config.publicBaseUrl})\n` +
          `formsvc serve: data in ${server.database}` +
          `, attachments ${storageLine(server.config)}\n`,
      );
    } catch (err) {
      // A StartError was logged already; anything else (a bad setting, a port in use) is one line.
      if (!(err instanceof StartError)) process.stderr.write(`Error: ${(err as Error).message}\n`);
      process.exit(1);
    }
  }
}
