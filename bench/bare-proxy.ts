import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';

// The floor for any Node gateway: node:http in, undici on a pooled keep-alive Agent out, the body piped.
const upstream = process.argv[2] as string;
const agent = new Agent({ keepAliveTimeout: 60_000 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'expect', 'host', 'te']);
const pick = (headers: Record<string, string | string[] | undefined>) =>
  Object.fromEntries(Object.entries(headers).filter(([k, v]) => v !== undefined && !HOP.has(k)));

const server = createServer(async (req, res) => {
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  try {
    const up = await request(`${upstream}${req.url}`, {
      dispatcher: agent,
      method: req.method as 'POST',
      headers: pick(req.headers),
      body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
      signal: abort.signal,
    });
    res.writeHead(up.statusCode, pick(up.headers));
    await pipeline(up.body, res);
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object')
    console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }));
});
process.on('SIGTERM', () => server.close(() => agent.close()));
