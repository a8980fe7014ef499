import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startServer } from './server.js';

const encoder = new TextEncoder();

/** A gateway stand-in whose responses are streams the test ends by hand. */
function streamingGateway() {
  const controllers: ReadableStreamDefaultController<Uint8Array>[] = [];
  let started!: () => void;
  const firstStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  return {
    gateway: {
      fetch: async () => {
        const stream = new ReadableStream<Uint8Array>({
          start: (controller) => {
            controllers.push(controller);
            controller.enqueue(encoder.encode('data: start\n\n'));
            started();
          },
        });
        return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
      },
    },
    firstStarted,
    endAll: () => {
      for (const c of controllers) {
        c.enqueue(encoder.encode('data: [DONE]\n\n'));
        c.close();
      }
    },
  };
}

function readAll(res: IncomingMessage): Promise<{ text: string; complete: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => (text += chunk));
    res.on('end', () => resolve({ text, complete: true }));
    res.on('error', () => resolve({ text, complete: false }));
    res.on('aborted', () => resolve({ text, complete: false }));
  });
}

describe('startServer', () => {
  it('close() waits for an in-flight stream to finish, then closes the storage', async () => {
    const { gateway, firstStarted, endAll } = streamingGateway();
    const events: string[] = [];
    const storage = { close: async () => void events.push('storage closed') };
    const server = await startServer({ gateway, storage, port: 0, host: '127.0.0.1' });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const req = httpRequest(`${server.url}/v1/chat/completions`);
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    const body = readAll(res);
    await firstStarted;

    const closed = server.close().then(() => events.push('server closed'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events).toEqual([]);

    endAll();
    await closed;
    expect(events).toEqual(['storage closed', 'server closed']);
    expect(await body).toEqual({ text: 'data: start\n\ndata: [DONE]\n\n', complete: true });
  });

  it('close() cuts a stream that outlives the grace period', async () => {
    const { gateway, firstStarted } = streamingGateway();
    const server = await startServer({ gateway, port: 0, host: '127.0.0.1', graceMs: 100 });
    const req = httpRequest(server.url);
    req.on('error', () => {});
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    const body = readAll(res);
    await firstStarted;
    await server.close();
    expect((await body).complete).toBe(false);
  });

  it('close() resolves at once with no request in flight, and stops accepting connections', async () => {
    const server = await startServer({
      gateway: { fetch: async () => new Response('ok') },
      port: 0,
      host: '127.0.0.1',
    });
    expect(await (await fetch(server.url)).text()).toBe('ok');
    await server.close();
    await server.close();
    await expect(fetch(server.url)).rejects.toThrow();
  });

  it('hands the gateway lazily built requests unless told not to; those can be passed to new Request()', async () => {
    const kinds: string[] = [];
    const gateway = {
      fetch: async (request: Request) => {
        const lazy = Object.getPrototypeOf(request) !== Request.prototype;
        kinds.push(lazy ? 'lazy' : 'undici');
        const cloned = await request.clone().text();
        // What a handler that passes its request on does; only undici's own request survives it.
        const passedOn = lazy ? null : await new Request(request).text();
        return new Response(`${cloned} ${passedOn}`);
      },
    };
    for (const lazyRequests of [undefined, false]) {
      const server = await startServer({ gateway, port: 0, host: '127.0.0.1', lazyRequests });
      const answer = await fetch(server.url, { method: 'POST', body: 'hello' });
      kinds.push(await answer.text());
      await server.close();
    }
    expect(kinds).toEqual(['lazy', 'hello null', 'undici', 'hello hello']);
  });
});
