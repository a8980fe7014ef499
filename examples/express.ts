/**
 * Tollgate inside an Express 5 app, mounted under `/llm`, behind a global `express.json()`.
 *
 *   node --import tsx examples/express.ts [port]      (default port 0: any free port)
 *
 * Two things to know:
 * - `app.use('/llm', handler)` strips `/llm` from `req.url` before the handler runs (it stays in
 *   `req.originalUrl`), and the adapter builds the Web request from `req.url`: so the gateway is
 *   created WITHOUT `basePath` here. (Routed with `app.all('/llm/*splat', …)` instead, the URL keeps
 *   the prefix, and the gateway needs `basePath: '/llm'`.)
 * - A body parser in front reads the request body before Tollgate sees it. The adapter then
 *   rebuilds the body from `req.body`, so it works, but the parser's size limit (100 kB by default
 *   for `express.json()`) applies to chat requests too. Better: mount Tollgate before the parser,
 *   and the body streams straight in under Tollgate's own limit (20 MiB).
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@tollgate/node-server';
import express from 'express';
import { createDemoGateway, isMain, printUsage, type RunningExample } from './demo-gateway.js';

/** Starts the Express app on `port` (0 = any free port) of 127.0.0.1; the gateway is at `/llm/v1`. */
export async function startExpressExample(port = 0): Promise<RunningExample> {
  const demo = await createDemoGateway();
  const app = express();
  // The app's own JSON routes need this; it runs for every request, the gateway's included.
  app.use(express.json());
  app.get('/', (_req, res) => {
    res.json({ app: 'my app', gateway: '/llm/v1' });
  });
  app.post('/echo', (req, res) => {
    res.json({ received: req.body });
  });
  app.use('/llm', toNodeHandler(demo.gateway.fetch));

  const server: Server = app.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const { port: chosen } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${chosen}/llm/v1`,
    key: demo.key,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await demo.close();
    },
  };
}

if (isMain(import.meta.url)) {
  printUsage('express', await startExpressExample(Number(process.argv[2] ?? 0)));
}
