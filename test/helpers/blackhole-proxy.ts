import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on a loopback port in front of a real server (Postgres), which a test can turn into
 * a black hole: connections are still accepted and kept open, but no byte goes either way — a
 * database host that stopped answering without closing anything. `restore()` ends the silent
 * connections (as a recovered network would fail them) and forwards again.
 */
export class BlackholeProxy {
  private server: Server | null = null;
  private silent = false;
  private readonly pairs = new Set<[Socket, Socket | null]>();

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Starts listening; resolves the port. */
  async start(): Promise<number> {
    const server = createServer((client) => {
      const pair: [Socket, Socket | null] = [client, null];
      this.pairs.add(pair);
      client.on('close', () => this.pairs.delete(pair));
      client.on('error', () => {});
      if (this.silent) return;
      const upstream = connect(this.targetPort, this.targetHost);
      pair[1] = upstream;
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('data', (chunk) => {
        if (!this.silent) upstream.write(chunk);
      });
      upstream.on('data', (chunk) => {
        if (!this.silent) client.write(chunk);
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /** From now on nothing is forwarded, and new connections are accepted but never answered. */
  blackhole(): void {
    this.silent = true;
  }

  /** Ends every connection held silent and forwards new ones again. */
  restore(): void {
    this.silent = false;
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream?.destroy();
    }
  }

  async stop(): Promise<void> {
    this.restore();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
