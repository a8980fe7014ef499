import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../upstream-error.js';
import { bytes, call, fakeHttp, rejection, request, target } from './fake-http-client.test-support.js';
import { createOpenAIProvider } from './openai-provider.js';
import { fixtureBytes, fixtureJson } from './wire-fixtures.test-support.js';

/** The second recorded body of the cached-tokens fixture (prompt 10122, cached 9984). */
function cachedTokensBody(): Record<string, unknown> {
  const recorded = fixtureJson('openai-chat-completion-cached-tokens.recorded.json') as {
    attempts: { rawResponseBody: Record<string, unknown> }[];
  };
  return recorded.attempts[1]!.rawResponseBody;
}

describe('createOpenAIProvider - complete', () => {
  it('POSTs the request body to {baseUrl}/chat/completions with the key and provider headers', async () => {
    const fake = fakeHttp({ status: 200, pieces: [bytes(JSON.stringify(cachedTokensBody()))] });
    const options = call();
    await createOpenAIProvider(fake.http).chat.complete(request, target, options);
    expect(fake.calls).toHaveLength(1);
    const [sent] = fake.calls;
    expect(sent?.url).toBe('https://api.example.com/v1/chat/completions');
    expect(sent?.init.method).toBe('POST');
    expect(sent?.init.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer sk-test',
      'openai-organization': 'org-1',
    });
    expect(sent?.init.signal).toBe(options.signal);
    expect(JSON.parse(sent?.init.body ?? '')).toEqual({
      model: 'gpt-4o-mini-2024-07-18',
      messages: [{ role: 'user', content: 'Say ok' }],
      seed: 7,
      max_tokens: 16384,
    });
  });

  it('returns the recorded completion as received, with cached tokens in usage', async () => {
    const body = cachedTokensBody();
    const fake = fakeHttp({ status: 200, pieces: [bytes(JSON.stringify(body))] });
    const result = await createOpenAIProvider(fake.http).chat.complete(request, target, call());
    expect(result.completion).toEqual(body);
    expect(result.completion.choices[0]?.message.content).toBe('ok');
    expect(result.usage).toEqual({
      promptTokens: 10122,
      cachedTokens: 9984,
      cacheWriteTokens: 0,
      completionTokens: 1,
    });
  });

  it('usage is null when the body has none', async () => {
    const body = { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [] };
    const fake = fakeHttp({ status: 200, pieces: [bytes(JSON.stringify(body))] });
    const result = await createOpenAIProvider(fake.http).chat.complete(request, target, call());
    expect(result).toEqual({ completion: body, usage: null });
  });

  it('a 2xx body that is not a completion fails the attempt as http 502 (a bad gateway)', async () => {
    const fake = fakeHttp({ status: 200, pieces: [bytes('<html>maintenance</html>')] });
    const error = await rejection(createOpenAIProvider(fake.http).chat.complete(request, target, call()));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      kind: 'http',
      status: 502,
      message: 'openai: unreadable answer (not JSON)',
    });
  });

  it('the recorded 400 body becomes UpstreamError(http) with the provider message and status', async () => {
    const fake = fakeHttp({
      status: 400,
      pieces: [fixtureBytes('openai-error-400-unsupported-parameter.json')],
    });
    const error = await rejection(createOpenAIProvider(fake.http).chat.complete(request, target, call()));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      kind: 'http',
      status: 400,
      retryAfterMs: null,
      message:
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    });
  });

  it('503 with `retry-after: 2` gives retryAfterMs 2000 and a generic message for a non-JSON body', async () => {
    const fake = fakeHttp({
      status: 503,
      headers: { 'Retry-After': '2' },
      pieces: [bytes('Service Unavailable')],
    });
    const error = await rejection(createOpenAIProvider(fake.http).chat.complete(request, target, call()));
    expect(error).toMatchObject({
      kind: 'http',
      status: 503,
      retryAfterMs: 2000,
      message: 'upstream answered HTTP 503',
    });
  });

  it('an HTTP-date Retry-After is measured from the injected clock', async () => {
    const now = () => Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    const fake = fakeHttp({
      status: 429,
      headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' },
      pieces: [
        bytes(
          '{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}',
        ),
      ],
    });
    const error = await rejection(
      createOpenAIProvider(fake.http, { now }).chat.complete(request, target, call()),
    );
    expect(error).toMatchObject({
      kind: 'http',
      status: 429,
      retryAfterMs: 30_000,
      message: 'Rate limit reached',
    });
  });

  it.each([
    ['{"error":"model not loaded"}', 'model not loaded'],
    [
      '{"object":"error","message":"max_tokens too large","type":"BadRequestError","param":null,"code":400}',
      'max_tokens too large',
    ],
    ['{"error":{"type":"invalid_request_error"}}', 'upstream answered HTTP 400'],
    ['', 'upstream answered HTTP 400'],
  ])('error body %j gives the message %j', async (body, message) => {
    const fake = fakeHttp({ status: 400, pieces: [bytes(body)] });
    const error = await rejection(createOpenAIProvider(fake.http).chat.complete(request, target, call()));
    expect(error).toMatchObject({ kind: 'http', status: 400, message });
  });

  it('a throw from the http client becomes UpstreamError(network), keeping the cause', async () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:443');
    const fake = fakeHttp(new TypeError('fetch failed', { cause }));
    const error = await rejection(createOpenAIProvider(fake.http).chat.complete(request, target, call()));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      kind: 'network',
      status: null,
      message: 'could not reach provider openai: fetch failed (connect ECONNREFUSED 127.0.0.1:443)',
    });
    expect((error as Error).cause).toBeInstanceOf(TypeError);
  });

  it('an abort through the signal is rethrown as it is', async () => {
    const controller = new AbortController();
    const abort = new DOMException('The operation was aborted.', 'AbortError');
    controller.abort(abort);
    const fake = fakeHttp(abort);
    const error = await rejection(
      createOpenAIProvider(fake.http).chat.complete(request, target, { signal: controller.signal }),
    );
    expect(error).toBe(abort);
  });

  it('provider headers replace ours whatever their case; no key means no authorization header', async () => {
    const fake = fakeHttp({ status: 200, pieces: [bytes('{"choices":[]}')] });
    const provider = createOpenAIProvider(fake.http);
    const custom = {
      ...target,
      provider: { ...target.provider, headers: { Authorization: 'Bearer other' } },
    };
    await provider.chat.complete(request, custom, call());
    const keyless = { ...target, provider: { ...target.provider, apiKey: null, headers: {} } };
    await provider.chat.complete(request, keyless, call());
    expect(fake.calls.map((c) => c.init.headers)).toEqual([
      { 'content-type': 'application/json', authorization: 'Bearer other' },
      { 'content-type': 'application/json' },
    ]);
  });
});
