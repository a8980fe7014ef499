import { createServer } from 'node:http';
import { jsonResponse } from '@tollgate/core';
import { createUndiciHttpClient, toNodeHandler } from '@tollgate/node-server';

/*
 * The floor of a gateway whose core speaks Web standards, as Tollgate's does: Tollgate's own Node
 * adapter (node:http → Web `Request`, lazily built as `tollgate serve` builds it; Web `Response` →
 * node:http) and its own undici client upstream, the request body read as JSON and sent on, a JSON
 * answer read and written back (a gateway must read the usage), a stream passed through chunk by
 * chunk. No authentication, routing, metering or storage: what Tollgate costs above this is its own
 * work, and what this costs above the bare proxy is the price of Web `Request`/`Response` on Node.
 * The JSON answer is built as Tollgate builds its own (`jsonResponse`: the Node adapter writes its
 * bytes, and no body stream is made for it).
 */

const upstream = process.argv[2] as string;
const http = createUndiciHttpClient();

const handler = toNodeHandler(
  async (request) => {
    const body = JSON.stringify(await request.json());
    const answer = await http.request(`${upstream}${new URL(request.url).pathname}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: request.headers.get('authorization') ?? '',
      },
      body,
      signal: request.signal,
    });
    const type = answer.header('content-type') ?? 'application/json';
    if (type.startsWith('text/event-stream')) {
      const chunks = answer.body()[Symbol.asyncIterator]();
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await chunks.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        async cancel() {
          await chunks.return?.();
        },
      });
      return new Response(stream, { status: answer.status, headers: { 'content-type': type } });
    }
    return jsonResponse(JSON.parse(await answer.text()), answer.status);
  },
  { lazyRequests: true },
);

const server = createServer(handler);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object')
    console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }));
});
process.on('SIGTERM', () => server.close(() => void http.close()));
