import type { HttpClient, HttpResponse } from '@tollgate/core';
import { Agent, type Dispatcher, request } from 'undici';

export interface UndiciHttpClientOptions {
  /** Most connections kept per upstream origin; unlimited by default. */
  connections?: number;
  /** How long an idle connection stays in the pool; undici's default (4 s), shortened by a server's `Keep-Alive` hint. */
  keepAliveTimeoutMs?: number;
  /**
   * Longest wait for response headers; 0 (none) by default, because the gateway's own time-to-first-byte
   * deadline aborts the call through its signal, and a long non-streamed generation only sends headers at the end.
   */
  headersTimeoutMs?: number;
  /** Longest silence between two pieces of a body; 5 minutes by default, a net under a stalled upstream. */
  bodyTimeoutMs?: number;
}

export interface UndiciHttpClient extends HttpClient {
  /** Closes the pooled connections once the requests in flight are done. */
  close(): Promise<void>;
}

type Body = Dispatcher.ResponseData['body'];

/** The most of an unread body worth reading to keep its connection, and the longest wait for it. */
const DRAIN_LIMIT_BYTES = 64 * 1024;
const DRAIN_WAIT_MS = 1000;

/**
 * An `HttpClient` on undici's pooled keep-alive connections, far cheaper per upstream call than the
 * global `fetch`. A body read to its end, or released with `discard()`, hands its connection back to
 * the pool; a body left partly read (a stream stopped at `[DONE]`, a consumer that left) is drained
 * briefly so the connection can be reused, and the connection is closed when that takes too long.
 */
export function createUndiciHttpClient(options: UndiciHttpClientOptions = {}): UndiciHttpClient {
  const agent = new Agent({
    connections: options.connections ?? null,
    headersTimeout: options.headersTimeoutMs ?? 0,
    bodyTimeout: options.bodyTimeoutMs ?? 300_000,
    ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeoutMs }),
  });

  return {
    async request(url, init): Promise<HttpResponse> {
      const response = await request(url, {
        dispatcher: agent,
        method: init.method,
        headers: init.headers,
        body: init.body,
        signal: init.signal,
      });
      const { body, headers } = response;
      const read: BodyState = { bytes: 0, released: null };
      return {
        status: response.statusCode,
        header(name) {
          const value = headers[name.toLowerCase()];
          if (value === undefined) return null;
          return Array.isArray(value) ? value.join(', ') : value;
        },
        text: () => body.text(),
        body: () => iterate(body, read),
        discard: () => release(body, read),
      };
    },
    close: () => agent.close(),
  };
}

/** What one response's body has been through: the bytes read from it, and its release once begun. */
interface BodyState {
  bytes: number;
  released: Promise<void> | null;
}

/**
 * The body's pieces as they arrive, counted in `read.bytes`; stopping early releases the connection
 * instead of destroying it.
 */
async function* iterate(body: Body, read: BodyState): AsyncGenerator<Uint8Array, void, undefined> {
  let ended = false;
  try {
    for await (const piece of body.iterator({ destroyOnReturn: false })) {
      read.bytes += (piece as Uint8Array).byteLength;
      yield piece as Uint8Array;
    }
    ended = true;
  } finally {
    if (!ended) void release(body, read);
  }
}

/**
 * Reads what little is left so the connection returns to the pool; closes it when there is more.
 * Once per body: a reader that stops early releases it, and the caller's `discard()` after that
 * (the `HttpClient` contract asks for one) joins the same drain instead of starting another.
 * undici's `dump` limit counts every byte the body received, so it is set past the bytes already
 * read: else a stream longer than the limit, released at its `[DONE]` before its end was read,
 * would close its connection every time.
 */
function release(body: Body, read: BodyState): Promise<void> {
  read.released ??= drain(body, read.bytes);
  return read.released;
}

function drain(body: Body, readBytes: number): Promise<void> {
  if (body.readableEnded || body.destroyed) return Promise.resolve();
  const limit = readBytes + DRAIN_LIMIT_BYTES;
  return body.dump({ limit, signal: AbortSignal.timeout(DRAIN_WAIT_MS) }).then(
    () => {},
    () => {},
  );
}
