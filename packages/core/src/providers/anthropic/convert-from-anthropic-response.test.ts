import { describe, expect, it } from 'vitest';
import { anthropicMessageSchema } from './anthropic-wire-schemas.js';
import { convertFromAnthropicResponse } from './convert-from-anthropic-response.js';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.js';
import { readWireFixture } from './wire-fixtures.test-support.js';

const NOW = 1_750_000_000_123; // epoch ms → created 1750000000

function convertFixture(name: string) {
  return convertFromAnthropicResponse(anthropicMessageSchema.parse(JSON.parse(readWireFixture(name))), NOW);
}

describe('convertFromAnthropicResponse - recorded responses', () => {
  it('anthropic-message-tool-use.json: one tool call with its nested input re-serialised', () => {
    expect(convertFixture('anthropic-message-tool-use.json')).toEqual({
      completion: {
        id: 'msg_0191iYfpERYfS27xLsdW2nbb',
        object: 'chat.completion',
        created: 1750000000,
        model: 'claude-haiku-4-5-20251001',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'toolu_01Q9ExVZnzZj7E2QQYHYtNUa',
                  type: 'function',
                  function: {
                    name: 'json',
                    arguments:
                      '{"elements":[{"location":"San Francisco","temperature":-5,"condition":"snowy"},' +
                      '{"location":"London","temperature":0,"condition":"snowy"},' +
                      '{"location":"Paris","temperature":23,"condition":"cloudy"},' +
                      '{"location":"Berlin","temperature":-9,"condition":"snowy"}]}',
                  },
                },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: {
          prompt_tokens: 1151,
          completion_tokens: 87,
          total_tokens: 1238,
          prompt_tokens_details: { cached_tokens: 0 },
        },
      },
      usage: { promptTokens: 1151, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 87 },
    });
  });

  it('anthropic-message-text-and-tool-use-no-args.json: text kept, empty input → "{}"', () => {
    const { completion, usage } = convertFixture('anthropic-message-text-and-tool-use-no-args.json');
    expect(completion.id).toBe('msg_01GCBaV8gyWAYgMVggRqZbuQ');
    expect(completion.model).toBe('claude-3-opus-20240229');
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content:
            '<thinking>\nThe updateIssueList tool was provided in the list of available functions. The tool has no ' +
            'required parameters, so it can be called without any additional information needed from the user.\n' +
            '</thinking>\n\nOkay, I will update the current issue list:',
          tool_calls: [
            {
              id: 'toolu_01LRmxn9vGM1d2DZSDBowdZ1',
              type: 'function',
              function: { name: 'updateIssueList', arguments: '{}' },
            },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ]);
    expect(usage).toEqual({ promptTokens: 602, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 93 });
  });
});

describe('convertFromAnthropicResponse - shapes', () => {
  const message = (fields: Record<string, unknown>) =>
    anthropicMessageSchema.parse({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-6',
      content: [{ type: 'text', text: 'OK' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, output_tokens: 2 },
      ...fields,
    });

  it('joins text blocks and leaves out blocks it cannot express (thinking, server tools)', () => {
    const { completion } = convertFromAnthropicResponse(
      message({
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'Hello, ' },
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
          { type: 'text', text: 'world.' },
        ],
      }),
      NOW,
    );
    expect(completion.choices[0]!.message).toEqual({ role: 'assistant', content: 'Hello, world.' });
  });

  it('gives content null and no tool_calls for an empty answer', () => {
    const { completion } = convertFromAnthropicResponse(message({ content: [] }), NOW);
    expect(completion.choices[0]!.message).toEqual({ role: 'assistant', content: null });
  });

  it.each([
    [
      'cache read',
      { input_tokens: 3, cache_read_input_tokens: 18639, cache_creation_input_tokens: 0, output_tokens: 1 },
      { promptTokens: 18642, cachedTokens: 18639, cacheWriteTokens: 0, completionTokens: 1 },
      {
        prompt_tokens: 18642,
        completion_tokens: 1,
        total_tokens: 18643,
        prompt_tokens_details: { cached_tokens: 18639 },
      },
    ],
    [
      'cache write',
      { input_tokens: 3, cache_read_input_tokens: 0, cache_creation_input_tokens: 18639, output_tokens: 1 },
      { promptTokens: 18642, cachedTokens: 0, cacheWriteTokens: 18639, completionTokens: 1 },
      {
        prompt_tokens: 18642,
        completion_tokens: 1,
        total_tokens: 18643,
        prompt_tokens_details: { cached_tokens: 0 },
      },
    ],
    [
      'cache read and write together',
      {
        input_tokens: 50,
        cache_read_input_tokens: 1000,
        cache_creation_input_tokens: 200,
        output_tokens: 30,
      },
      { promptTokens: 1250, cachedTokens: 1000, cacheWriteTokens: 200, completionTokens: 30 },
      {
        prompt_tokens: 1250,
        completion_tokens: 30,
        total_tokens: 1280,
        prompt_tokens_details: { cached_tokens: 1000 },
      },
    ],
    [
      'no cache fields at all',
      { input_tokens: 10, output_tokens: 2 },
      { promptTokens: 10, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 2 },
      {
        prompt_tokens: 10,
        completion_tokens: 2,
        total_tokens: 12,
        prompt_tokens_details: { cached_tokens: 0 },
      },
    ],
  ])('usage with %s', (_name, anthropicUsage, tokenUsage, chatUsage) => {
    const { completion, usage } = convertFromAnthropicResponse(message({ usage: anthropicUsage }), NOW);
    expect(usage).toEqual(tokenUsage);
    expect(completion.usage).toEqual(chatUsage);
  });

  it('reports usage null and no usage object when Anthropic sent none', () => {
    const { completion, usage } = convertFromAnthropicResponse(message({ usage: undefined }), NOW);
    expect(usage).toBeNull();
    expect(completion).not.toHaveProperty('usage');
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'stop'],
    [null, 'stop'],
    ['a_reason_from_the_future', 'stop'],
    ['constructor', 'stop'],
  ])('stop_reason %j → finish_reason %s', (stopReason, finishReason) => {
    expect(mapAnthropicStopReason(stopReason)).toBe(finishReason);
    const { completion } = convertFromAnthropicResponse(message({ stop_reason: stopReason }), NOW);
    expect(completion.choices[0]!.finish_reason).toBe(finishReason);
  });
});
