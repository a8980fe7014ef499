import { readFileSync } from 'node:fs';
import type { ChatCompletionChunk } from '../chat-types.js';

/*
 * Test support: the recorded upstream replies in `shared/fixtures/wire` (the repo's parent folder
 * holds `shared/`), rebuilt into wire bytes and fed back in arbitrary pieces.
 */

const WIRE_FIXTURES = new URL('../../../../../../shared/fixtures/wire/', import.meta.url);

export function readWireFixture(name: string): string {
  return readFileSync(new URL(name, WIRE_FIXTURES), 'utf8');
}

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

/** The UTF-8 bytes of `text`, cut at the given byte offsets. */
export async function* bytesSplitAt(text: string, offsets: readonly number[]): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let start = 0;
  for (const offset of [...offsets].sort((a, b) => a - b)) {
    if (offset <= start || offset >= bytes.length) continue;
    yield bytes.slice(start, offset);
    start = offset;
  }
  yield bytes.slice(start);
}

/** A small seeded PRNG (mulberry32), so a failing split can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Up to `count` random cut points in a body of `length` bytes. */
export function randomOffsets(random: () => number, length: number, count: number): number[] {
  return Array.from({ length: count }, () => 1 + Math.floor(random() * (length - 1)));
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
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
