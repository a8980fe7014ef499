import type { ChatCompletionChunk, TokenUsage } from '../chat-types.js';
import { type ReadyChunks, type SseConverter, sseChunks } from '../sse-chunks.js';
import { UpstreamError } from '../upstream-error.js';
import { convertOpenAIUsage } from './convert-openai-usage.js';
import { openAIChunkSchema } from './openai-wire-schemas.js';
import { errorMessageOf, parseJsonOrUndefined } from './read-openai-error.js';

/**
 * Chunks of an OpenAI-format stream, from its bytes (server-sent events), as the caller should see them.
 *
 * - Each chunk passes through as the provider sent it, every field kept (`reasoning_content`,
 *   `obfuscation`, `x_groq`, tool-call deltas in whatever shape, an index starting at 1…), except
 *   `usage`: it is removed from every chunk, `null` or not, because the gateway reports usage once,
 *   on its own terminal chunk.
 * - Usage is captured wherever it arrives and handed to `onUsage` (last report wins): on a separate
 *   usage chunk with no choices (OpenAI; that chunk is consumed, not yielded) or on the finish chunk
 *   (DeepSeek, Groq; that chunk is yielded without it).
 * - Stops at `data: [DONE]`. A stream that ends without `[DONE]` is complete if a `finish_reason`
 *   arrived, and broken otherwise.
 * - Throws `UpstreamError` (kind `network`) on an `error` event, on a `{error:{…}}` payload, on a
 *   data line that is not a JSON chunk (skipping it could silently drop text or usage, and the
 *   gateway meters what it delivered) and on a broken end. Chunks before the failure are yielded.
 *   Events of other named types are ignored.
 */
export function convertOpenAIStream(
  bytes: AsyncIterable<Uint8Array>,
  onUsage: (usage: TokenUsage) => void,
): ReadyChunks<ChatCompletionChunk> {
  return sseChunks(bytes, openAIStreamConverter(onUsage));
}

/** The OpenAI format's events → chunks, one event at a time (see {@link convertOpenAIStream}). */
function openAIStreamConverter(onUsage: (usage: TokenUsage) => void): SseConverter<ChatCompletionChunk> {
  let finished = false;
  return {
    event(event, emit) {
      if (event.event === 'error') {
        const json = parseJsonOrUndefined(event.data);
        throw streamError(errorMessageOf(json) ?? 'upstream sent an error event', errorCodeOf(json));
      }
      if (event.event !== undefined && event.event !== 'message') return false;
      const data = event.data.trim();
      if (data === '[DONE]') return true;
      if (data === '') return false;

      const json = parseJsonOrUndefined(data);
      if (isErrorPayload(json)) {
        throw streamError(errorMessageOf(json) ?? 'upstream sent an error payload', errorCodeOf(json));
      }
      const parsed = openAIChunkSchema.safeParse(json);
      if (!parsed.success) throw streamError('upstream sent a malformed stream chunk');

      // Every key but `usage`, copied (a `delete` would take the object off V8's fast shapes when a
      // key follows it, as OpenAI's `obfuscation` does, and make it slower to write out).
      const { usage, ...chunk } = json as Record<string, unknown>;
      if (usage !== undefined && usage !== null) {
        const tokens = convertOpenAIUsage(usage);
        if (tokens) onUsage(tokens);
      }
      const choices = parsed.data.choices ?? [];
      if (choices.length === 0 && usage !== undefined && usage !== null) return false;
      if (choices.some((choice) => choice.finish_reason)) finished = true;
      // A missing `choices` becomes `[]`: downstream code may rely on the array being there.
      chunk.choices ??= [];
      emit(chunk as unknown as ChatCompletionChunk);
      return false;
    },
    end() {
      if (!finished) throw streamError('upstream stream ended before it finished');
    },
  };
}

function isErrorPayload(json: unknown): boolean {
  return typeof json === 'object' && json !== null && (json as { error?: unknown }).error != null;
}

/** The `code` (else `type`) of an `{error: {…}}` payload, so a wire that names codes can pass it on. */
function errorCodeOf(json: unknown): string | null {
  const error = (json as { error?: { code?: unknown; type?: unknown } } | undefined)?.error;
  if (!error || typeof error !== 'object') return null;
  if (typeof error.code === 'string') return error.code;
  return typeof error.type === 'string' ? error.type : null;
}

function streamError(message: string, code: string | null = null): UpstreamError {
  return new UpstreamError('network', message, null, null, code);
}
