import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk, TokenUsage } from '../../providers/chat-types.js';
import { assemble, replay } from '../../providers/openai/stream-replay.test-support.js';
import {
  openAIWireBody,
  randomSplit,
  seededRandom,
} from '../../providers/openai/wire-fixtures.test-support.js';
import { accumulateEvents, grammarViolations, parseEvents } from './anthropic-grammar.test-support.js';
import { chatStreamToEvents } from './chat-stream-to-events.js';

const HEAD = { id: 'msg_0test', model: 'acme/chat', inputTokens: 42 };
const USAGE: TokenUsage = { promptTokens: 120, cachedTokens: 20, cacheWriteTokens: 0, completionTokens: 30 };

/** The events a whole chat stream becomes, parsed. */
function translate(chunks: readonly ChatCompletionChunk[], usage: TokenUsage = USAGE) {
  const translator = chatStreamToEvents(HEAD);
  let text = '';
  let finish: string | null = null;
  for (const chunk of chunks) {
    text += translator.chunk(structuredClone(chunk));
    for (const choice of chunk.choices) if (choice.finish_reason) finish = choice.finish_reason;
  }
  return parseEvents(text + translator.finish(finish, usage));
}

const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: string | null = null) =>
  ({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'up',
    choices: [{ index: 0, delta, finish_reason: finish }],
  }) satisfies ChatCompletionChunk;

const RECORDED = [
  'openai-chat-stream-text-include-usage.chunks.txt',
  'openai-chat-stream-parallel-tool-calls-include-usage.sse',
  'openai-chat-stream-single-tool-call-include-usage.sse',
  'openai-compatible-anthropic-endpoint-tool-call.sse',
  'openai-compatible-deepseek-stream-tool-call.chunks.txt',
  'openai-compatible-groq-stream-tool-call.chunks.txt',
];

describe('chatStreamToEvents - recorded OpenAI-format streams, re-chunked at random byte boundaries', () => {
  it.each(RECORDED)('%s: Anthropic’s grammar, the same text and tool calls', async (name) => {
    const wire = openAIWireBody(name);
    const random = seededRandom(name.length * 7);
    for (let run = 0; run < 10; run++) {
      const { chunks, error } = await replay(randomSplit(wire, random, 1 + run * 16));
      expect(error).toBeUndefined();
      const events = translate(chunks);
      expect(grammarViolations(events)).toEqual([]);
      const chat = assemble(chunks);
      const got = accumulateEvents(events);
      expect(got.text).toBe(chat.text);
      expect(got.tools).toEqual(
        Object.values(chat.toolCalls).map((call) => ({
          id: call.id,
          name: call.name,
          input: JSON.parse(call.arguments || '{}'),
        })),
      );
      expect(got.stopReason).toBe(chat.toolCalls[0] || chat.toolCalls[1] ? 'tool_use' : 'end_turn');
    }
  });
});

describe('chatStreamToEvents - the known gateway bugs cannot happen', () => {
  it('message_start carries the pre-flight estimate as input_tokens, never 0 for a non-empty prompt', () => {
    const [start] = translate([chunk({ role: 'assistant', content: 'Hi' }, 'stop')]);
    expect(start?.data.message.usage.input_tokens).toBe(42);
  });

  it('a text answer has no input_json_delta at all, empty or not', () => {
    const events = translate([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hello' }),
      chunk({}, 'stop'),
    ]);
    expect(events.filter((e) => e.data.delta?.type === 'input_json_delta')).toEqual([]);
    expect(grammarViolations(events)).toEqual([]);
  });

  it('an upstream that repeats role (or sends empty chunks) still gets exactly one message_start', () => {
    const events = translate([
      chunk({ role: 'assistant', content: '' }),
      chunk({ role: 'assistant', content: 'a' }),
      chunk({ role: 'assistant', content: 'b' }),
      chunk({}, 'stop'),
    ]);
    expect(events.filter((e) => e.data.type === 'message_start')).toHaveLength(1);
  });

  it('reasoning deltas never become a thinking_delta in a text block (they are left out)', () => {
    const events = translate([
      chunk({ role: 'assistant', content: null, reasoning_content: 'let me think' }),
      chunk({ content: 'Answer.' }),
      chunk({ reasoning_content: 'more thought' }),
      chunk({}, 'stop'),
    ]);
    expect(events.filter((e) => e.data.delta?.type === 'thinking_delta')).toEqual([]);
    expect(accumulateEvents(events).text).toBe('Answer.');
    expect(grammarViolations(events)).toEqual([]);
  });

  it('a text→tool transition within one chunk keeps the tool’s id, name and whole input', () => {
    const events = translate([
      chunk({ role: 'assistant', content: 'Let me look.' }),
      chunk({
        content: ' One moment.',
        tool_calls: [
          { index: 0, id: 'call_1', type: 'function', function: { name: 'Read', arguments: '{"path":' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"a.txt"}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(grammarViolations(events)).toEqual([]);
    expect(accumulateEvents(events)).toEqual({
      text: 'Let me look. One moment.',
      tools: [{ id: 'call_1', name: 'Read', input: { path: 'a.txt' } }],
      stopReason: 'tool_use',
    });
  });

  it('a whole tool call in one delta (Groq) and a call without arguments both keep their input', () => {
    const events = translate([
      chunk({
        tool_calls: [{ index: 0, id: 'c0', type: 'function', function: { name: 'a', arguments: '{"x":1}' } }],
      }),
      chunk({
        tool_calls: [{ index: 1, id: 'c1', type: 'function', function: { name: 'b', arguments: '' } }],
      }),
      chunk({}, 'tool_calls'),
    ]);
    expect(grammarViolations(events)).toEqual([]);
    expect(accumulateEvents(events).tools).toEqual([
      { id: 'c0', name: 'a', input: { x: 1 } },
      { id: 'c1', name: 'b', input: {} },
    ]);
  });
});

describe('chatStreamToEvents - the end', () => {
  it('message_delta carries the stop reason and the metered usage, input less the cached part', () => {
    const events = translate([chunk({ content: 'x' }, 'length')]);
    expect(events.at(-2)?.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'max_tokens', stop_sequence: null },
      usage: {
        input_tokens: 100,
        output_tokens: 30,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 20,
      },
    });
  });

  it('before an error, a stream that never started gets its message_start (and only once)', () => {
    const translator = chatStreamToEvents(HEAD);
    expect(parseEvents(translator.beforeError()).map((e) => e.data.type)).toEqual(['message_start']);
    expect(translator.beforeError()).toBe('');
    expect(translator.started).toBe(true);
  });
});
