import path from 'node:path';
import { sql } from 'drizzle-orm';
import { buildApp } from './app.js';
import { type Config, loadConfig } from './config.js';
import type { Deps } from './core/deps.js';
import { type Database, openPglite, openPostgres } from './db/client.js';
import { createStorage } from './files/router.js';
import { buildMetricsApp, buildWorkerApp } from './fleet/http.js';
import { holdKeyFingerprint } from './fleet/keys.js';
import { createMetrics } from './fleet/metrics.js';
import { Readiness } from './fleet/readiness.js';
import { listen } from './http/listen.js';
import { createLogger, type Logger } from './log.js';
import { createMailer } from './mail.js';
import { collectWhenIdle } from './memory.js';
import { warmDisposable } from './spam/disposable.js';
import { warmVelocity } from './spam/velocity.js';
import { createOutbound } from './worker/outbound.js';
import { createWaker } from './worker/wake.js';
import { WAKE_CHANNEL, Worker } from './worker/worker.js';

export { migrateFiles } from './files/migrate.js';
/** What `formsvc storage migrate` runs, an operator's command like `formsvc serve`: the CLI imports the server only here. */
export { createStorage, loadConfig, openPglite, openPostgres };

export interface StartOptions {
  /** The settings (the table in docs/operations.md); default process.env. `formsvc serve` passes its flags through here. */
  env?: Record<string, string | undefined>;
}

export interface RunningServer {
  config: Config;
  log: Logger;
  /** `http://<address>:<port>` as bound. */
  url: string;
  /** `http://<address>:<port>` of METRICS_PORT, when metrics are served apart. */
  metricsUrl?: string;
  /** Where the data is: "PostgreSQL at …" or "embedded PGlite in /abs/dir". */
  database: string;
  /** Graceful stop: no new connections, requests in flight finished, worker and database closed. */
  stop(): Promise<void>;
}

/** The start failed and said why in the log already. */
export class StartError extends Error {}

/**
 * The whole service in this process: config → database (migrated) → app and worker → listen.
 * `npm start` (server/main.ts) and `formsvc serve` both call it; it installs no signal handlers
 * (see stopOnSignals) and never exits the process.
 */
