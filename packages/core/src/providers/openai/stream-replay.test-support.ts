import type { ChatCompletionChunk, TokenUsage } from '../chat-types.js';
import { convertOpenAIStream } from './convert-openai-stream.js';
import { byteStream } from './wire-fixtures.test-support.js';

/* Replaying byte pieces through the converter (`sseChunks`), and reading what came out. */

interface Replay {
  chunks: ChatCompletionChunk[];
  usage: TokenUsage | null;
  error: unknown;
}

/** Feeds byte pieces through the converter (`sseChunks`); keeps what came out before any throw. */
export async function replay(pieces: readonly Uint8Array[]): Promise<Replay> {
  const out: Replay = { chunks: [], usage: null, error: undefined };
  const converted = convertOpenAIStream(byteStream(pieces), (usage) => {
    out.usage = usage;
  });
  try {
    for await (const chunk of converted) out.chunks.push(chunk);
  } catch (error) {
    out.error = error;
  }
  return out;
}

export const replayText = (wire: string) => replay([new TextEncoder().encode(wire)]);

/** What a client assembles from the deltas: text, reasoning, tool calls per index, finish reasons. */
export function assemble(chunks: ChatCompletionChunk[]) {
  let text = '';
  let reasoning = '';
  const finishReasons: string[] = [];
  const toolCalls: Record<number, { id?: string; name?: string; arguments: string }> = {};
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      reasoning += (choice.delta.reasoning_content as string | null | undefined) ?? '';
      if (choice.finish_reason) finishReasons.push(choice.finish_reason);
      for (const delta of choice.delta.tool_calls ?? []) {
        toolCalls[delta.index] ??= { arguments: '' };
        const call = toolCalls[delta.index]!;
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name = delta.function.name;
        call.arguments += delta.function?.arguments ?? '';
      }
    }
  }
  return { text, reasoning, toolCalls, finishReasons };
}

/** The JSON payloads of a wire body, in order, `[DONE]` excluded: what the provider sent. */
export function payloads(wire: Uint8Array): Record<string, unknown>[] {
  return new TextDecoder()
    .decode(wire)
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

/** A `TokenUsage` with no cache writes, the only kind this format reports. */
export const usage = (promptTokens: number, cachedTokens: number, completionTokens: number): TokenUsage => ({
  promptTokens,
  cachedTokens,
  cacheWriteTokens: 0,
  completionTokens,
});
