import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from './messages-request-schema.js';
import { messagesToChat } from './messages-to-chat.js';

const base = { model: 'acme/chat', max_tokens: 100 };
const user = (content: MessagesRequest['messages'][number]['content']) => ({
  role: 'user' as const,
  content,
});
const assistant = (content: MessagesRequest['messages'][number]['content']) => ({
  role: 'assistant' as const,
  content,
});
const translate = (body: Partial<MessagesRequest>) =>
  messagesToChat({ ...base, messages: [], ...body } as MessagesRequest);

describe('messagesToChat - messages', () => {
  it.each([
    ['a string turn', [user('Hi')], [{ role: 'user', content: 'Hi' }]],
    [
      'text blocks; one plain block collapses to a string',
      [user([{ type: 'text', text: 'Hi' }])],
      [{ role: 'user', content: 'Hi' }],
    ],
    [
      'cache_control rides on its part (ttl kept)',
      [user([{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }])],
      [
        {
          role: 'user',
          content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        },
      ],
    ],
    [
      'base64 and url images',
      [
        user([
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
          { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
        ]),
      ],
      [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
            { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
          ],
        },
      ],
    ],
    [
      'tool_use blocks become tool_calls (ids kept, input as JSON); thinking is dropped',
      [
        assistant([
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a' } },
        ]),
      ],
      [
        {
          role: 'assistant',
          content: 'Reading.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"path":"a"}' } },
          ],
        },
      ],
    ],
    [
      'tool results become tool messages before the rest of the turn, their images after',
      [
        user([
          { type: 'text', text: 'and then?' },
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'file text' },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_2',
            content: [
              { type: 'text', text: 'a chart:' },
              { type: 'image', source: { type: 'url', url: 'https://x.test/c.png' } },
            ],
          },
          { type: 'tool_result', tool_use_id: 'toolu_3' },
        ]),
      ],
      [
        { role: 'tool', tool_call_id: 'toolu_1', content: 'file text' },
        { role: 'tool', tool_call_id: 'toolu_2', content: 'a chart:' },
        { role: 'tool', tool_call_id: 'toolu_3', content: '' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'and then?' },
            { type: 'image_url', image_url: { url: 'https://x.test/c.png' } },
          ],
        },
      ],
    ],
  ])('%s', (_name, messages, expected) => {
    const { chat, untranslatable } = translate({ messages: messages as MessagesRequest['messages'] });
    expect(chat.messages).toEqual(expected);
    expect(untranslatable).toEqual([]);
  });

  it('system: a string, or text blocks (cache markers kept) as the first message', () => {
    expect(translate({ system: 'Be brief.', messages: [user('Hi')] }).chat.messages[0]).toEqual({
      role: 'system',
      content: 'Be brief.',
    });
    const blocks = translate({
      system: [
        { type: 'text', text: 'A' },
        { type: 'text', text: 'B', cache_control: { type: 'ephemeral' } },
      ],
      messages: [user('Hi')],
    });
    expect(blocks.chat.messages[0]).toEqual({
      role: 'system',
      content: [
        { type: 'text', text: 'A' },
        { type: 'text', text: 'B', cache_control: { type: 'ephemeral' } },
      ],
    });
    expect(blocks.cacheMarkers).toBe(true);
  });

  it('a system turn mid-conversation (Claude Code sends its environment so) becomes a system message there', () => {
    const { chat } = translate({
      messages: [
        user('first'),
        { role: 'system', content: [{ type: 'text', text: '# Environment' }] } as never,
        user('second'),
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'system', content: '# Environment' },
      { role: 'user', content: 'second' },
    ]);
  });

  it('notes what a chat call cannot carry, and what it leaves out for the estimate', () => {
    const doc = {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' },
    };
    const thinking = { type: 'thinking', thinking: 'long thought', signature: 'sig' };
    const { untranslatable, dropped } = translate({
      messages: [user([doc as never]), assistant([thinking as never, { type: 'text', text: 'ok' }])],
    });
    expect(untranslatable).toEqual(['a "document" block in a user message']);
    expect(dropped).toEqual([doc, thinking]);
  });
});

describe('messagesToChat - the request’s other fields', () => {
  const tool = { name: 'Read', description: 'Read a file', input_schema: { type: 'object' } };
  const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 };

  it.each([
    [{ type: 'auto' }, 'auto'],
    [{ type: 'any' }, 'required'],
    [{ type: 'none' }, 'none'],
    [
      { type: 'tool', name: 'Read' },
      { type: 'function', function: { name: 'Read' } },
    ],
  ])('tool_choice %j → %j', (choice, expected) => {
    expect(translate({ messages: [user('x')], tools: [tool], tool_choice: choice }).chat.tool_choice).toEqual(
      expected,
    );
  });

  it('custom tools become function tools; a server tool is left out; parallel use can be turned off', () => {
    const { chat, dropped } = translate({
      messages: [user('x')],
      tools: [tool, webSearch],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    });
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'Read', description: 'Read a file', parameters: { type: 'object' } },
      },
    ]);
    expect(chat.parallel_tool_calls).toBe(false);
    expect(dropped).toEqual([webSearch]);
  });

  it('a tool_choice naming a tool the chat call does not have is untranslatable', () => {
    const { untranslatable } = translate({
      messages: [user('x')],
      tools: [webSearch],
      tool_choice: { type: 'tool', name: 'web_search' },
    });
    expect(untranslatable).toEqual(['a tool_choice naming the tool "web_search"']);
  });

  it('max_tokens, temperature, top_p, stop_sequences, stream and the gateway fields carry over; thinking, top_k and Anthropic’s metadata do not', () => {
    const { chat } = translate({
      messages: [user('x')],
      max_tokens: 512,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 5,
      stop_sequences: ['END'],
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      metadata: { user_id: 'u1' },
      models: ['acme/other'],
      provider: { order: ['demo'] },
      service_tier: 'auto',
    });
    expect(chat).toEqual({
      model: 'acme/chat',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 512,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      stream: true,
      models: ['acme/other'],
      provider: { order: ['demo'] },
    });
  });
});
