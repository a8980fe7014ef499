import type { TokenUsage } from '../chat-types.js';
import { openAIUsageSchema } from './openai-wire-schemas.js';

/**
 * Token counts from an OpenAI-format `usage` object, or `null` when the value is absent or lacks the
 * prompt and completion counts as whole non-negative numbers (the gateway then estimates rather
 * than bill a guess).
 * Cache reads come from `prompt_tokens_details.cached_tokens`, else DeepSeek's
 * `prompt_cache_hit_tokens`; this format has no cache-write count.
 */
export function convertOpenAIUsage(usage: unknown): TokenUsage | null {
  const parsed = openAIUsageSchema.safeParse(usage);
  if (!parsed.success) return null;
  const u = parsed.data;
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? 0;
  return {
    promptTokens: u.prompt_tokens,
    // Cached tokens are a subset of the prompt; a provider claiming more must not make the
    // uncached remainder negative.
    cachedTokens: Math.min(cached, u.prompt_tokens),
    cacheWriteTokens: 0,
    completionTokens: u.completion_tokens,
  };
}
