import type { ChatCompletionChunk } from '../chat-types.js';
import { byteStream, readWireFixture, splitAt } from '../wire-fixtures.test-support.js';

export { collect, readWireFixture, seededRandom } from '../wire-fixtures.test-support.js';

/**
 * The SSE body of an Anthropic recording: `.sse` files as they are; `.chunks.txt` lines each
 * become `event: <type>\ndata: <line>\n\n`, byte-exact, with no `[DONE]` (Anthropic never sends it).
 */
export function anthropicWireBody(name: string): string {
  const text = readWireFixture(name);
  if (name.endsWith('.sse')) return text;
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`)
    .join('');
}

/** The UTF-8 bytes of `text`, cut at the given byte offsets (any order; repeats and ends ignored). */
export function bytesSplitAt(text: string, offsets: readonly number[]): AsyncIterable<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const cuts = [...new Set(offsets)].filter((at) => at > 0 && at < bytes.length).sort((x, y) => x - y);
  return byteStream(splitAt(bytes, cuts));
}

/** Up to `count` random cut points in a body of `length` bytes. */
export function randomOffsets(random: () => number, length: number, count: number): number[] {
  return Array.from({ length: count }, () => 1 + Math.floor(random() * (length - 1)));
}

export interface AccumulatedMessage {
  content: string | null;
  toolCalls: { id: string | undefined; name: string; arguments: string }[];
  finishReason: string | null;
}

/** A minimal chat-completions accumulator (the official SDK's rules, reduced to what we assert). */
export function accumulate(chunks: readonly ChatCompletionChunk[]): AccumulatedMessage {
  const result: AccumulatedMessage = { content: null, toolCalls: [], finishReason: null };
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      if (choice.finish_reason) result.finishReason = choice.finish_reason;
      if (choice.delta.content) result.content = (result.content ?? '') + choice.delta.content;
      for (const delta of choice.delta.tool_calls ?? []) {
        result.toolCalls[delta.index] ??= { id: undefined, name: '', arguments: '' };
        const call = result.toolCalls[delta.index]!;
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name = delta.function.name;
        if (delta.function?.arguments) call.arguments += delta.function.arguments;
      }
    }
  }
  return result;
}

/** A synthetic Anthropic SSE body: one `event: <type>` / `data: <json>` pair per event. */
export function anthropicSse(events: readonly object[]): string {
  return events
    .map((event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`)
    .join('');
}

/** A message_start event for synthetic streams. */
export function messageStartEvent(usage: object = { input_tokens: 12, output_tokens: 1 }) {
  return {
    type: 'message_start',
    message: { id: 'msg_test', type: 'message', role: 'assistant', model: 'claude-test', content: [], usage },
  };
}
