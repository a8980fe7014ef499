// An Express 5 app that mounts Tollgate under /llm and answers one chat request.
import { once } from 'node:events';
import { toNodeHandler } from '@tollgate/node-server';
import express from 'express';
import { askOnce, createAppGateway, startFakeProvider } from './gateway.mjs';

const provider = await startFakeProvider();
const { gateway, key, close } = await createAppGateway(provider.url);
const app = express();
app.get('/', (_req, res) => res.json({ app: 'mine' }));
// app.use strips /llm before the handler runs, so the gateway needs no basePath.
app.use('/llm', toNodeHandler(gateway.fetch));
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
try {
  await askOnce(`http://127.0.0.1:${server.address().port}/llm/v1`, key, 'express');
} finally {
  server.closeAllConnections();
  server.close();
  await close();
  provider.close();
}