export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const config = loadConfig(opts.env);
  const log = createLogger(config.logLevel);
  const database = config.databaseUrl
    ? `PostgreSQL at ${redactUrl(config.databaseUrl)}`
    : `embedded PGlite in ${path.resolve(config.dataDir)}`;
  log.info(
    `formsvc starting: database ${database}${config.databaseUrl ? '' : ' (one process; for development and single machines)'}`,
  );
  log.info(
    config.mailTransport === 'console'
      ? 'mail: printed to standard output (MAIL_TRANSPORT=console); set SMTP_URL to send it'
      : config.mailTransport === 'smtp'
        ? `mail: sent through ${redactUrl(config.smtpUrl ?? '')}`
        : 'mail: disabled (MAIL_TRANSPORT=none); POST /v1/auth/request-code answers 501',
  );

  let db: Database;
  try {
    db = config.databaseUrl ? await openPostgres(config.databaseUrl) : await openPglite(config.dataDir);
  } catch (err) {
    log.fatal(`cannot open the database: ${(err as Error).message}`);
    throw new StartError(`cannot open the database: ${(err as Error).message}`);
  }
  let releaseKeys: () => Promise<void> = async () => {};
  if (config.databaseUrl) {
    try {
      releaseKeys = await holdKeyFingerprint(config.databaseUrl, config);
    } catch (err) {
      await db.close();
      log.fatal((err as Error).message);
      throw new StartError((err as Error).message);
    }
  }
  const mailer = createMailer(config);
  const storage = createStorage(config.storage, db, path.join(config.dataDir, 'files'));
  log.info(`attachments: ${storageLine(config)}`);
  const outbound = createOutbound({ allowPrivate: config.outboundAllowPrivate, timeoutMs: config.webhookTimeoutMs });
  let worker: Worker | null = null;
  const readiness = new Readiness(db);
  const metrics = config.metrics
    ? await createMetrics({ database: db, sendsInFlight: () => worker?.sendsInFlight ?? 0, pool: db.pool ?? null })
    : undefined;
  const deps: Deps = {
    metrics,
    readiness,
    config,
    database: db,
    mailer,
    storage,
    log,
    wake: createWaker(db, log, () => worker?.wake()),
    now: () => new Date(),
    fetch,
    outbound,
  };
  const app = config.role === 'worker' ? buildWorkerApp(deps) : buildApp(deps);
  if (config.worker && config.role !== 'api') {
    worker = new Worker(deps, { config, mailer, outbound });
    await worker.start();
    deps.handoff = worker.handoff;
    log.info(
      `delivery worker running (tick ${config.workerTickMs} ms, ${config.workerConcurrency} sends at once, ` +
        `${config.workerPerDestination} per destination)`,
    );
  } else {
    log.info(
      `delivery worker off in this process (${config.role === 'api' ? 'ROLE=api' : 'WORKER=false'}): another process must run it`,
    );
  }

  let listening: Awaited<ReturnType<typeof listen>>;
  try {
    listening = await listen(app.fetch, config);
  } catch (err) {
    log.fatal((err as Error).message); // one line naming PORT/HOST, no stack
    await worker?.stop();
    await outbound.close();
    mailer.close();
    await releaseKeys();
    await db.close();
    throw new StartError((err as Error).message);
  }
  let metricsServer: Awaited<ReturnType<typeof listen>>['server'] | null = null;
  let metricsUrl: string | undefined;
  if (config.metrics && config.metricsPort !== undefined) {
    try {
      const m = await listen(buildMetricsApp(deps).fetch, { ...config, port: config.metricsPort });
      metricsServer = m.server;
      metricsUrl = `http://${m.address.address.includes(':') ? `[${m.address.address}]` : m.address.address}:${m.address.port}`;
      log.info(`metrics on http://${config.host}:${m.address.port}/metrics (METRICS_PORT, no token)`);
    } catch (err) {
      log.fatal(`METRICS_PORT: ${(err as Error).message}`);
      listening.server.close();
      await worker?.stop();
      await outbound.close();
      mailer.close();
      await releaseKeys();
      await db.close();
      throw new StartError((err as Error).message);
    }
  }
  const { server } = listening;
  const { address, port } = listening.address;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  log.info(`formsvc listening on ${url} (ROLE=${config.role}, public base ${config.publicBaseUrl})`);
  // The disposable-domain list is loaded now, not on the first submission that needs it; so is
  // velocity's table of lone keys, its pages written once (the first write to a page costs a
  // fault: paid here, not by the first thousands of submissions).
  warmDisposable();
  if (config.role !== 'worker') warmVelocity(db);
  const releaseIdleGc = collectWhenIdle(config.idleGcMs, log);

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      // /readyz answers 503 from here on; no new connections; requests in flight get the grace.
      readiness.stopping();
      releaseIdleGc();
      const grace = config.shutdownGraceMs;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const cutOff = setTimeout(() => server.closeAllConnections(), grace);
      cutOff.unref();
      // The worker claims nothing more, lets sends finish within the grace, hands back the rest
      // (lease cleared) and wakes the other nodes, which take them at once.
      await Promise.all([closed, worker?.stop(grace)]);
      clearTimeout(cutOff);
      if (worker && db.kind === 'postgres') {
        await db.rows(sql`select pg_notify(${WAKE_CHANNEL}, '')`).catch(() => {});
      }
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      await outbound.close();
      mailer.close();
      await releaseKeys();
      await db.close();
      log.info('stopped');
    })();
    return stopping;
  };
  return { config, log, url, metricsUrl, database, stop };
}

/**
 * SIGINT/SIGTERM: stop gracefully (see stop) and exit 0; a second signal exits at once (1). Should
 * the stop hang past the grace and a margin, the process exits 1.
 */
export function stopOnSignals(server: RunningServer): void {
  let signalled = false;
  const onSignal = (signal: string) => {
    if (signalled) {
      server.log.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    signalled = true;
    server.log.info(`${signal}: stopping (not ready, no new connections, finishing requests and sends in flight)`);
    const limit = server.config.shutdownGraceMs * 3 + 5000;
    const force = setTimeout(() => {
      server.log.warn(`shutdown took longer than ${limit} ms; exiting`);
      process.exit(1);
    }, limit);
    force.unref();
    void server.stop().then(
      () => process.exit(0),
      (err) => {
        server.log.error({ err: String(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}

/** Where new attachments go, for the start-up log. */
export function storageLine(config: Config): string {
  const { kind, s3 } = config.storage;
  if (kind === 'postgres') return 'in the database (ATTACHMENT_STORAGE=postgres)';
  if (kind === 's3')
    return `in S3 bucket ${s3?.bucket}${s3?.endpoint ? ` at ${redactUrl(s3.endpoint)}` : ''} (ATTACHMENT_STORAGE=s3)`;
  return `on this machine's disk in ${path.resolve(config.dataDir, 'files')} (ATTACHMENT_STORAGE=local${config.databaseUrl ? '; other nodes cannot serve them' : ''})`;
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
