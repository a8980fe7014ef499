import { errorEnvelope } from '../../errors/gateway-error.js';
import { sseEventText } from '../../http/responses.js';
import type { ServedView } from '../../metering/price-usage.js';
import type { ChunkReading, StreamWriter } from '../../pipeline/inference-operation.js';
import type { ChatCompletionChunk } from '../../providers/chat-types.js';
import { chatUsage, outputCharacters } from './chat-usage.js';

/**
 * The chat-completions stream as the spec frames it: each chunk as a `data:` event with the served
 * model's id, then a terminal chunk with usage and the `gateway` object, then `data: [DONE]`. After
 * a break, an `event: error` with the envelope comes first and the terminal chunk has no
 * `finish_reason`.
 */
export function chatStreamWriter(served: ServedView): StreamWriter<ChatCompletionChunk> {
  let last: ChatCompletionChunk | null = null;
  return {
    write(chunk) {
      chunk.model = served.model;
      last = chunk;
      return { reading: readChatChunk(chunk), text: sseEventText(JSON.stringify(chunk)) };
    },
    end({ finishReason, usage, gateway, error, createdAt }) {
      const terminal = {
        id: last?.id ?? served.requestId,
        object: 'chat.completion.chunk' as const,
        created: last?.created ?? Math.floor(createdAt / 1000),
        model: served.model,
        choices: [{ index: 0, delta: {}, finish_reason: finishReason }],
        usage: chatUsage(usage),
        gateway,
      };
      const failure = error
        ? sseEventText(JSON.stringify(errorEnvelope(error, served.requestId)), 'error')
        : '';
      return `${failure}${sseEventText(JSON.stringify(terminal))}${sseEventText('[DONE]')}`;
    },
  };
}

/** What a chat chunk carries for the meter: output characters (text, reasoning, tool arguments). */
export function readChatChunk(chunk: ChatCompletionChunk): ChunkReading {
  let chars = 0;
  let produced = false;
  let finishReason: string | null = null;
  for (const choice of chunk.choices) {
    const delta = choice.delta ?? {};
    const n = outputCharacters(delta);
    chars += n;
    if (n > 0 || (delta.tool_calls?.length ?? 0) > 0) produced = true;
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  return { chars, produced, finishReason };
}
