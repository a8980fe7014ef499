import type { ChatUsage, TokenUsage } from '../chat-types.js';
import type { AnthropicUsage } from './anthropic-wire-schemas.js';

/**
 * Anthropic usage → the gateway's counts. Anthropic's `input_tokens` excludes the cached part, so
 * the prompt is input + cache read + cache write (product decision); a missing count is 0.
 */
export function toTokenUsage(usage: AnthropicUsage): TokenUsage {
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  return {
    promptTokens: (usage.input_tokens ?? 0) + cacheRead + cacheWrite,
    cachedTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    completionTokens: usage.output_tokens ?? 0,
  };
}

/** The gateway's counts as an OpenAI `usage` object. */
export function toChatUsage(usage: TokenUsage): ChatUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
  };
}

const USAGE_COUNTS = [
  'input_tokens',
  'output_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
] as const;

/**
 * A stream's usage so far with a later report (`message_start`, then `message_delta`) laid over it:
 * `message_delta` may repeat the input counts or send them as `null`, so only numbers replace what
 * was known. `next` may be anything the stream sent; whatever is not a count is ignored.
 */
export function mergeAnthropicUsage(
  usage: AnthropicUsage | null,
  next: Partial<Record<(typeof USAGE_COUNTS)[number], unknown>> | null | undefined,
): AnthropicUsage | null {
  if (!next || typeof next !== 'object') return usage;
  const merged: AnthropicUsage = { ...usage };
  for (const key of USAGE_COUNTS) {
    const value = next[key];
    if (typeof value === 'number') merged[key] = value;
  }
  return merged;
}
