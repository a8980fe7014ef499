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
