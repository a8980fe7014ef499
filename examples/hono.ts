/**
 * Tollgate inside a Hono app, under `/llm`, served on Node by `@hono/node-server`. The same app
 * runs unchanged on any runtime Hono supports, given a storage adapter that runs there.
 *
 *   node --import tsx examples/hono.ts [port]      (default port 0: any free port)
 *
 * Hono hands the route the request as it came (`c.req.raw`, the URL still starts with `/llm`; the
 * same in a sub-app mounted with `app.route('/llm', sub)`), so the gateway is created with
 * `basePath: '/llm'`: it answers `/llm/v1/...`, `/llm/healthz` and `/llm/api/openapi.json`.
 * (`app.all('/llm/*', mount(gateway.fetch))` from `hono/mount` strips the prefix instead; then leave
 * `basePath` out.)
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createDemoGateway, isMain, printUsage, type RunningExample } from './demo-gateway.js';

const BASE_PATH = '/llm';

/** Starts the Hono app on `port` (0 = any free port) of 127.0.0.1; the gateway is at `/llm/v1`. */
export async function startHonoExample(port = 0): Promise<RunningExample> {
  const demo = await createDemoGateway({ basePath: BASE_PATH });
  const app = new Hono();
  app.get('/', (c) => c.json({ app: 'my app', gateway: `${BASE_PATH}/v1` }));
  // Everything under the base path goes to the gateway, as is.
  app.all(`${BASE_PATH}/*`, (c) => demo.gateway.fetch(c.req.raw));

  // Keep Node's own Request/Response globals (the adapter can swap in lighter ones process-wide).
  const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1', overrideGlobalObjects: false });
  if (!server.listening) await once(server, 'listening');
  const { port: chosen } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${chosen}${BASE_PATH}/v1`,
    key: demo.key,
    close: async () => {
      if ('closeAllConnections' in server) server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await demo.close();
    },
  };
}

if (isMain(import.meta.url)) {
  printUsage('hono', await startHonoExample(Number(process.argv[2] ?? 0)));
}
