import type { GatewayError } from '../../errors/gateway-error.js';
import type { ChunkReading, StreamWriter } from '../../pipeline/inference-operation.js';
import { receivedSseText } from '../../providers/anthropic/anthropic-messages.js';
import { mapAnthropicStopReason } from '../../providers/anthropic/map-anthropic-stop-reason.js';
import type { ChatCompletionChunk } from '../../providers/chat-types.js';
import type { AnthropicEvent } from '../../providers/provider-adapter.js';
import { readChatChunk } from '../chat/chat-stream-writer.js';
import { chatStreamToEvents, eventText, type TranslatedHead } from './chat-stream-to-events.js';
import { anthropicErrorBody } from './render-messages-error.js';

/**
 * What a Messages stream carries: Anthropic's own events on a route passed through (and in a replay
 * of a cached answer), chat chunks on a translated route.
 */
export type MessagesChunk = AnthropicEvent | ChatCompletionChunk;

const isChatChunk = (chunk: MessagesChunk): chunk is ChatCompletionChunk =>
  Array.isArray((chunk as ChatCompletionChunk).choices);

/**
 * The Messages stream as a caller reads it. Anthropic's events are handed on exactly as they came
 * and nothing is added to them — their own `message_stop` ends the stream, a provider's `error`
 * event passes as it is and ends it too. Chat chunks are written in Anthropic's grammar
 * (`chatStreamToEvents`), closed by `message_delta` with the metered usage and `message_stop`.
 * A break the gateway sees (a stall, a cut connection, an output guardrail) ends either kind with
 * one `event: error` carrying Anthropic's error body.
 */
export function messagesStreamWriter(requestId: string, head: TranslatedHead): StreamWriter<MessagesChunk> {
  const translated = chatStreamToEvents(head);
  let passedThrough = false;
  let providerError = false;
  const errorEvent = (error: GatewayError) => eventText(anthropicErrorBody(error, requestId));
  return {
    write(chunk) {
      if (isChatChunk(chunk)) return { reading: readChatChunk(chunk), text: translated.chunk(chunk) };
      passedThrough = true;
      if (chunk.type === 'error') providerError = true;
      return { reading: readEvent(chunk), text: receivedSseText(chunk) ?? eventText(chunk) };
    },
    end({ finishReason, usage, error }) {
      if (passedThrough) return error && !providerError ? errorEvent(error) : '';
      if (error) return translated.beforeError() + errorEvent(error);
      return translated.finish(finishReason, usage);
    },
  };
}

/** What one of Anthropic's events carries for the meter: generated characters, output, the stop reason. */
function readEvent(event: AnthropicEvent): ChunkReading {
  let chars = 0;
  let produced = false;
  let finishReason: string | null = null;
  if (event.type === 'content_block_delta') {
    const delta = (event.delta ?? {}) as Record<string, unknown>;
    const text = delta.text ?? delta.partial_json ?? delta.thinking;
    if (typeof text === 'string') chars = text.length;
    produced = chars > 0;
  } else if (event.type === 'content_block_start') {
    const block = (event.content_block ?? {}) as Record<string, unknown>;
    if (typeof block.text === 'string') chars = block.text.length;
    produced = chars > 0 || block.type === 'tool_use';
  } else if (event.type === 'message_delta') {
    const reason = (event.delta as { stop_reason?: string | null } | undefined)?.stop_reason;
    if (reason) finishReason = mapAnthropicStopReason(reason);
  }
  return { chars, produced, finishReason };
}
