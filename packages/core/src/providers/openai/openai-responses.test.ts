import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../upstream-error.js';
import { collect, fixtureBytes, fixtureJson } from '../wire-fixtures.test-support.js';
import { call, fakeHttp, rejection, target } from './fake-http-client.test-support.js';
import { createOpenAIProvider } from './openai-provider.js';
import { buildResponsesRequest } from './openai-responses.js';
import { responsesWireBodies } from './wire-fixtures.test-support.js';

const wire = {
  model: 'openai/gpt-5-mini',
  input: [{ role: 'user', content: 'What is 12 + 7?' }],
  instructions: 'Use the calculator.',
  tools: [{ type: 'web_search' }, { type: 'function', name: 'calc', parameters: { type: 'object' } }],
  include: ['reasoning.encrypted_content'],
  metadata: { team: 'agents' },
  store: true,
  stream: true,
  // The gateway's own fields never go upstream.
  models: ['openai/gpt-5-mini', 'acme/fallback'],
  provider: { order: ['openai'] },
  plugins: [{ id: 'web' }],
  preset: 'agents',
  cache: true,
};

describe('buildResponsesRequest', () => {
  it('sends the Responses body as the caller wrote it, but for the upstream model, store: false and the gateway fields', () => {
    expect(buildResponsesRequest(wire, target, { stream: false })).toEqual({
      model: 'gpt-4o-mini-2024-07-18',
      input: [{ role: 'user', content: 'What is 12 + 7?' }],
      instructions: 'Use the calculator.',
      tools: [{ type: 'web_search' }, { type: 'function', name: 'calc', parameters: { type: 'object' } }],
      include: ['reasoning.encrypted_content'],
      metadata: { team: 'agents' },
      store: false,
      max_output_tokens: 16384,
    });
  });

  it.each([
    [{ max_output_tokens: 50 }, 50],
    [{}, 16384],
    [{ max_output_tokens: null }, 16384],
  ])('%j: max_output_tokens %d (the held ceiling when none is asked)', (fields, expected) => {
    expect(buildResponsesRequest({ ...wire, ...fields }, target, { stream: false }).max_output_tokens).toBe(
      expected,
    );
  });

  it('a stream is asked for by the call, not by the caller', () => {
    const streamed = buildResponsesRequest({ ...wire, stream: false, stream_options: {} }, target, {
      stream: true,
    });
    expect(streamed).toMatchObject({ stream: true, stream_options: {} });
    const whole = buildResponsesRequest({ ...wire, stream_options: {} }, target, { stream: false });
    expect(whole).not.toHaveProperty('stream');
    expect(whole).not.toHaveProperty('stream_options');
  });

  it('keeps the caller’s body as it was', () => {
    const before = structuredClone(wire);
    buildResponsesRequest(wire, target, { stream: false });
    expect(wire).toEqual(before);
  });
});

describe('createOpenAIProvider - responses', () => {
  it('POSTs to {baseUrl}/responses and returns the Response as received, with its usage', async () => {
    const fake = fakeHttp({
      status: 200,
      pieces: [fixtureBytes('openai-responses-reasoning-then-text.json')],
    });
    const options = call();
    const answer = await createOpenAIProvider(fake.http).responses.create(wire, target, options);
    const [sent] = fake.calls;
    expect(sent?.url).toBe('https://api.example.com/v1/responses');
    expect(sent?.init.signal).toBe(options.signal);
    expect(sent?.init.headers).toMatchObject({ authorization: 'Bearer sk-test' });
    expect(JSON.parse(sent?.init.body ?? '')).toEqual(buildResponsesRequest(wire, target, { stream: false }));
    const recorded = fixtureJson('openai-responses-reasoning-then-text.json') as { usage: unknown };
    expect(answer.response).toEqual(recorded);
    expect(answer.usage).toEqual({
      promptTokens: 865,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      completionTokens: 163,
    });
  });

  it('a 2xx body that is not a Response is an unreadable answer (http 502)', async () => {
    const fake = fakeHttp({ status: 200, pieces: [new TextEncoder().encode('{"id":"x"}')] });
    const error = await rejection(createOpenAIProvider(fake.http).responses.create(wire, target, call()));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'http', status: 502 });
  });

  it('streams the upstream’s events with stream: true, and reads usage from the terminal one', async () => {
    const [body] = responsesWireBodies('openai-responses-custom-tool-call.chunks.txt');
    const fake = fakeHttp({ status: 200, pieces: [body!] });
    const stream = await createOpenAIProvider(fake.http).responses.stream(wire, target, call());
    expect(JSON.parse(fake.calls[0]?.init.body ?? '')).toMatchObject({ stream: true, store: false });
    expect(stream.usage()).toBeNull();
    const events = await collect(stream.chunks);
    expect(events.at(-1)?.type).toBe('response.completed');
    expect(stream.usage()).toEqual({
      promptTokens: 93,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      completionTokens: 51,
    });
  });

  it('a stream that breaks off throws UpstreamError(network) after the events before it', async () => {
    const [body] = responsesWireBodies('openai-responses-custom-tool-call.chunks.txt');
    const fake = fakeHttp({ status: 200, pieces: [body!.subarray(0, 900), new Error('socket hang up')] });
    const stream = await createOpenAIProvider(fake.http).responses.stream(wire, target, call());
    const seen: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const event of stream.chunks) seen.push(event.type);
      })(),
    );
    expect(seen[0]).toBe('response.created');
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toMatch(/broke off: socket hang up/);
  });
});
