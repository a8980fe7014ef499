import type { TokenUsage } from '../chat-types.js';
import type { ResponsesStreamEvent } from '../provider-adapter.js';
import { type ReadyChunks, type SseConverter, sseChunks } from '../sse-chunks.js';
import { UpstreamError } from '../upstream-error.js';
import { parseJsonOrUndefined } from './read-openai-error.js';

/** Longest upstream error message passed on. */
const MAX_MESSAGE_CHARS = 1000;

/**
 * The events of an OpenAI Responses stream, from its bytes (server-sent events), each as the
 * upstream sent it (every field kept), for a caller who speaks the same wire.
 *
 * - Ends at the terminal event, `response.completed` or `response.incomplete` (it is given, and
 *   its `response.usage` handed to `onUsage`), or at a `data: [DONE]` some compatible servers add.
 *   A stream that ends before a terminal event is broken.
 * - `response.failed` and `error` events break the stream: `UpstreamError('network')` carrying the
 *   upstream's `error.code` and message (`rate_limit_exceeded`, `context_length_exceeded`, …), so
 *   the caller can tell its client why. A data line that is not a JSON event breaks it too.
 *   Events before the failure are given first.
 */
export function convertResponsesStream(
  bytes: AsyncIterable<Uint8Array>,
  onUsage: (usage: TokenUsage) => void,
): ReadyChunks<ResponsesStreamEvent> {
  return sseChunks(bytes, responsesStreamConverter(onUsage));
}

function responsesStreamConverter(onUsage: (usage: TokenUsage) => void): SseConverter<ResponsesStreamEvent> {
  return {
    event(event, emit) {
      const data = event.data.trim();
      if (data === '[DONE]') throw streamError('upstream stream ended before it finished', null);
      if (data === '') return false;
      const json = parseJsonOrUndefined(data) as Record<string, unknown> | undefined;
      if (!json || typeof json !== 'object' || typeof json.type !== 'string') {
        throw streamError('upstream sent a malformed stream event', null);
      }
      const type = json.type;
      if (type === 'error' || event.event === 'error') throw failure(json.error ?? json);
      if (type === 'response.failed') {
        throw failure((json.response as { error?: unknown } | undefined)?.error ?? null);
      }
      if (type === 'response.completed' || type === 'response.incomplete') {
        const usage = convertResponsesUsage((json.response as { usage?: unknown } | undefined)?.usage);
        if (usage) onUsage(usage);
        emit(json as ResponsesStreamEvent);
        return true;
      }
      emit(json as ResponsesStreamEvent);
      return false;
    },
    end() {
      throw streamError('upstream stream ended before it finished', null);
    },
  };
}

/**
 * Token counts from a Responses `usage` (`input_tokens`, `input_tokens_details.cached_tokens`,
 * `output_tokens`, reasoning included), or `null` when they are not whole non-negative numbers.
 */
export function convertResponsesUsage(usage: unknown): TokenUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const u = usage as {
    input_tokens?: unknown;
    output_tokens?: unknown;
    input_tokens_details?: { cached_tokens?: unknown } | null;
  };
  if (!isCount(u.input_tokens) || !isCount(u.output_tokens)) return null;
  const cached = u.input_tokens_details?.cached_tokens;
  return {
    promptTokens: u.input_tokens,
    // A subset of the input: a count above it must not make the uncached rest negative.
    cachedTokens: isCount(cached) ? Math.min(cached, u.input_tokens) : 0,
    cacheWriteTokens: 0,
    completionTokens: u.output_tokens,
  };
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** A `response.failed` or `error` event's error as the break it causes. */
function failure(error: unknown): UpstreamError {
  const e = (error && typeof error === 'object' ? error : {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : null;
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : 'upstream response failed';
  return streamError(message, code);
}

function streamError(message: string, code: string | null): UpstreamError {
  const cut = message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
  return new UpstreamError('network', cut, null, null, code);
}
