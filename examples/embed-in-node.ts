/**
 * Tollgate as a library: the gateway is one `fetch(request)` function, so any server that speaks
 * Web `Request`/`Response` can host it. Here: plain node:http through Tollgate's own adapter
 * (`toNodeHandler`), at the root of the server, with the offline demo model (no network, no key).
 *
 *   node --import tsx examples/embed-in-node.ts [port]      (default port 0: any free port)
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@tollgate/node-server';
import { createDemoGateway, isMain, printUsage, type RunningExample } from './demo-gateway.js';

/** Starts the gateway on `port` (0 = any free port) of 127.0.0.1. */
export async function startEmbedInNode(port = 0): Promise<RunningExample> {
  const demo = await createDemoGateway();
  const server = createServer(toNodeHandler(demo.gateway.fetch));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const { port: chosen } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${chosen}/v1`,
    key: demo.key,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await demo.close();
    },
  };
}

if (isMain(import.meta.url)) {
  printUsage('embed-in-node', await startEmbedInNode(Number(process.argv[2] ?? 0)));
}
