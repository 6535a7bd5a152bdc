import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Config } from '../config.js';

type Fetch = Parameters<typeof serve>[0]['fetch'];

/** Why listening failed, in one line that names the setting to change. */
export class ListenError extends Error {}

function listenFailure(err: NodeJS.ErrnoException, config: Config): ListenError {
  const where = `${config.host}:${config.port}`;
  const why: Record<string, string> = {
    EADDRINUSE: `another process already listens on ${where}; stop it or set PORT (or HOST) to a free one`,
    EACCES: `this user may not listen on ${where}; set PORT above 1023 or run with the right to bind it`,
    EADDRNOTAVAIL: `HOST ${config.host} is not an address of this machine; set HOST (e.g. 127.0.0.1 or 0.0.0.0)`,
    ENOTFOUND: `HOST ${config.host} does not resolve; set HOST to an address (e.g. 127.0.0.1 or 0.0.0.0)`,
  };
  return new ListenError(`cannot listen on ${where}: ${why[err.code ?? ''] ?? `${err.message}; check PORT and HOST`}`);
}

/**
 * Serves `fetch` on PORT/HOST. Slow clients are cut off (Node answers 408 and closes): headers
 * within HTTP_HEADERS_TIMEOUT_MS, the whole request within HTTP_REQUEST_TIMEOUT_MS; an idle
 * keep-alive connection closes after HTTP_KEEP_ALIVE_TIMEOUT_MS. Rejects with a ListenError.
 */
export function listen(fetch: Fetch, config: Config): Promise<{ server: Server; address: AddressInfo }> {
  const requestTimeout = config.requestTimeoutMs;
  // Node refuses a header timeout beyond a request timeout (0 is none), and checks both only this
  // often (30 s by default, which would let a slow client hold a connection well past its limit).
  const headersTimeout =
    requestTimeout > 0 ? Math.min(config.headersTimeoutMs, requestTimeout) : config.headersTimeoutMs;
  const shortest = Math.min(...[headersTimeout, requestTimeout].filter((ms) => ms > 0), 4000);
  const connectionsCheckingInterval = Math.max(10, Math.floor(shortest / 4));
  return new Promise((resolve, reject) => {
    // A plain HTTP/1.1 server: no createServer option is passed.
    const server = serve({
      fetch,
      port: config.port,
      hostname: config.host,
      serverOptions: {
        headersTimeout,
        requestTimeout,
        keepAliveTimeout: config.keepAliveTimeoutMs,
        connectionsCheckingInterval,
      },
    }) as Server;
    const failed = (err: NodeJS.ErrnoException) => reject(listenFailure(err, config));
    server.once('error', failed);
    server.once('listening', () => {
      server.off('error', failed);
      resolve({ server, address: server.address() as AddressInfo });
    });
  });
}
