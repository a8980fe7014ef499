import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { jsonResponse } from '@tollgate/core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bufferedJsonResponse } from './buffered-json-response.js';
import { type FetchHandler, toNodeHandler } from './node-adapter.js';

let server: Server | undefined;
/** Which request objects the adapter hands over: every test runs with both. */
let lazyRequests = false;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function listen(
  handler: FetchHandler,
  before?: (req: IncomingMessage) => Promise<void>,
): Promise<string> {
  const node = toNodeHandler(handler, { lazyRequests });
  server = createServer(before ? (req, res) => void before(req).then(() => node(req, res)) : node);
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

describe.each([false, true])('toNodeHandler (lazyRequests: %s)', (lazy) => {
  beforeAll(() => {
    lazyRequests = lazy;
  });

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

  it("writes the gateway's JSON answer from the bytes it was built from, without reading its stream", async () => {
    const built: Response[] = [];
    const url = await listen(() => {
      // As the gateway `serve` builds makes it (`createGateway({ jsonResponse })`).
      const response = jsonResponse(
        { text: 'é'.repeat(1_000) },
        201,
        { 'x-first': '1' },
        bufferedJsonResponse,
      );
      response.headers.set('x-later', '2');
      built.push(response);
      return response;
    });
    const response = await fetch(`${url}/v1/answer`);
    const text = await response.text();

    expect(response.status).toBe(201);
    expect(JSON.parse(text)).toEqual({ text: 'é'.repeat(1_000) });
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(response.headers.get('x-first')).toBe('1');
    expect(response.headers.get('x-later')).toBe('2');
    expect(built[0]?.bodyUsed).toBe(false);

    const head = await fetch(`${url}/v1/answer`, { method: 'HEAD' });
    expect(head.status).toBe(201);
    expect(await head.text()).toBe('');
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

  it('writes the first chunk at once, then the chunks a stream yields in one turn as one HTTP chunk', async () => {
    const url = await listen(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start: (controller) => {
              const encoder = new TextEncoder();
              for (let i = 0; i < 100; i++) controller.enqueue(encoder.encode(`data: ${i}\n\n`));
              controller.close();
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
    );
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.end('GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let raw = '';
    for await (const data of socket) raw += (data as Buffer).toString('latin1');
    const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
    // Chunked framing: `<hex size>\r\n<data>\r\n`, ending with a zero-size chunk.
    const sizes: number[] = [];
    for (let at = 0; at < body.length; ) {
      const lineEnd = body.indexOf('\r\n', at);
      const size = Number.parseInt(body.slice(at, lineEnd), 16);
      sizes.push(size);
      at = lineEnd + 2 + size + 2;
      if (size === 0) break;
    }
    const rest = Array.from({ length: 99 }, (_, i) => `data: ${i + 1}\n\n`).join('');
    expect(sizes).toEqual(['data: 0\n\n'.length, rest.length, 0]);
  });

  it.each([
    ['64 KiB', 64 * 1024],
    ['100 bytes', 100],
  ])(
    'stops pulling the body stream while the client does not read (backpressure, chunks of %s)',
    async (_, size) => {
      let pulled = 0;
      let cancelled = false;
      const chunk = new Uint8Array(size);
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
    },
  );

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

  describe('a body middleware in front already read (express.json() and friends)', () => {
    /** Reads the whole body the way a body parser does, then leaves `parse(text)` in `req.body` (unless undefined). */
    const bodyParser =
      (parse: (text: string) => unknown) =>
      async (req: IncomingMessage): Promise<void> => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const body = parse(Buffer.concat(chunks).toString('utf8'));
        if (body !== undefined) Object.assign(req, { body });
      };
    /** Echoes what the handler received: headers that describe the body, and the body. */
    const echo: FetchHandler = async (request) =>
      Response.json({
        type: request.headers.get('content-type'),
        length: request.headers.get('content-length'),
        encoding: request.headers.get('content-encoding'),
        hasBody: request.body !== null,
        text: await request.text(),
      });
    const post = (url: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
        signal: AbortSignal.timeout(5000),
      });

    it('rebuilds a JSON body from a parsed object in req.body', async () => {
      const url = await listen(echo, bodyParser(JSON.parse));
      const response = await post(url, JSON.stringify({ model: 'm', text: 'é' }), {
        'content-type': 'application/json; charset=utf-8',
      });
      const seen = await response.json();
      expect(seen).toMatchObject({ type: 'application/json', encoding: null, hasBody: true });
      expect(JSON.parse(seen.text)).toEqual({ model: 'm', text: 'é' });
      expect(Number(seen.length)).toBe(Buffer.byteLength(seen.text));
    });

    it.each([
      ['string', (raw: string) => raw],
      ['Buffer', (raw: string) => Buffer.from(raw)],
    ])('passes a %s in req.body on as it is', async (_kind, parse) => {
      const text = '{"model":"m", "n": 1}';
      const url = await listen(echo, bodyParser(parse));
      const seen = await (await post(url, text)).json();
      expect(seen).toMatchObject({ text, type: 'application/json', length: String(text.length) });
    });

    it('answers 400 invalid_request, not a hang, when the body was read and nothing is left', async () => {
      let called = false;
      const url = await listen(
        () => {
          called = true;
          return new Response('unreachable');
        },
        bodyParser(() => undefined),
      );
      const response = await post(url, '{"model":"m"}');
      expect(response.status).toBe(400);
      expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
      const { error } = await response.json();
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
      expect(error.message).toContain('body parser');
      expect(error.message).toContain('Mount Tollgate before');
      expect(called).toBe(false);
    });

    it('hands over no body when the read-out request had none', async () => {
      const url = await listen(
        echo,
        bodyParser(() => undefined),
      );
      const seen = await (await post(url, '')).json();
      expect(seen).toMatchObject({ hasBody: false, text: '' });
    });

    it('streams the body when req.body is set but the stream was never read', async () => {
      const body = JSON.stringify({ model: 'm' });
      const url = await listen(echo, async (req) => {
        Object.assign(req, { body: {} });
      });
      expect(await (await post(url, body)).json()).toMatchObject({ text: body, hasBody: true });
    });
  });
});
