import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * An HTTP server on an ephemeral loopback port that keeps track of its open connections, so a
 * test upstream can cut them all (a broken provider) and stop without waiting on keep-alives.
 */
export class LoopbackServer {
  /** The connections open right now. */
  readonly sockets = new Set<Socket>();
  private server: Server | null = null;

  /** Starts listening on `127.0.0.1:0`; resolves the origin, e.g. `http://127.0.0.1:43121`. */
  async listen(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
    configure: (server: Server) => void = () => {},
  ): Promise<string> {
    const server = createServer(handler);
    this.server = server;
    configure(server);
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Destroys every open connection (the server keeps listening). */
  destroySockets(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  /** Destroys every open connection and stops listening. */
  async close(): Promise<void> {
    this.destroySockets();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
