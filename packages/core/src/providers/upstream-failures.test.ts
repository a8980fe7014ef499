import { describe, expect, it } from 'vitest';
import { createAnthropicProvider } from './anthropic/anthropic-provider.js';
import { createCohereProvider } from './cohere/cohere-provider.js';
import type { HttpClient } from './http-client.js';
import {
  bytes,
  request as chatRequest,
  fakeHttp,
  target as openAITarget,
  rejection,
} from './openai/fake-http-client.test-support.js';
import { createOpenAIProvider } from './openai/openai-provider.js';
import type { CallOptions, UpstreamTarget } from './provider-adapter.js';
import { UpstreamError } from './upstream-error.js';
import { fixtureBytes } from './wire-fixtures.test-support.js';

/*
 * The failure rules every capability of every format shares (send-upstream.ts, read-upstream-json.ts):
 * the same classification, each format with its own words.
 */

const NOW = Date.parse('2025-06-15T12:00:00Z');
const withProvider = (
  target: UpstreamTarget,
  id: string,
  format: 'anthropic' | 'cohere',
): UpstreamTarget => ({
  ...target,
  provider: { ...target.provider, id, format, baseUrl: `https://${id}.example.com/v1` },
});
const anthropicTarget = withProvider(openAITarget, 'anthropic', 'anthropic');
const cohereTarget = withProvider(openAITarget, 'cohere', 'cohere');
const rerankRequest = { model: 'r', query: 'q', documents: ['a', { text: 'b' }] };

interface Format {
  name: string;
  /** The provider's own message in `errorFixture`. */
  errorFixture: string;
  errorMessage: string;
  /** The message of a non-2xx answer whose body has none. */
  statusMessage: string;
  providerId: string;
  run(http: HttpClient, options: CallOptions): Promise<unknown>;
}

const openAIError = {
  errorFixture: 'openai-error-400-unsupported-parameter.json',
  errorMessage:
    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
  statusMessage: 'upstream answered HTTP 503',
  providerId: 'openai',
};
const openai = (http: HttpClient) => createOpenAIProvider(http, { now: () => NOW });

const formats: Format[] = [
  {
    name: 'openai chat',
    ...openAIError,
    run: (h, o) => openai(h).chat.complete(chatRequest, openAITarget, o),
  },
  {
    name: 'openai embeddings',
    ...openAIError,
    run: (h, o) => openai(h).embeddings.embed({ model: 'e', input: 'x' }, openAITarget, o),
  },
  {
    name: 'openai images',
    ...openAIError,
    run: (h, o) => openai(h).images.generate({ model: 'i', prompt: 'x' }, openAITarget, o),
  },
  {
    name: 'openai rerank',
    ...openAIError,
    run: (h, o) => openai(h).rerank.rerank(rerankRequest, openAITarget, o),
  },
  {
    name: 'anthropic chat',
    errorFixture: 'anthropic-error-400-invalid-request.json',
    errorMessage:
      'messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: srvtoolu_issue_17366_invalid. ' +
      'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    statusMessage: 'anthropic answered HTTP 503',
    providerId: 'anthropic',
    run: (h, o) =>
      createAnthropicProvider(h, { now: () => NOW }).chat.complete(chatRequest, anthropicTarget, o),
  },
  {
    name: 'cohere rerank',
    errorFixture: 'cohere-error-400.json',
    errorMessage: 'invalid request: list of documents must not be empty',
    statusMessage: 'upstream answered HTTP 503',
    providerId: 'cohere',
    run: (h, o) => createCohereProvider(h, { now: () => NOW }).rerank.rerank(rerankRequest, cohereTarget, o),
  },
];

const signal = () => new AbortController().signal;

describe.each(formats)('$name: failures', (format) => {
  it.each([
    ['not JSON', '<html>maintenance</html>', 'not JSON'],
    // The detail is the first schema issue, `path: message`.
    ['JSON of the wrong shape', '{"unexpected":true}', '[\\w.]+: .+'],
    ['JSON that is not an object', '[]', '\\(root\\): .+'],
  ])('a 2xx body that is %s → http 502, unreadable answer', async (_name, body, detail) => {
    const fake = fakeHttp({ status: 200, pieces: [bytes(body)] });
    const error = await rejection(format.run(fake.http, { signal: signal() }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'http', status: 502, retryAfterMs: null });
    expect((error as Error).message).toMatch(
      new RegExp(`^${format.providerId}: unreadable answer \\(${detail}\\)$`),
    );
  });

  it("a non-2xx → http with the provider's message, the status and Retry-After", async () => {
    const fake = fakeHttp({
      status: 429,
      headers: { 'Retry-After': 'Sun, 15 Jun 2025 12:00:10 GMT' },
      pieces: [fixtureBytes(format.errorFixture)],
    });
    let responses = 0;
    const error = await rejection(format.run(fake.http, { signal: signal(), onResponse: () => responses++ }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      kind: 'http',
      status: 429,
      retryAfterMs: 10_000,
      message: format.errorMessage,
    });
    expect(responses).toBe(1);
  });

  it('a non-2xx whose body has no message → a generic one; the body is never echoed', async () => {
    const fake = fakeHttp({
      status: 503,
      headers: { 'retry-after': '2' },
      pieces: [bytes('Service Unavailable')],
    });
    const error = await rejection(format.run(fake.http, { signal: signal() }));
    expect(error).toMatchObject({
      kind: 'http',
      status: 503,
      retryAfterMs: 2000,
      message: format.statusMessage,
    });
  });

  it('the http client throwing → network, the cause kept, onResponse not called', async () => {
    const cause = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:443') });
    const fake = fakeHttp(cause);
    let responses = 0;
    const error = await rejection(format.run(fake.http, { signal: signal(), onResponse: () => responses++ }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'network', status: null });
    expect((error as Error).message).toContain('connect ECONNREFUSED 127.0.0.1:443');
    expect((error as Error).cause).toBe(cause);
    expect(responses).toBe(0);
  });

  it('a 2xx body that breaks off while read → network', async () => {
    const fake = fakeHttp({ status: 200, pieces: [bytes('{"obj'), new Error('socket hang up')] });
    const error = await rejection(format.run(fake.http, { signal: signal() }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'network', status: null });
    expect((error as Error).message).toContain('socket hang up');
  });

  it('an abort through the signal is rethrown as it is, before or while reading', async () => {
    const abort = new DOMException('The operation was aborted.', 'AbortError');
    const controller = new AbortController();
    controller.abort(abort);
    expect(await rejection(format.run(fakeHttp(abort).http, { signal: controller.signal }))).toBe(abort);
    const midBody = fakeHttp({ status: 200, pieces: [bytes('{'), abort] });
    expect(await rejection(format.run(midBody.http, { signal: controller.signal }))).toBe(abort);
    const midError = fakeHttp({ status: 500, pieces: [bytes('{'), abort] });
    expect(await rejection(format.run(midError.http, { signal: controller.signal }))).toBe(abort);
  });
});
