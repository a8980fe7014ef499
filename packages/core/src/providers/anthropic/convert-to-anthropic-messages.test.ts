import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatRequest } from '../chat-types.js';
import type { UpstreamTarget } from '../provider-adapter.js';
import { UpstreamError } from '../upstream-error.js';
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

/** Converts, then checks the body against the strict schema of what Anthropic accepts. */
function convert(fields: Partial<ChatRequest>) {
  const request: ChatRequest = {
    model: 'anthropic/claude-sonnet-4',
    messages: [{ role: 'user', content: 'Hi' }],
    ...fields,
  };
  return anthropicRequestSchema.parse(convertToAnthropicRequest(request, target));
}

describe('convertToAnthropicRequest - system prompts', () => {
  it.each<[string, ChatMessage[], unknown]>([
    ['one system message → a string', [{ role: 'system', content: 'Be brief.' }], 'Be brief.'],
    [
      'a developer message → a string',
      [{ role: 'developer', content: 'Answer in French.' }],
      'Answer in French.',
    ],
    [
      'several, in order, wherever they sit → text blocks',
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'system', content: 'Never guess.' },
      ],
      [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Answer in French.' },
        { type: 'text', text: 'Never guess.' },
      ],
    ],
    [
      'a cache_control on a part is kept',
      [
        {
          role: 'system',
          content: [{ type: 'text', text: 'Long rules', cache_control: { type: 'ephemeral' } }],
        },
      ],
      [{ type: 'text', text: 'Long rules', cache_control: { type: 'ephemeral' } }],
    ],
    ['an empty system message → no system', [{ role: 'system', content: '' }], undefined],
  ])('%s', (_name, leading, expected) => {
    const messages = leading.some((m) => m.role === 'user')
      ? leading
      : [...leading, { role: 'user' as const, content: 'Hi' }];
    const body = convert({ messages });
    expect(body.system).toEqual(expected);
    expect(body.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });
});

describe('convertToAnthropicRequest - conversation', () => {
  it('turns assistant tool_calls into tool_use and consecutive tool messages into one user message', () => {
    const body = convert({
      messages: [
        { role: 'user', content: 'Weather in Paris and London?' },
        {
          role: 'assistant',
          content: 'Checking both.',
          tool_calls: [
            {
              id: 'toolu_01A',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            {
              id: 'toolu_01B',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"London"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_01A', content: '18°C, cloudy' },
        { role: 'tool', tool_call_id: 'toolu_01B', content: [{ type: 'text', text: '12°C, rain' }] },
        { role: 'user', content: 'Which is warmer?' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and London?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'London' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01A', content: '18°C, cloudy' },
          { type: 'tool_result', tool_use_id: 'toolu_01B', content: [{ type: 'text', text: '12°C, rain' }] },
          { type: 'text', text: 'Which is warmer?' },
        ],
      },
    ]);
  });

  it.each([
    ['unparseable arguments', '{"city": "Par'],
    ['empty arguments', ''],
    ['arguments that are not an object', '[1,2]'],
  ])('sends input {} for %s', (_name, args) => {
    const body = convert({
      messages: [
        { role: 'user', content: 'Go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: args } }],
        },
        { role: 'tool', tool_call_id: 't1', content: '' },
      ],
    });
    expect(body.messages.slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }] },
    ]);
  });

  it('merges consecutive same-role messages so roles alternate', () => {
    const body = convert({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'user', content: [{ type: 'text', text: 'two' }] },
        { role: 'assistant', content: 'three' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'four' }] },
        { role: 'user', content: 'five' },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'three' },
          { type: 'text', text: 'four' },
        ],
      },
      { role: 'user', content: 'five' },
    ]);
  });

  it('turns image_url parts into base64 and url image sources', () => {
    const body = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these.' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  it('drops an assistant turn with no content and no tool calls', () => {
    const body = convert({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: null },
        { role: 'user', content: 'b' },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
  });

  it.each<[string, ChatMessage]>([
    [
      'an audio part',
      { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
    ],
    [
      'an image that is neither data: nor http(s)',
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] },
    ],
    [
      'an image part in a system message',
      { role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
    ],
    ['a tool message without tool_call_id', { role: 'tool', content: 'result' }],
    ['an unknown role', { role: 'function', content: 'x' } as unknown as ChatMessage],
  ])('refuses %s with a 400 UpstreamError naming no content', (_name, message) => {
    let thrown: unknown;
    try {
      convert({ messages: [message] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect(thrown).toMatchObject({ kind: 'http', status: 400 });
    expect((thrown as Error).message).not.toMatch(/AAAA|ftp:|result/);
  });
});
