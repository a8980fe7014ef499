import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type LazyRequest, lazyRequest } from './lazy-request.js';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/**
 * Sends one request to a server that makes a lazy request of it and runs `check` on it; resolves
 * with what `check` returned (its failure rejects). `send` writes the request (default: `body`, then end).
 */
async function withLazyRequest<T>(
  init: { method?: string; path?: string; headers?: Record<string, string>; body?: string },
  check: (lazy: LazyRequest, req: IncomingMessage) => Promise<T> | T,
  send?: (req: ReturnType<typeof httpRequest>) => void,
): Promise<T> {
  let result!: Promise<T>;
  server = createServer((req, res) => {
    result = Promise.resolve().then(() => check(lazyRequest(req), req));
    void result.then(
      () => res.end('ok'),
      () => res.end('failed'),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const req = httpRequest({
    port,
    host: '127.0.0.1',
    method: init.method ?? 'POST',
    path: init.path ?? '/v1/x?y=1',
  });
  for (const [name, value] of Object.entries(init.headers ?? {})) req.setHeader(name, value);
  req.on('error', () => {});
  req.on('response', (res: IncomingMessage) => res.resume());
  if (send) send(req);
  else req.end(init.body);
  await new Promise((resolve) => server?.once('request', resolve));
  return result;
}

describe('lazyRequest', () => {
  it('is a Request: url from the Host header, method, headers, and its body read once as text', async () => {
    const body = JSON.stringify({ text: 'é'.repeat(50_000) });
    const seen = await withLazyRequest(
      { body, headers: { 'x-one': 'a', 'content-type': 'application/json' } },
      async ({ request }) => {
        const before = request.bodyUsed;
        const text = await request.text();
        return {
          isRequest: request instanceof Request,
          tag: Object.prototype.toString.call(request),
          url: request.url,
          method: request.method,
          header: request.headers.get('x-one'),
          before,
          after: request.bodyUsed,
          text,
          again: await request.text().then(
            () => 'read twice',
            (error: unknown) => (error as Error).name,
          ),
        };
      },
    );
    expect(seen).toMatchObject({ isRequest: true, tag: '[object Request]', method: 'POST', header: 'a' });
    expect(new URL(seen.url).pathname + new URL(seen.url).search).toBe('/v1/x?y=1');
    expect(seen).toMatchObject({ before: false, after: true, text: body, again: 'TypeError' });
  });

  it('reads the body as json, arrayBuffer and bytes alike, byte for byte', async () => {
    const body = '{"a":[1,2,3],"é":"ü"}';
    const expected = new TextEncoder().encode(body);
    for (const read of ['json', 'arrayBuffer', 'bytes'] as const) {
      const value = await withLazyRequest({ body }, ({ request }) => request[read]());
      if (read === 'json') expect(value).toEqual(JSON.parse(body));
      else expect(new Uint8Array(value as ArrayBuffer | Uint8Array)).toEqual(expected);
      await new Promise((resolve) => server?.close(resolve));
    }
  });

  it('a request without a body reads as empty, as often as asked, and has no body', async () => {
    const seen = await withLazyRequest({ method: 'GET' }, async ({ request }) => ({
      first: await request.text(),
      second: await request.text(),
      used: request.bodyUsed,
      body: request.body,
    }));
    expect(seen).toEqual({ first: '', second: '', used: false, body: null });
  });

  it('builds undici’s request for anything else: body, clone(), formData(), inspect', async () => {
    const body = 'a=1&b=%C3%A9';
    const type = { 'content-type': 'application/x-www-form-urlencoded' };
    const clone = await withLazyRequest({ body, headers: type }, async ({ request }) => {
      const copy = request.clone();
      return { copy: await copy.text(), original: await request.text(), isRequest: copy instanceof Request };
    });
    expect(clone).toEqual({ copy: body, original: body, isRequest: true });

    const form = await withLazyRequest({ body, headers: type }, async ({ request }) => {
      const data = await request.formData();
      return { a: data.get('a'), b: data.get('b'), used: request.bodyUsed, shown: inspect(request) };
    });
    expect(form).toMatchObject({ a: '1', b: 'é', used: true });
    expect(form.shown).toContain('Request');

    const streamed = await withLazyRequest({ body }, async ({ request }) => {
      const reader = (request.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      for (let read = await reader.read(); !read.done; read = await reader.read())
        text += new TextDecoder().decode(read.value, { stream: true });
      return { text, used: request.bodyUsed, again: await request.text().catch((e: Error) => e.name) };
    });
    expect(streamed).toEqual({ text: body, used: true, again: 'TypeError' });
  });

  it('after its body was read, undici’s request for it has a used body too', async () => {
    const seen = await withLazyRequest({ body: 'x' }, async ({ request }) => {
      await request.text();
      const clone = (() => {
        try {
          request.clone();
          return 'cloned';
        } catch (error) {
          return (error as Error).name;
        }
      })();
      return { clone, used: request.bodyUsed, blob: await request.blob().catch((e: Error) => e.name) };
    });
    expect(seen).toEqual({ clone: 'TypeError', used: true, blob: 'TypeError' });
  });

  it('aborts its signal, whether the signal was read before the abort or after', async () => {
    const seen = await withLazyRequest({ body: '' }, ({ request, abort }) => {
      const early = request.signal;
      abort(new Error('client left'));
      abort(new Error('a second abort changes nothing'));
      return {
        early: early.aborted,
        reason: (early.reason as Error).message,
        same: request.signal === early,
      };
    });
    expect(seen).toEqual({ early: true, reason: 'client left', same: true });
    const late = await withLazyRequest({ body: '' }, ({ request, abort }) => {
      abort(new Error('client left'));
      return { aborted: request.signal.aborted, reason: (request.signal.reason as Error).message };
    });
    expect(late).toEqual({ aborted: true, reason: 'client left' });
  });

  it('undici’s request, once built, carries the same signal state', async () => {
    const seen = await withLazyRequest({ body: 'x' }, ({ request, abort }) => {
      const copy = request.clone();
      abort(new Error('client left'));
      return { original: request.signal.aborted, copy: copy.signal.aborted };
    });
    expect(seen).toEqual({ original: true, copy: true });
  });

  it('rejects a body read when the client hangs up mid-body', async () => {
    const seen = await withLazyRequest(
      { headers: { 'content-length': '1000' } },
      ({ request }) =>
        request.text().then(
          () => 'read',
          (error: unknown) => (error instanceof Error ? 'rejected' : 'odd'),
        ),
      (req) => {
        req.write('only part of it');
        setTimeout(() => req.destroy(), 50);
      },
    );
    expect(seen).toBe('rejected');
  });

  it('refuses to be used as a method receiver by something that is not one', () => {
    const { request } = (() => {
      const fake = { method: 'GET', url: '/', headers: {}, socket: {} } as unknown as IncomingMessage;
      return lazyRequest(fake);
    })();
    const text = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(request), 'text')
      ?.value as () => unknown;
    expect(() => text.call({})).toThrow(TypeError);
  });
});

describe('lazyRequest, when the client left before the body was read', () => {
  for (const read of ['text', 'body'] as const) {
    it(`rejects a read by ${read} instead of waiting for events that have passed`, async () => {
      const seen = await withLazyRequest(
        { headers: { 'content-length': '1000' } },
        async ({ request }, req) => {
          req.on('error', () => {});
          if (!req.destroyed) await new Promise((resolve) => req.once('close', resolve));
          const reading =
            read === 'text'
              ? request.text()
              : (request.body as ReadableStream<Uint8Array>).getReader().read();
          return reading.then(
            () => 'read',
            () => 'rejected',
          );
        },
        (req) => {
          req.write('part of it');
          setTimeout(() => req.destroy(), 50);
        },
      );
      expect(seen).toBe('rejected');
    });
  }
});
