import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';

// The floor for any Node gateway: node:http in, undici on a pooled keep-alive Agent out, the body piped.
// `bare-proxy.ts <upstream> [processes]`: with 2 or more, node:cluster's workers share the port, which
// is how much a second process of stateless work can add on this machine (the scale-out control).
const upstream = process.argv[2] as string;
const processes = Number(process.argv[3] ?? 1);
if (cluster.isPrimary && processes > 1) {
  // The URL is printed once every worker listens, so that no connection of the first cell
  // (keep-alive: they stay where they land) finds only some of them.
  let listening = 0;
  cluster.on('listening', (_worker, address) => {
    if (++listening === processes) announce(address.port);
  });
  for (let i = 0; i < processes; i++) cluster.fork();
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
  });
} else {
  serve();
}

/** The line the bench waits for: where the proxy listens. */
function announce(port: number): void {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }));
}

function serve(): void {
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
    if (address && typeof address === 'object' && cluster.isPrimary) announce(address.port);
  });
  // A cluster worker also lets go of its channel to the primary, or it would never exit.
  process.on('SIGTERM', () => server.close(() => agent.close().then(() => cluster.worker?.disconnect())));
}
