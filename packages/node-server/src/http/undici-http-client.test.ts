import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// The provider and its fixtures live in core; the last test runs them over real sockets.
import { createOpenAIProvider } from '@tollgate/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openAIWireBody } from '../../../core/src/providers/openai/wire-fixtures.test-support.js';
import { createUndiciHttpClient, type UndiciHttpClient } from './undici-http-client.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

let server: Server | undefined;
let client: UndiciHttpClient | undefined;
/** Remote ports of the connections the server accepted, in order. */
let connections: number[] = [];

afterEach(async () => {
  await client?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
  client = undefined;
  connections = [];
});

async function listen(handler: Handler): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (piece: string) => {
      body += piece;
    });
    req.on('end', () => handler(req, res, body));
  });
  server.on('connection', (socket) => connections.push(socket.remotePort ?? -1));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A promise with its resolver, to let the test and the server take turns. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

const decode = (piece: Uint8Array) => new TextDecoder().decode(piece);

describe('createUndiciHttpClient', () => {
  it('sends method, headers and body; returns status, case-insensitive headers and the text', async () => {
    let seen: { method?: string; url?: string; auth?: string; type?: string; body?: string } = {};
    const url = await listen((req, res, body) => {
      seen = {
        method: req.method,
        url: req.url,
        auth: req.headers.authorization,
        type: req.headers['content-type'],
        body,
      };
      res.writeHead(201, [
        ['Content-Type', 'application/json'],
        ['Retry-After', '2'],
        ['X-Multi', 'a'],
        ['X-Multi', 'b'],
      ]);
      res.end('{"ok":true}');
    });
    client = createUndiciHttpClient();
    const response = await client.request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: '{"model":"m"}',
    });
    expect(response.status).toBe(201);
    expect(response.header('retry-after')).toBe('2');
    expect(response.header('Content-Type')).toBe('application/json');
    expect(response.header('x-multi')).toBe('a, b');
    expect(response.header('x-absent')).toBeNull();
    expect(await response.text()).toBe('{"ok":true}');
    expect(seen).toEqual({
      method: 'POST',
      url: '/v1/chat/completions',
      auth: 'Bearer sk-test',
      type: 'application/json',
      body: '{"model":"m"}',
    });
  });

  it('streams the body piece by piece as the server writes it', async () => {
    const firstRead = gate();
    const url = await listen(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      await firstRead.opened;
      res.end('data: two\n\n');
    });
    client = createUndiciHttpClient();
    const response = await client.request(url, { method: 'GET', headers: {} });
    const pieces: string[] = [];
    for await (const piece of response.body()) {
      pieces.push(decode(piece));
      // The server only sends the rest once the first piece got here.
      firstRead.open();
    }
    expect(pieces).toEqual(['data: one\n\n', 'data: two\n\n']);
  });

  it('an abort before the headers rejects the request with the abort', async () => {
    const url = await listen(() => {
      /* never answers */
    });
    client = createUndiciHttpClient();
    const controller = new AbortController();
    const pending = client.request(url, {
      method: 'POST',
      headers: {},
      body: '{}',
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('an abort while reading the body makes the iteration throw', async () => {
    const url = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
    });
    client = createUndiciHttpClient();
    const controller = new AbortController();
    const response = await client.request(url, { method: 'GET', headers: {}, signal: controller.signal });
    const pieces: string[] = [];
    const reading = (async () => {
      for await (const piece of response.body()) {
        pieces.push(decode(piece));
        controller.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
    expect(pieces).toEqual(['data: one\n\n']);
  });

  it('reuses one keep-alive connection for calls read to the end, and after an early stop drained once', async () => {
    const url = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first piece;');
      setTimeout(() => res.end('last piece'), 20);
    });
    client = createUndiciHttpClient({ connections: 1 });
    expect(await (await client.request(url, { method: 'GET', headers: {} })).text()).toBe(
      'first piece;last piece',
    );
    const early = await client.request(url, { method: 'GET', headers: {} });
    // The reader's own release and the caller's discard() drain the body once: each drain arms its
    // own give-up timer (`AbortSignal.timeout`), so one drain, one timer.
    const timers = vi.spyOn(AbortSignal, 'timeout');
    try {
      for await (const _piece of early.body()) break;
      await early.discard();
      expect(timers).toHaveBeenCalledTimes(1);
    } finally {
      timers.mockRestore();
    }
    expect(await (await client.request(url, { method: 'GET', headers: {} })).text()).toBe(
      'first piece;last piece',
    );
    expect(connections).toHaveLength(1);
  });

  it('keeps the connection of a long body released after most of it was read (a stream stopped at [DONE])', async () => {
    const piece = 'x'.repeat(1024);
    const url = await listen(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 100; i++) res.write(piece);
      await new Promise((resolve) => setTimeout(resolve, 5));
      res.end('the end');
    });
    client = createUndiciHttpClient({ connections: 1 });
    for (let call = 0; call < 2; call++) {
      const response = await client.request(url, { method: 'GET', headers: {} });
      let read = 0;
      for await (const bytes of response.body()) {
        read += bytes.byteLength;
        if (read >= 100 * 1024) break;
      }
      await response.discard();
    }
    expect(await (await client.request(url, { method: 'GET', headers: {} })).text()).toHaveLength(
      100 * 1024 + 7,
    );
    expect(connections).toHaveLength(1);
  });

  it('discard() on a body that never ends gives up and closes the connection', async () => {
    const closed = gate();
    const url = await listen((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      req.socket.on('close', closed.open);
    });
    client = createUndiciHttpClient();
    const response = await client.request(url, { method: 'GET', headers: {} });
    const started = Date.now();
    await response.discard();
    await closed.opened;
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('carries the OpenAI provider: a replayed stream arrives whole and the connection is reused', async () => {
    const wire = openAIWireBody('openai-chat-stream-parallel-tool-calls-include-usage.sse');
    const url = await listen(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let at = 0; at < wire.length; at += 700) {
        res.write(wire.subarray(at, at + 700));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      res.end();
    });
    client = createUndiciHttpClient();
    const provider = createOpenAIProvider(client);
    const target = {
      provider: {
        id: 'local',
        format: 'openai' as const,
        baseUrl: url,
        apiKey: 'k',
        headers: {},
        timeoutMs: null,
        streamIdleTimeoutMs: 60_000,
      },
      upstreamModel: 'gpt-4o',
      maxOutputTokens: 1000,
    };
    const request = { model: 'x', messages: [{ role: 'user' as const, content: 'hi' }], stream: true };
    for (let round = 0; round < 2; round++) {
      const stream = await provider.chat!.stream(request, target, { signal: new AbortController().signal });
      let count = 0;
      for await (const _chunk of stream.chunks) count++;
      expect(count).toBe(24);
      expect(stream.usage()).toEqual({
        promptTokens: 149,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        completionTokens: 60,
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(connections).toHaveLength(1);
  });
});
