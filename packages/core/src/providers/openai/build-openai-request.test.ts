import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../chat-types.js';
import type { UpstreamTarget } from '../provider-adapter.js';
import { buildOpenAIRequest } from './build-openai-request.js';

const target: UpstreamTarget = {
  provider: {
    id: 'openai',
    format: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    apiKey: 'sk-test',
    headers: {},
    timeoutMs: null,
    streamIdleTimeoutMs: 60_000,
  },
  upstreamModel: 'gpt-4o-2024-08-06',
  maxOutputTokens: 16384,
};

const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      strict: true,
    },
  },
];

const request: ChatRequest = {
  model: 'openai/gpt-4o',
  messages: [{ role: 'user', content: 'Weather in Edinburgh?' }],
  tools,
  tool_choice: 'auto',
  temperature: 0.2,
  max_tokens: 100,
  models: ['anthropic/claude-sonnet-4'],
  provider: { order: ['openai'], allow_fallbacks: false },
  transforms: ['middle-out'],
  route: 'fallback',
  metadata: { team: 'search' },
  plugins: [{ id: 'web' }],
  preset: 'fast',
  reasoning_effort: 'low',
  x_vendor_thing: { nested: [1, 2] },
};

describe('buildOpenAIRequest', () => {
  it('replaces model, removes the gateway fields and passes everything else through', () => {
    expect(buildOpenAIRequest(request, target, { stream: false })).toEqual({
      model: 'gpt-4o-2024-08-06',
      messages: [{ role: 'user', content: 'Weather in Edinburgh?' }],
      tools,
      tool_choice: 'auto',
      temperature: 0.2,
      max_tokens: 100,
      reasoning_effort: 'low',
      x_vendor_thing: { nested: [1, 2] },
    });
  });

  it('passes tools and messages through as the very same values, untouched', () => {
    const body = buildOpenAIRequest(request, target, { stream: false });
    expect(body.tools).toBe(request.tools);
    expect(body.messages).toBe(request.messages);
    expect(body.x_vendor_thing).toBe(request.x_vendor_thing);
  });

  it('does not modify the caller request', () => {
    const before = structuredClone(request);
    buildOpenAIRequest({ ...request, stream: true, stream_options: { foo: 1 } }, target, { stream: true });
    buildOpenAIRequest(request, target, { stream: false });
    expect(request).toEqual(before);
  });

  it('asks for usage when streaming', () => {
    const body = buildOpenAIRequest({ model: 'm', messages: [], stream: true }, target, { stream: true });
    expect(body).toEqual({
      model: 'gpt-4o-2024-08-06',
      messages: [],
      max_tokens: 16384,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('merges include_usage into the stream_options the caller set, overriding include_usage: false', () => {
    const stream_options = { include_usage: false, include_obfuscation: false };
    const body = buildOpenAIRequest({ model: 'm', messages: [], stream: true, stream_options }, target, {
      stream: true,
    });
    expect(body.stream_options).toEqual({ include_usage: true, include_obfuscation: false });
    expect(stream_options).toEqual({ include_usage: false, include_obfuscation: false });
  });

  it('sends stream: true when the gateway streams, whatever the caller sent', () => {
    const body = buildOpenAIRequest({ model: 'm', messages: [] }, target, { stream: true });
    expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('drops stream and stream_options on a non-streamed call (no include_usage)', () => {
    const body = buildOpenAIRequest(
      { model: 'm', messages: [], stream: false, stream_options: { include_usage: true } },
      target,
      { stream: false },
    );
    expect(body).toEqual({ model: 'gpt-4o-2024-08-06', messages: [], max_tokens: 16384 });
  });

  it("sends the ceiling the request was held against when it names none, in the provider's field", () => {
    const bare = { model: 'm', messages: [] };
    expect(buildOpenAIRequest(bare, target, { stream: false }).max_tokens).toBe(16384);
    const newer = {
      ...target,
      provider: { ...target.provider, maxTokensField: 'max_completion_tokens' as const },
    };
    const body = buildOpenAIRequest(bare, newer, { stream: false });
    expect(body.max_completion_tokens).toBe(16384);
    expect(body).not.toHaveProperty('max_tokens');
  });

  it('forwards max_tokens and max_completion_tokens as sent, adding no ceiling', () => {
    const both = { model: 'm', messages: [], max_tokens: 1, max_completion_tokens: 4096 };
    const body = buildOpenAIRequest(both, target, { stream: false });
    expect(body).toMatchObject({ max_tokens: 1, max_completion_tokens: 4096 });
    const one = buildOpenAIRequest({ model: 'm', messages: [], max_completion_tokens: 7 }, target, {
      stream: false,
    });
    expect(one).not.toHaveProperty('max_tokens');
  });
});
