import path from 'node:path';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { type Database, openPglite, openPostgres } from './db/client.js';
import type { Deps } from './http/context.js';
import { listen } from './http/listen.js';
import { createLogger } from './log.js';
import { createMailer } from './mail.js';
import { createLocalStorage } from './storage.js';
import { createOutbound } from './worker/outbound.js';
import { createWaker } from './worker/wake.js';
import { Worker } from './worker/worker.js';

/** npm start: HTTP server (and, from the delivery issue on, the worker) in one process. */
async function main() {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const dbLabel = config.databaseUrl
    ? `PostgreSQL at ${redactUrl(config.databaseUrl)}`
    : `embedded PGlite in ${path.resolve(config.dataDir)} (one process; for development and single machines)`;
  log.info(`formsvc starting: database ${dbLabel}`);
  log.info(
    config.mailTransport === 'console'
      ? 'mail: printed to standard output (MAIL_TRANSPORT=console); set SMTP_URL to send it'
      : config.mailTransport === 'smtp'
        ? `mail: sent through ${redactUrl(config.smtpUrl ?? '')}`
        : 'mail: disabled (MAIL_TRANSPORT=none); POST /v1/auth/request-code answers 501',
  );

  let database: Database;
  try {
    database = config.databaseUrl ? await openPostgres(config.databaseUrl) : await openPglite(config.dataDir);
  } catch (err) {
    log.fatal(`cannot open the database: ${(err as Error).message}`);
    process.exit(1);
  }
  const mailer = createMailer(config);
  const storage = createLocalStorage(path.join(config.dataDir, 'files'));
  const outbound = createOutbound({ allowPrivate: config.outboundAllowPrivate, timeoutMs: config.webhookTimeoutMs });
  let worker: Worker | null = null;
  const deps: Deps = {
    config,
    database,
    mailer,
    storage,
    log,
    wake: createWaker(database, log, () => worker?.wake()),
    now: () => new Date(),
    fetch,
    outbound,
  };
  const app = buildApp(deps);
  if (config.worker) {
    worker = new Worker(deps, { config, mailer, outbound });
    await worker.start();
    deps.handoff = worker.handoff;
    log.info(
      `delivery worker running (tick ${config.workerTickMs} ms, ${config.workerConcurrency} sends at once, ` +
        `${config.workerPerDestination} per destination)`,
    );
  } else {
    log.info('delivery worker off in this process (WORKER=false): another process must run it');
  }

  const { server, address } = await listen(app.fetch, config).catch((err: Error) => {
    log.fatal(err.message); // one line naming PORT/HOST, no stack
    return process.exit(1);
  });
  log.info(`formsvc listening on http://${address.address}:${address.port} (public base ${config.publicBaseUrl})`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: stopping (no new connections, finishing requests in flight)`);
    const force = setTimeout(() => {
      log.warn('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await worker?.stop();
    await outbound.close();
    mailer.close();
    await database.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

void main();
