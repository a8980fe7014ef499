/**
 * Tollgate as a Next.js App Router route handler. In a Next app this module is
 * `app/llm/[...path]/route.ts`: every method Tollgate serves is exported and hands the request to
 * the gateway unchanged. Next passes the full URL (`/llm/v1/...`), so the gateway is created with
 * `basePath: '/llm'`. Nothing here imports Next; the handlers are plain `(Request) => Response`.
 *
 * Without a Next app at hand, run it on node:http with a stand-in for Next's router:
 *
 *   node --import tsx examples/next-route-handler.ts [port]      (default port 0: any free port)
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@tollgate/node-server';
import {
  createDemoGateway,
  type DemoGateway,
  isMain,
  printUsage,
  type RunningExample,
} from './demo-gateway.js';

const BASE_PATH = '/llm';

// Route segment config: SQLite needs the Node.js runtime, and no response may be cached.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

// One gateway per server process, made on first use (Next may import the module at build time).
let demo: Promise<DemoGateway> | undefined;
function gateway(): Promise<DemoGateway> {
  demo ??= createDemoGateway({ basePath: BASE_PATH });
  return demo;
}

export async function GET(request: Request): Promise<Response> {
  return (await gateway()).gateway.fetch(request);
}
export async function POST(request: Request): Promise<Response> {
  return (await gateway()).gateway.fetch(request);
}
export async function PATCH(request: Request): Promise<Response> {
  return (await gateway()).gateway.fetch(request);
}
export async function DELETE(request: Request): Promise<Response> {
  return (await gateway()).gateway.fetch(request);
}
/** CORS preflight for browser clients; the gateway answers it. */
export async function OPTIONS(request: Request): Promise<Response> {
  return (await gateway()).gateway.fetch(request);
}

const handlers: Record<string, (request: Request) => Promise<Response>> = {
  GET,
  POST,
  PATCH,
  DELETE,
  OPTIONS,
};

/**
 * Serves the handlers above on `port` (0 = any free port) of 127.0.0.1 the way Next would route
 * `app/llm/[...path]/route.ts`: `/llm/...` to the export named by the method, anything else 404.
 */
export async function startNextRouteHandler(port = 0): Promise<RunningExample> {
  const { key } = await gateway();
  const server = createServer(
    toNodeHandler((request) => {
      const handler = handlers[request.method];
      const { pathname } = new URL(request.url);
      if (!pathname.startsWith(`${BASE_PATH}/`)) return new Response('Not found', { status: 404 });
      return handler ? handler(request) : new Response(null, { status: 405 });
    }),
  );
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const { port: chosen } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${chosen}${BASE_PATH}/v1`,
    key,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      const closing = demo;
      demo = undefined;
      await (await closing)?.close();
    },
  };
}

if (isMain(import.meta.url)) {
  printUsage('next-route-handler', await startNextRouteHandler(Number(process.argv[2] ?? 0)));
}
