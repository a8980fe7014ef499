import { describe, expect, it } from 'vitest';
import type { CatalogueProvider } from '../../catalogue/catalogue.js';
import type { ChatRequest } from '../chat-types.js';
import type { HttpClient, HttpRequestInit, HttpResponse } from '../http-client.js';
import type { UpstreamTarget } from '../provider-adapter.js';
import { UpstreamError } from '../upstream-error.js';
import { createAnthropicProvider } from './anthropic-provider.js';
import { accumulate, anthropicWireBody, collect, readWireFixture } from './wire-fixtures.test-support.js';

const NOW = Date.parse('2025-06-15T12:00:00Z');

const provider: CatalogueProvider = {
  id: 'anthropic',
  format: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  apiKey: 'sk-ant-test',
  headers: { 'Anthropic-Beta': 'extended-cache-ttl-2025-04-11' },
  timeoutMs: null,
  streamIdleTimeoutMs: 60_000,
};
const target: UpstreamTarget = {
  provider,
  upstreamModel: 'claude-sonnet-4-20250514',
  maxOutputTokens: 64000,
};
const request: ChatRequest = {
  model: 'anthropic/claude-sonnet-4',
  messages: [{ role: 'user', content: 'Hi' }],
};

interface FakeResponse {
  status: number;
  body?: string;
  /** The body in pieces; an Error piece makes reading fail there. */
  pieces?: (string | Error)[];
  headers?: Record<string, string>;
}

