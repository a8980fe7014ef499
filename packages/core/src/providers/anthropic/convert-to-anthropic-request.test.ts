import { describe, expect, it } from 'vitest';
import type { ChatRequest, ChatTool } from '../chat-types.js';
import type { UpstreamTarget } from '../provider-adapter.js';
import { anthropicRequestSchema } from './anthropic-request-schema.js';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.js';

const target: UpstreamTarget = {
  provider: {
    id: 'anthropic',
    format: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1',
    apiKey: 'sk-ant-test',
    headers: {},
    timeoutMs: null,
    streamIdleTimeoutMs: 60_000,
  },
  upstreamModel: 'claude-sonnet-4-20250514',
  maxOutputTokens: 64000,
};

const weatherTool: ChatTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** Converts, then checks the body against the strict schema of what Anthropic accepts. */
function convert(fields: Partial<ChatRequest>) {
  const request: ChatRequest = {
    model: 'anthropic/claude-sonnet-4',
    messages: [{ role: 'user', content: 'Hi' }],
    ...fields,
  };
  return anthropicRequestSchema.parse(convertToAnthropicRequest(request, target));
}

describe('convertToAnthropicRequest - top-level fields', () => {
  it('sends the upstream model, the messages and max_tokens, and nothing else for a bare request', () => {
    expect(convert({})).toEqual({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 64000,
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });

  it.each([
    ['max_tokens wins over everything', { max_tokens: 100, max_completion_tokens: 200 }, 100],
    ['max_completion_tokens when max_tokens is absent', { max_completion_tokens: 200 }, 200],
    ['max_completion_tokens when max_tokens is null', { max_tokens: null, max_completion_tokens: 200 }, 200],
    ["the model's output ceiling when the request has neither", {}, 64000],
  ])('max_tokens: %s', (_name, fields, expected) => {
    expect(convert(fields as Partial<ChatRequest>).max_tokens).toBe(expected);
  });

  it.each([
    ['a string', 'END', ['END']],
    ['an array', ['END', '###'], ['END', '###']],
    ['an empty string (omitted)', '', undefined],
    ['null (omitted)', null, undefined],
    ['an empty array (omitted)', [], undefined],
  ])('stop as %s → stop_sequences', (_name, stop, expected) => {
    expect(convert({ stop }).stop_sequences).toEqual(expected);
  });

  it('passes stream, temperature, top_p and top_k through', () => {
    expect(convert({ stream: true, temperature: 0.2, top_p: 0.9, top_k: 40 })).toMatchObject({
      stream: true,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
    });
  });

  it('omits stream when it is false', () => {
    expect(convert({ stream: false })).not.toHaveProperty('stream');
  });

  it('drops the gateway fields and every OpenAI-only field (Anthropic refuses unknown fields)', () => {
    const body = convert({
      models: ['openai/gpt-4o'],
      provider: { order: ['anthropic'] },
      transforms: ['middle-out'],
      route: 'fallback',
      metadata: { user_id: 'u-1', team: 'blue' },
      plugins: [{ id: 'web' }],
      preset: 'fast',
      user: 'end-user-1',
      n: 1,
      seed: 7,
      response_format: { type: 'json_object' },
      stream_options: { include_usage: true },
      frequency_penalty: 0.5,
      logprobs: true,
    });
    expect(Object.keys(body).sort()).toEqual(['max_tokens', 'messages', 'model']);
  });
});

describe('convertToAnthropicRequest - tools', () => {
  it('turns function tools into name, description and input_schema', () => {
    const bare: ChatTool = { type: 'function', function: { name: 'updateIssueList', strict: true } };
    expect(convert({ tools: [weatherTool, bare] }).tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'updateIssueList', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it.each([
    ['none', 'none', undefined, { type: 'none' }],
    ['auto', 'auto', undefined, { type: 'auto' }],
    ['required', 'required', undefined, { type: 'any' }],
    [
      'a named function',
      { type: 'function', function: { name: 'get_weather' } },
      undefined,
      { type: 'tool', name: 'get_weather' },
    ],
    ['absent', undefined, undefined, undefined],
    ['auto, parallel_tool_calls true', 'auto', true, { type: 'auto' }],
    ['auto, parallel_tool_calls false', 'auto', false, { type: 'auto', disable_parallel_tool_use: true }],
    [
      'required, parallel_tool_calls false',
      'required',
      false,
      { type: 'any', disable_parallel_tool_use: true },
    ],
    [
      'a named function, parallel_tool_calls false',
      { type: 'function', function: { name: 'get_weather' } },
      false,
      { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    ],
    ['none, parallel_tool_calls false (none cannot carry it)', 'none', false, { type: 'none' }],
    [
      'absent, parallel_tool_calls false',
      undefined,
      false,
      { type: 'auto', disable_parallel_tool_use: true },
    ],
  ])('tool_choice %s', (_name, toolChoice, parallel, expected) => {
    const body = convert({
      tools: [weatherTool],
      tool_choice: toolChoice as ChatRequest['tool_choice'],
      parallel_tool_calls: parallel,
    });
    expect(body.tool_choice).toEqual(expected);
  });

  it('sends neither tools nor tool_choice when the request has no tools', () => {
    const body = convert({ tool_choice: 'none', tools: [] });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
  });

  it.each([
    ['a non-function tool', { tools: [{ type: 'custom', custom: { name: 'x' } }] }],
    ['an unknown tool_choice', { tools: [weatherTool], tool_choice: 'sometimes' }],
  ])('refuses %s with a 400 UpstreamError', (_name, fields) => {
    expect(() => convert(fields as unknown as Partial<ChatRequest>)).toThrow(
      expect.objectContaining({ kind: 'http', status: 400 }),
    );
  });
});
