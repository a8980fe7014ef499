import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../upstream-error.js';
import { bytes, call, fakeHttp, rejection, request, target } from './fake-http-client.test-support.js';
import { createOpenAIProvider } from './openai-provider.js';
import { collect, openAIWireBody, randomSplit, seededRandom } from './wire-fixtures.test-support.js';

describe('createOpenAIProvider - stream', () => {
  const parallel = 'openai-chat-stream-parallel-tool-calls-include-usage.sse';

  it('sends stream: true with include_usage, and converts the recorded stream', async () => {
    const wire = openAIWireBody(parallel);
    const fake = fakeHttp({ status: 200, pieces: randomSplit(wire, seededRandom(3), 50) });
    const stream = await createOpenAIProvider(fake.http).chat.stream(
      { ...request, stream: true },
      target,
      call(),
    );
    expect(JSON.parse(fake.calls[0]?.init.body ?? '')).toEqual({
      model: 'gpt-4o-mini-2024-07-18',
      messages: [{ role: 'user', content: 'Say ok' }],
      seed: 7,
      max_tokens: 16384,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(stream.usage()).toBeNull();
    const chunks = await collect(stream.chunks);
    expect(chunks).toHaveLength(24);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(stream.usage()).toEqual({
      promptTokens: 149,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      completionTokens: 60,
    });
    await Promise.resolve();
    expect(fake.discards()).toBe(1);
  });

  it('rejects with UpstreamError(http) on a non-2xx status, before any chunk', async () => {
    const fake = fakeHttp({
      status: 429,
      headers: { 'retry-after': '1.5' },
      pieces: [bytes('{"error":{"message":"Rate limit reached","type":"requests"}}')],
    });
    const error = await rejection(createOpenAIProvider(fake.http).chat.stream(request, target, call()));
    expect(error).toMatchObject({
      kind: 'http',
      status: 429,
      retryAfterMs: 1500,
      message: 'Rate limit reached',
    });
  });

  it('a connection that breaks while iterating throws UpstreamError(network) after the chunks before it', async () => {
    const wire = new TextDecoder().decode(openAIWireBody(parallel));
    const cut = wire.indexOf('data: ', 1000);
    const fake = fakeHttp({
      status: 200,
      pieces: [bytes(wire.slice(0, cut)), new Error('read ECONNRESET')],
    });
    const stream = await createOpenAIProvider(fake.http).chat.stream(request, target, call());
    const seen: unknown[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of stream.chunks) seen.push(chunk);
      })(),
    );
    expect(seen.length).toBeGreaterThan(0);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      kind: 'network',
      message: 'the upstream stream broke off: read ECONNRESET',
    });
    expect(stream.usage()).toBeNull();
    await Promise.resolve();
    expect(fake.discards()).toBe(1);
  });

  it('an abort while iterating is rethrown as it is', async () => {
    const controller = new AbortController();
    const abort = new DOMException('The operation was aborted.', 'AbortError');
    const fake = fakeHttp({ status: 200, pieces: [openAIWireBody(parallel).subarray(0, 600), abort] });
    const stream = await createOpenAIProvider(fake.http).chat.stream(request, target, {
      signal: controller.signal,
    });
    controller.abort(abort);
    const error = await rejection(collect(stream.chunks));
    expect(error).toBe(abort);
  });

  it('a consumer that stops early releases the connection', async () => {
    const fake = fakeHttp({ status: 200, pieces: [openAIWireBody(parallel)] });
    const stream = await createOpenAIProvider(fake.http).chat.stream(request, target, call());
    for await (const _chunk of stream.chunks) break;
    await Promise.resolve();
    expect(fake.discards()).toBe(1);
  });

  it('a throw from the http client before a status is UpstreamError(network)', async () => {
    const fake = fakeHttp(new Error('getaddrinfo ENOTFOUND api.example.com'));
    const error = await rejection(createOpenAIProvider(fake.http).chat.stream(request, target, call()));
    expect(error).toMatchObject({
      kind: 'network',
      message: 'could not reach provider openai: getaddrinfo ENOTFOUND api.example.com',
    });
  });
});
