import net from 'node:net';

/**
 * A TCP proxy in the test process between a server process and PostgreSQL, to make the database
 * unreachable without touching the shared PostgreSQL server: `cut()` destroys every proxied
 * connection and stops listening (new connections are refused), `restore()` listens again on the
 * same port.
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  const open = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  let accepted = 0;

  const onConnection = (client: net.Socket) => {
    accepted += 1;
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const listen = async () => {
    const s = net.createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        s.off('error', reject);
        resolve();
      });
    });
    port = (s.address() as net.AddressInfo).port;
    server = s;
  };
  await listen();

  return {
    port,
    get accepted() {
      return accepted;
    },
    get connections() {
      return open.size / 2;
    },
    /** Every connection is reset and new ones are refused until restore(). */
    async cut() {
      const s = server;
      server = null;
      if (s) s.close();
      for (const sock of open) sock.destroy();
      open.clear();
    },
    async restore() {
      if (!server) await listen();
    },
    async close() {
      await this.cut();
    },
  };
}
