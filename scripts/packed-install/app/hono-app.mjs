// A Hono app (on @hono/node-server) that mounts Tollgate under /llm and answers one chat request.
import { once } from 'node:events';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { askOnce, createAppGateway, startFakeProvider } from './gateway.mjs';

const provider = await startFakeProvider();
// Hono hands over the request with /llm still in its URL: the gateway strips it.
const { gateway, key, close } = await createAppGateway(provider.url, { basePath: '/llm' });
const app = new Hono();
app.get('/', (c) => c.json({ app: 'mine' }));
app.all('/llm/*', (c) => gateway.fetch(c.req.raw));
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', overrideGlobalObjects: false });
if (!server.listening) await once(server, 'listening');
try {
  await askOnce(`http://127.0.0.1:${server.address().port}/llm/v1`, key, 'hono');
} finally {
  server.closeAllConnections();
  server.close();
  await close();
  provider.close();
}
