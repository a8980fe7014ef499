import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk, TokenUsage } from '../chat-types.js';
import { UpstreamError } from '../upstream-error.js';
import { convertAnthropicStream } from './convert-anthropic-stream.js';
import {
  accumulate,
  anthropicSse,
  bytesSplitAt,
  collect,
  messageStartEvent,
} from './wire-fixtures.test-support.js';

const NOW = 1_750_000_000_999;

async function replay(body: string) {
  const stream = convertAnthropicStream(bytesSplitAt(body, []), NOW);
  const chunks = await collect(stream.chunks);
  return { chunks, usage: stream.usage() };
}

const usage = (prompt: number, cached: number, cacheWrite: number, completion: number): TokenUsage => ({
  promptTokens: prompt,
  cachedTokens: cached,
  cacheWriteTokens: cacheWrite,
  completionTokens: completion,
});

describe('convertAnthropicStream - edge cases', () => {
  it('an error event mid-stream throws UpstreamError(network) after the chunks before it', async () => {
    const body = anthropicSse([
      messageStartEvent(),
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } },
    ]);
    const stream = convertAnthropicStream(bytesSplitAt(body, []), NOW);
    const seen: ChatCompletionChunk[] = [];
    let thrown: unknown;
    try {
      for await (const chunk of stream.chunks) seen.push(chunk);
    } catch (error) {
      thrown = error;
    }
    expect(seen.map((c) => c.choices[0]!.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Hel' },
    ]);
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect(thrown).toMatchObject({
      kind: 'network',
      message: 'anthropic: Overloaded',
      status: null,
      code: 'overloaded_error',
    });
    expect(stream.usage()).toEqual(usage(12, 0, 0, 1));
  });

  it.each([
    ['the events end before message_delta', [messageStartEvent()], /ended before the message finished/],
    [
      'an event comes before message_start',
      [{ type: 'content_block_stop', index: 0 }],
      /before message_start/,
    ],
    [
      'an event has the wrong shape',
      [messageStartEvent(), { type: 'content_block_delta', delta: {} }],
      /malformed stream event/,
    ],
  ])('throws UpstreamError(network) when %s', async (_name, events, message) => {
    await expect(replay(anthropicSse(events))).rejects.toThrow(message);
    await expect(replay(anthropicSse(events))).rejects.toMatchObject({ kind: 'network' });
  });

  it('throws UpstreamError(network) when an event is not JSON', async () => {
    await expect(replay('event: message_start\ndata: {"type":\n\n')).rejects.toMatchObject({
      kind: 'network',
      message: 'anthropic: a stream event is not valid JSON',
    });
  });

  it('numbers tool calls 0, 1, … over tool blocks only and skips thinking and unknown events', async () => {
    const { chunks } = await replay(
      anthropicSse([
        messageStartEvent(),
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me see' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'abc' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Two calls.' } },
        { type: 'content_block_stop', index: 1 },
        {
          type: 'content_block_start',
          index: 2,
          content_block: { type: 'tool_use', id: 'toolu_a', name: 'f', input: {} },
        },
        {
          type: 'content_block_delta',
          index: 2,
          delta: { type: 'input_json_delta', partial_json: '{"x":1}' },
        },
        { type: 'content_block_stop', index: 2 },
        { type: 'a_future_event', payload: 1 },
        {
          type: 'content_block_start',
          index: 3,
          content_block: { type: 'tool_use', id: 'toolu_b', name: 'g', input: {} },
        },
        { type: 'content_block_stop', index: 3 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 40 } },
        { type: 'message_stop' },
      ]),
    );
    expect(accumulate(chunks)).toEqual({
      content: 'Two calls.',
      toolCalls: [
        { id: 'toolu_a', name: 'f', arguments: '{"x":1}' },
        { id: 'toolu_b', name: 'g', arguments: '{}' },
      ],
      finishReason: 'tool_calls',
    });
  });

  it('gives "{}" to an argument-less tool block cut off by max_tokens, before the finish chunk', async () => {
    const { chunks } = await replay(
      anthropicSse([
        messageStartEvent(),
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 'toolu_a', name: 'f', input: {} },
        },
        { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 5 } },
        { type: 'message_stop' },
      ]),
    );
    expect(chunks.slice(-2).map((c) => c.choices[0])).toEqual([
      { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'length' },
    ]);
  });

  it('keeps the message_start counts when message_delta sends input counts as null', async () => {
    const { usage: reported } = await replay(
      anthropicSse([
        messageStartEvent({
          input_tokens: 7,
          cache_read_input_tokens: 100,
          cache_creation_input_tokens: 20,
          output_tokens: 1,
        }),
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn' },
          usage: { input_tokens: null, cache_read_input_tokens: null, output_tokens: 33 },
        },
        { type: 'message_stop' },
      ]),
    );
    expect(reported).toEqual(usage(127, 100, 20, 33));
  });

  it('ends with finish_reason stop when message_stop comes without message_delta', async () => {
    const { chunks } = await replay(anthropicSse([messageStartEvent(), { type: 'message_stop' }]));
    expect(chunks.at(-1)!.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
  });

  it('reports usage null before message_start', () => {
    const stream = convertAnthropicStream(bytesSplitAt('', []), NOW);
    expect(stream.usage()).toBeNull();
  });
});
