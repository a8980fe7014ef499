import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { writeResponse } from './write-response.js';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function serve(respond: (res: ServerResponse) => Response): Promise<string> {
  server = createServer((_req, res) => void writeResponse(respond(res), res, 'GET'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('writeResponse', () => {
  it("hands a stream's first piece to the socket before the stream's next pull of the same turn", async () => {
    // node:http corks the socket on a write until the next tick: unless uncorked, the first piece
    // (the first token) would wait for every pull the stream makes in this turn.
    let corkedAtSecondPull: number | undefined;
    let pulls = 0;
    const url = await serve(
      (res) =>
        new Response(
          new ReadableStream<Uint8Array>(
            {
              pull(controller) {
                const pull = pulls++;
                if (pull === 1) corkedAtSecondPull = res.socket?.writableCorked;
                if (pull === 3) controller.close();
                else controller.enqueue(new TextEncoder().encode(`data: ${pull}\n\n`));
              },
            },
            { highWaterMark: 0 },
          ),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
    );
    const response = await new Promise<IncomingMessage>((resolve) => get(url, resolve));
    let body = '';
    for await (const piece of response) body += piece;
    expect(body).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
    expect(corkedAtSecondPull).toBe(0);
  });
});
