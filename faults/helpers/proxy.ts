import fs from 'node:fs';
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

  // PROXY_LOG=path traces every connection (accepted, upstream connected, first bytes back, closed)
  // and every cut and restore there: how a hung connection attempt was told from a refused one.
  const trace = (m: string) =>
    process.env.PROXY_LOG &&
    fs.appendFileSync(process.env.PROXY_LOG, `${new Date().toISOString().slice(11, 23)} ${port} ${m}\n`);
  const onConnection = (client: net.Socket) => {
    accepted += 1;
    const upstream = net.connect(target.port, target.host);
    const rp = client.remotePort;
    trace(`accept ${rp}`);
    upstream.once('connect', () => trace(`upstream ${rp}`));
    upstream.once('data', () => trace(`firstdata ${rp}`));
    client.once('close', () => trace(`close ${rp}`));
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
      trace('cut');
      const s = server;
      server = null;
      if (s) s.close();
      for (const sock of open) sock.destroy();
      open.clear();
    },
    async restore() {
      trace('restore');
      if (!server) await listen();
      trace('restored');
    },
    async close() {
      await this.cut();
    },
  };
}
