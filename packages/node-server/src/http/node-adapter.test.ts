import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type FetchHandler, toNodeHandler } from './node-adapter.js';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function listen(handler: FetchHandler): Promise<string> {
  server = createServer(toNodeHandler(handler));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A stream the test pushes chunks into by hand, so it can check what arrived before the end. */
function manualStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let onCancel!: (reason: unknown) => void;
  const cancelled = new Promise<unknown>((resolve) => {
    onCancel = resolve;
  });
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: (reason) => onCancel(reason ?? 'cancelled'),
  });
  const encoder = new TextEncoder();
  return {
    stream,
    push: (text: string) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
    cancelled,
  };
}

/** Resolves with the next chunk of a node response body. */
function nextChunk(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => res.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8'))));
}

describe('toNodeHandler', () => {
  it('round-trips status, headers (each Set-Cookie on its own line) and body', async () => {
    const url = await listen((request) => {
      const headers = new Headers({
        'content-type': 'application/json',
        'x-echo-path': new URL(request.url).pathname,
      });
      headers.append('set-cookie', 'a=1; Path=/');
      headers.append('set-cookie', 'b=2; Path=/');
      return new Response(JSON.stringify({ method: request.method, host: request.headers.get('host') }), {
        status: 201,
        headers,
      });
    });
    const response = await fetch(`${url}/v1/thing?x=1`);
    expect(response.status).toBe(201);
    expect(response.headers.get('x-echo-path')).toBe('/v1/thing');
    expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(await response.json()).toEqual({ method: 'GET', host: new URL(url).host });
  });

  it('delivers a POST body to the handler intact', async () => {
    const body = JSON.stringify({ text: 'é'.repeat(100_000), n: 42 });
    const url = await listen(async (request) => new Response(await request.text(), { status: 200 }));
    const response = await fetch(`${url}/echo`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.text()).toBe(body);
  });

  it('streams a response chunk by chunk, before the stream ends', async () => {
    const upstream = manualStream();
    const url = await listen(
      () => new Response(upstream.stream, { headers: { 'content-type': 'text/event-stream' } }),
    );
    const req = httpRequest(`${url}/stream`);
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    expect(res.headers['content-type']).toBe('text/event-stream');

    const first = nextChunk(res);
    upstream.push('data: one\n\n');
    expect(await first).toBe('data: one\n\n');

    const second = nextChunk(res);
    upstream.push('data: two\n\n');
    expect(await second).toBe('data: two\n\n');

    const ended = once(res, 'end');
    res.resume();
    upstream.end();
    await ended;
  });

  it('aborts request.signal and cancels the body when the client disconnects mid-stream', async () => {
    const upstream = manualStream();
    let aborted!: Promise<void>;
    const url = await listen((request) => {
      aborted = new Promise((resolve) => request.signal.addEventListener('abort', () => resolve()));
      return new Response(upstream.stream, { headers: { 'content-type': 'text/event-stream' } });
    });
    const req = httpRequest(`${url}/stream`);
    req.on('error', () => {});
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    const first = nextChunk(res);
    upstream.push('data: one\n\n');
    await first;

    req.destroy();
    await aborted;
    await expect(upstream.cancelled).resolves.toBeDefined();
  });

  it('stops pulling the body stream while the client does not read (backpressure)', async () => {
    let pulled = 0;
    let cancelled = false;
    const chunk = new Uint8Array(64 * 1024);
    const url = await listen(
      () =>
        new Response(
          new ReadableStream<Uint8Array>(
            {
              pull: (controller) => {
                pulled += 1;
                controller.enqueue(chunk);
              },
              cancel: () => {
                cancelled = true;
              },
            },
            { highWaterMark: 0 },
          ),
        ),
    );
    const req = httpRequest(`${url}/endless`);
    req.on('error', () => {});
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.pause();
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await sleep(300);
    const settled = pulled;
    await sleep(300);
    expect(pulled).toBe(settled);
    expect(settled * chunk.byteLength).toBeLessThan(64 * 1024 * 1024);
    req.destroy();
    await expect.poll(() => cancelled).toBe(true);
  });

  it('answers a generic 500 envelope when the handler throws', async () => {
    const url = await listen(() => {
      throw new Error('secret internals');
    });
    const response = await fetch(url);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain('secret internals');
    expect(JSON.parse(text).error).toMatchObject({ type: 'api_error', code: 'internal_error' });
  });

  it('keeps a keep-alive connection usable when the handler ignores the request body', async () => {
    const url = await listen((request) => new Response(`ok ${request.method}`));
    const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 });
    const post = (body: string) =>
      new Promise<string>((resolve, reject) => {
        const req = httpRequest(`${url}/x`, { method: 'POST', agent }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end(body);
      });
    expect(await post('x'.repeat(200_000))).toBe('ok POST');
    expect(await post('second')).toBe('ok POST');
    agent.destroy();
  });
});
