import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk, TokenUsage } from '../chat-types.js';
import { convertAnthropicStream } from './convert-anthropic-stream.js';
import {
  type AccumulatedMessage,
  accumulate,
  anthropicSse,
  anthropicWireBody,
  bytesSplitAt,
  collect,
  messageStartEvent,
  randomOffsets,
  seededRandom,
} from './wire-fixtures.test-support.js';

const NOW = 1_750_000_000_999; // epoch ms → created 1750000000

async function replay(body: string, offsets: readonly number[] = []) {
  const stream = convertAnthropicStream(bytesSplitAt(body, offsets), NOW);
  const chunks = await collect(stream.chunks);
  return { chunks, usage: stream.usage() };
}

const usage = (prompt: number, cached: number, cacheWrite: number, completion: number): TokenUsage => ({
  promptTokens: prompt,
  cachedTokens: cached,
  cacheWriteTokens: cacheWrite,
  completionTokens: completion,
});

const FIXTURES: [string, AccumulatedMessage, TokenUsage][] = [
  [
    'anthropic-stream-text-then-tool-use.sse',
    {
      content: "I'll check the current weather in Paris for you.",
      toolCalls: [
        { id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' },
      ],
      finishReason: 'tool_calls',
    },
    usage(377, 0, 0, 65),
  ],
  [
    'anthropic-stream-tool-use-truncated-max-tokens.sse',
    {
      content:
        "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file called " +
        'taxes.txt. Let me do that for you now.',
      toolCalls: [
        {
          id: 'toolu_01EKqbqmZrGRXy18eN7m9kvY',
          name: 'make_file',
          arguments:
            '{"filename": "taxes.txt", "lines_of_text": [\n"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s",' +
            '\n"",\n"## INTRODUCTION",\n"",\n"Filing taxes',
        },
      ],
      finishReason: 'length',
    },
    usage(450, 0, 0, 124),
  ],
  [
    'anthropic-stream-cache-read.chunks.txt',
    { content: 'OK', toolCalls: [], finishReason: 'length' },
    usage(18642, 18639, 0, 1),
  ],
  [
    'anthropic-stream-cache-write.chunks.txt',
    { content: 'OK', toolCalls: [], finishReason: 'length' },
    usage(18642, 0, 18639, 1),
  ],
  [
    'anthropic-stream-text-then-tool-use.chunks.txt',
    {
      content: "I'll invoke the JSON response tool.",
      toolCalls: [
        {
          id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA',
          name: 'json',
          arguments: '{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}',
        },
      ],
      finishReason: 'tool_calls',
    },
    usage(849, 0, 0, 47),
  ],
  [
    'anthropic-stream-tool-use-no-args.chunks.txt',
    {
      content: "I'll update the issue list for you.",
      toolCalls: [{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '{}' }],
      finishReason: 'tool_calls',
    },
    usage(565, 0, 0, 48),
  ],
];

/** What the official openai SDK's stream helper makes of the chunks. */
async function sdkFinalMessage(chunks: readonly ChatCompletionChunk[]) {
  const encoder = new TextEncoder();
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(`${JSON.stringify(chunk)}\n`));
      controller.close();
    },
  });
  const completion = await ChatCompletionStream.fromReadableStream(readable).finalChatCompletion();
  return completion.choices[0]!;
}

describe('convertAnthropicStream - recorded streams', () => {
  it.each(FIXTURES)(
    '%s: text, tool calls, finish_reason and usage',
    async (name, expected, expectedUsage) => {
      const { chunks, usage: reported } = await replay(anthropicWireBody(name));
      expect(accumulate(chunks)).toEqual(expected);
      expect(reported).toEqual(expectedUsage);
    },
  );

  it.each(FIXTURES)('%s: the openai SDK accumulates the same final message', async (name, expected) => {
    const { chunks } = await replay(anthropicWireBody(name));
    const choice = await sdkFinalMessage(chunks);
    expect(choice.finish_reason).toBe(expected.finishReason);
    expect(choice.message.content).toBe(expected.content);
    const toolCalls = (choice.message.tool_calls ?? []).map((call) => {
      if (call.type !== 'function') throw new Error('expected a function call');
      return { id: call.id, name: call.function.name, arguments: call.function.arguments };
    });
    expect(toolCalls).toEqual(expected.toolCalls);
  });

  it('anthropic-stream-text-then-tool-use.sse: the exact chunk sequence', async () => {
    const { chunks } = await replay(anthropicWireBody('anthropic-stream-text-then-tool-use.sse'));
    const chunk = (delta: object, finish_reason: string | null = null) => ({
      id: 'msg_019Q1hrJbZG26Fb9BQhrkHEr',
      object: 'chat.completion.chunk',
      created: 1750000000,
      model: 'claude-sonnet-4-20250514',
      choices: [{ index: 0, delta, finish_reason }],
    });
    const args = (text: string) => chunk({ tool_calls: [{ index: 0, function: { arguments: text } }] });
    expect(chunks).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'I' }),
      chunk({ content: "'ll check the current weather in Paris for you." }),
      chunk({
        tool_calls: [
          {
            index: 0,
            id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
            type: 'function',
            function: { name: 'get_weather', arguments: '' },
          },
        ],
      }),
      args('{"locati'),
      args('on": "P'),
      args('ar'),
      args('is"}'),
      chunk({}, 'tool_calls'),
    ]);
  });

  it('anthropic-stream-tool-use-no-args.chunks.txt: "{}" is sent before the tool block ends', async () => {
    const { chunks } = await replay(anthropicWireBody('anthropic-stream-tool-use-no-args.chunks.txt'));
    expect(chunks.map((c) => c.choices[0]!.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: "I'll update the issue list for" },
      { content: ' you.' },
      {
        tool_calls: [
          {
            index: 0,
            id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP',
            type: 'function',
            function: { name: 'updateIssueList', arguments: '' },
          },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{}' } }] },
      {},
    ]);
  });
});

describe('convertAnthropicStream - re-chunked at random byte boundaries', () => {
  it.each(FIXTURES.map(([name]) => name))('%s: 200 random splittings give the same chunks', async (name) => {
    const body = anthropicWireBody(name);
    const whole = await replay(body);
    const length = new TextEncoder().encode(body).length;
    for (let seed = 1; seed <= 200; seed++) {
      const random = seededRandom(seed);
      const offsets = randomOffsets(random, length, 1 + Math.floor(random() * 60));
      const split = await replay(body, offsets);
      expect(split, `seed ${seed}`).toEqual(whole);
    }
  });

  it('anthropic-stream-text-then-tool-use.sse: a cut at every single byte offset, and one byte at a time', async () => {
    const body = anthropicWireBody('anthropic-stream-text-then-tool-use.sse');
    const whole = await replay(body);
    const length = new TextEncoder().encode(body).length;
    for (let offset = 1; offset < length; offset++) {
      expect(await replay(body, [offset]), `offset ${offset}`).toEqual(whole);
    }
    const everyByte = Array.from({ length: length - 1 }, (_, i) => i + 1);
    expect(await replay(body, everyByte)).toEqual(whole);
  });

  it('multi-byte UTF-8 text survives a cut inside a character', async () => {
    const body = anthropicSse([
      messageStartEvent(),
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Ça coûte 5 € 🙂' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ]);
    const length = new TextEncoder().encode(body).length;
    const everyByte = Array.from({ length: length - 1 }, (_, i) => i + 1);
    const { chunks } = await replay(body, everyByte);
    expect(accumulate(chunks).content).toBe('Ça coûte 5 € 🙂');
  });
});
