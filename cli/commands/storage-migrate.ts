import path from 'node:path';
import { Command, Flags } from '@oclif/core';
import { userDataDir } from './serve.js';

/**
 * An operator's command, like `serve`: it runs against the database and the stores themselves with
 * the settings `formsvc serve` reads (DATABASE_URL, DATA_DIR, S3_*), not through the HTTP API, so no
 * API key can move an installation's files and no request waits on a move of thousands of files.
 */
export default class StorageMigrate extends Command {
  static summary = 'Move the stored attachments to another storage kind (local, postgres or s3)';
  static description =
    'Copies every attachment kept elsewhere to --to, checks each copy against its stored sha256, points the ' +
    'attachment at it and removes the old copy after --grace-s (a download already under way finishes). Servers ' +
    'may keep running meanwhile (on PostgreSQL); set ATTACHMENT_STORAGE to the same kind on every node first, so ' +
    'that new files go there too. Stopped, it resumes where it was when run again. Local files are read from this ' +
    "machine's DATA_DIR: run it on each machine that has some. Settings as for `formsvc serve` (docs/storage.md).";
  static examples = [
    'DATABASE_URL=postgres://user@127.0.0.1:5432/formsvc formsvc storage migrate --to postgres --data-dir ./formsvc-data',
    'DATABASE_URL=postgres://… S3_BUCKET=formsvc S3_ENDPOINT=http://127.0.0.1:9000 formsvc storage migrate --to s3 --json',
  ];
  static operationIds: string[] = [];
  static flags = {
    to: Flags.string({
      description: 'the storage kind to move every file to',
      options: ['local', 'postgres', 's3'],
      required: true,
    }),
    'data-dir': Flags.string({
      description:
        'folder of the embedded database and the local attachments (env DATA_DIR; default: the per-user folder)',
    }),
    'grace-s': Flags.integer({ description: 'seconds an old copy is kept after the switch (default 30)', min: 0 }),
    json: Flags.boolean({
      description: 'print JSON (the default when stdout is not a terminal); --no-json prints text',
      allowNo: true,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(StorageMigrate);
    const json = flags.json ?? !process.stdout.isTTY;
    const env = { ...process.env };
    env.DATA_DIR = path.resolve(flags['data-dir'] ?? (env.DATA_DIR || userDataDir(env)));
    const to = flags.to as 'local' | 'postgres' | 's3';
    const { loadConfig, openPglite, openPostgres, createStorage, migrateFiles } = await import('../../server/start.js');
    let database: Awaited<ReturnType<typeof openPostgres>> | undefined;
    try {
      const config = loadConfig(env);
      if (to === 's3' && !config.storage.s3)
        throw new Error('--to s3 needs S3_BUCKET (and S3_ENDPOINT for a store other than AWS)');
      database = config.databaseUrl
        ? await openPostgres(config.databaseUrl, { max: 2 })
        : await openPglite(config.dataDir);
      const storage = createStorage(config.storage, database, path.join(config.dataDir, 'files'));
      const result = await migrateFiles(database, storage, to, {
        graceMs: (flags['grace-s'] ?? 30) * 1000,
        onFile: (e) => {
          if (e.outcome !== 'moved')
            process.stderr.write(`${e.id} (${e.from}): ${e.outcome}${e.error ? `: ${e.error}` : ''}\n`);
        },
      });
      if (json) process.stdout.write(`${JSON.stringify({ to, ...result }, null, 2)}\n`);
      else {
        process.stdout.write(
          `moved ${result.moved} file(s) (${result.bytes} bytes) to ${to}; ${result.missing} missing on this node, ` +
            `${result.failed} failed; ${result.left} still kept elsewhere\n`,
        );
      }
      if (result.failed) process.exitCode = 1;
    } catch (err) {
      process.stderr.write(`Error: ${(err as Error).message}\n`);
      process.exitCode = 1;
    } finally {
      await database?.close();
    }
  }
}