/** An HttpClient that records calls and answers from a script; no network. */
function fakeHttp(answer: FakeResponse | ((init: HttpRequestInit) => Promise<FakeResponse>)) {
  const calls: { url: string; init: HttpRequestInit }[] = [];
  const state = { discarded: 0 };
  const client: HttpClient = {
    async request(url, init) {
      calls.push({ url, init });
      const fake = typeof answer === 'function' ? await answer(init) : answer;
      const pieces = fake.pieces ?? [fake.body ?? ''];
      const headers = new Map(Object.entries(fake.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      const response: HttpResponse = {
        status: fake.status,
        header: (name) => headers.get(name.toLowerCase()) ?? null,
        text: async () => pieces.join(''),
        async *body() {
          for (const piece of pieces) {
            if (piece instanceof Error) throw piece;
            yield new TextEncoder().encode(piece);
          }
        },
        discard: async () => {
          state.discarded++;
        },
      };
      return response;
    },
  };
  return { client, calls, state };
}

const signal = () => new AbortController().signal;

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('createAnthropicProvider - the request', () => {
  it('POSTs the converted body to <baseUrl>/messages with the Anthropic headers and the signal', async () => {
    const http = fakeHttp({ status: 200, body: readWireFixture('anthropic-message-tool-use.json') });
    const abort = new AbortController();
    await createAnthropicProvider(http.client, { now: () => NOW }).chat.complete(request, target, {
      signal: abort.signal,
    });

    expect(http.calls).toHaveLength(1);
    const { url, init } = http.calls[0]!;
    expect(url).toBe('https://api.anthropic.com/v1/messages');
    expect(init.method).toBe('POST');
    expect(init.signal).toBe(abort.signal);
    expect(init.headers).toEqual({
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'sk-ant-test',
      'anthropic-beta': 'extended-cache-ttl-2025-04-11',
    });
    expect(JSON.parse(init.body!)).toEqual({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 64000,
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });

  it('sends stream: true from stream(), even when the request said false', async () => {
    const http = fakeHttp({ status: 200, body: anthropicWireBody('anthropic-stream-cache-read.chunks.txt') });
    const stream = await createAnthropicProvider(http.client).chat.stream(
      { ...request, stream: false },
      target,
      {
        signal: signal(),
      },
    );
    await collect(stream.chunks);
    expect(JSON.parse(http.calls[0]!.init.body!).stream).toBe(true);
  });

  it('sends no x-api-key when the provider has no key', async () => {
    const http = fakeHttp({ status: 200, body: readWireFixture('anthropic-message-tool-use.json') });
    const keyless = { ...target, provider: { ...provider, apiKey: null, headers: {} } };
    await createAnthropicProvider(http.client).chat.complete(request, keyless, { signal: signal() });
    expect(http.calls[0]!.init.headers).toEqual({
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
    });
  });
});

describe('createAnthropicProvider - answers', () => {
  it('complete() converts the response, with created from the injected clock', async () => {
    const http = fakeHttp({
      status: 200,
      body: readWireFixture('anthropic-message-text-and-tool-use-no-args.json'),
    });
    const result = await createAnthropicProvider(http.client, { now: () => NOW }).chat.complete(
      request,
      target,
      {
        signal: signal(),
      },
    );
    expect(result.completion.created).toBe(NOW / 1000);
    expect(result.completion.choices[0]!.message.tool_calls).toEqual([
      {
        id: 'toolu_01LRmxn9vGM1d2DZSDBowdZ1',
        type: 'function',
        function: { name: 'updateIssueList', arguments: '{}' },
      },
    ]);
    expect(result.usage).toEqual({
      promptTokens: 602,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      completionTokens: 93,
    });
  });

  it('stream() yields the converted chunks and the usage', async () => {
    const body = anthropicWireBody('anthropic-stream-cache-write.chunks.txt');
    const http = fakeHttp({ status: 200, pieces: [body.slice(0, 333), body.slice(333)] });
    const stream = await createAnthropicProvider(http.client, { now: () => NOW }).chat.stream(
      request,
      target,
      {
        signal: signal(),
      },
    );
    const chunks = await collect(stream.chunks);
    expect(accumulate(chunks)).toEqual({ content: 'OK', toolCalls: [], finishReason: 'length' });
    expect(chunks[0]!.created).toBe(NOW / 1000);
    expect(stream.usage()).toEqual({
      promptTokens: 18642,
      cachedTokens: 0,
      cacheWriteTokens: 18639,
      completionTokens: 1,
    });
  });
});

describe('createAnthropicProvider - failures', () => {
  const rateLimited = JSON.stringify({
    type: 'error',
    error: {
      type: 'rate_limit_error',
      message: 'Number of request tokens has exceeded your per-minute rate limit',
    },
  });

  it.each([
    [
      '400 fixture → the provider message and status',
      { status: 400, body: readWireFixture('anthropic-error-400-invalid-request.json') },
      {
        kind: 'http',
        status: 400,
        retryAfterMs: null,
        message:
          'messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: srvtoolu_issue_17366_invalid. ' +
          'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
      },
    ],
    [
      '429 with retry-after: 3 → retryAfterMs 3000',
      { status: 429, body: rateLimited, headers: { 'Retry-After': '3' } },
      {
        kind: 'http',
        status: 429,
        retryAfterMs: 3000,
        message: 'Number of request tokens has exceeded your per-minute rate limit',
      },
    ],
    [
      '529 with an HTTP-date retry-after → milliseconds from the injected clock',
      {
        status: 529,
        body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        headers: { 'retry-after': 'Sun, 15 Jun 2025 12:00:10 GMT' },
      },
      { kind: 'http', status: 529, retryAfterMs: 10_000, message: 'Overloaded' },
    ],
    [
      '502 with an HTML page → a generic message, the page not echoed',
      { status: 502, body: '<html><body>Bad Gateway</body></html>' },
      { kind: 'http', status: 502, retryAfterMs: null, message: 'anthropic answered HTTP 502' },
    ],
  ])('%s', async (_name, answer, expected) => {
    for (const call of ['complete', 'stream'] as const) {
      const http = fakeHttp(answer);
      const error = await failure(
        createAnthropicProvider(http.client, { now: () => NOW }).chat[call](request, target, {
          signal: signal(),
        }),
      );
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject(expected);
    }
  });

  it.each([
    ['a body that is not JSON', '{"id":'],
    ['JSON that is not a Messages response', '{"id":"msg_1","content":"nope"}'],
  ])('complete() turns a 2xx with %s into UpstreamError(http, 502)', async (_name, body) => {
    const http = fakeHttp({ status: 200, body });
    const error = await failure(
      createAnthropicProvider(http.client).chat.complete(request, target, { signal: signal() }),
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'http', status: 502 });
  });

  it('turns a failing HTTP client into UpstreamError(network), with the cause', async () => {
    const http = fakeHttp(async () => {
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:443') });
    });
    for (const call of ['complete', 'stream'] as const) {
      const error = await failure(
        createAnthropicProvider(http.client).chat[call](request, target, { signal: signal() }),
      );
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({
        kind: 'network',
        status: null,
        message: 'anthropic: fetch failed: connect ECONNREFUSED 127.0.0.1:443',
      });
    }
  });

  it('rethrows the abort as is when the signal aborted', async () => {
    const abort = new AbortController();
    const abortError = new DOMException('This operation was aborted', 'AbortError');
    const http = fakeHttp(async () => {
      abort.abort();
      throw abortError;
    });
    const error = await failure(
      createAnthropicProvider(http.client).chat.complete(request, target, { signal: abort.signal }),
    );
    expect(error).toBe(abortError);
  });

  it('a connection that breaks mid-stream → UpstreamError(network) after the chunks already read', async () => {
    const body = anthropicWireBody('anthropic-stream-text-then-tool-use.sse');
    const cut = body.indexOf('event: content_block_start', body.indexOf('content_block_stop'));
    const http = fakeHttp({ status: 200, pieces: [body.slice(0, cut), new Error('socket hang up')] });
    const stream = await createAnthropicProvider(http.client).chat.stream(request, target, {
      signal: signal(),
    });
    const seen: unknown[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of stream.chunks) seen.push(chunk.choices[0]!.delta);
      })(),
    );
    expect(seen).toEqual([
      { role: 'assistant', content: '' },
      { content: 'I' },
      { content: "'ll check the current weather in Paris for you." },
    ]);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'network', message: 'anthropic: the stream broke (socket hang up)' });
    expect(stream.usage()).toMatchObject({ promptTokens: 377 });
    expect(http.state.discarded).toBe(1);
  });

  it('an error event mid-stream → UpstreamError(network) with Anthropic message; the connection is released', async () => {
    const body =
      anthropicWireBody('anthropic-stream-cache-read.chunks.txt').split('event: content_block_stop')[0] +
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const http = fakeHttp({
      status: 200,
      pieces: [...bytesToPieces(body), 'event: ping\ndata: {"type":"ping"}\n\n'],
    });
    const stream = await createAnthropicProvider(http.client).chat.stream(request, target, {
      signal: signal(),
    });
    const error = await failure(collect(stream.chunks));
    expect(error).toMatchObject({ kind: 'network', message: 'anthropic: Overloaded' });
    expect(http.state.discarded).toBe(1);
  });

  it('releases the connection when the reader stops early', async () => {
    const http = fakeHttp({
      status: 200,
      pieces: bytesToPieces(anthropicWireBody('anthropic-stream-text-then-tool-use.sse')),
    });
    const stream = await createAnthropicProvider(http.client).chat.stream(request, target, {
      signal: signal(),
    });
    for await (const _chunk of stream.chunks) break;
    expect(http.state.discarded).toBe(1);
  });
});

/** A body in 64-byte pieces, as a socket would deliver it. */
function bytesToPieces(body: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < body.length; i += 64) pieces.push(body.slice(i, i + 64));
  return pieces;
}
