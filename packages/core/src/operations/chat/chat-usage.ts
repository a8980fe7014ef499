import type { MeteredUsage } from '../../metering/usage.js';

/** The OpenAI `usage` object for our token counts. */
export function chatUsage(usage: MeteredUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
  };
}

/** Characters of generated output in a message or delta: text, reasoning and tool-call arguments. */
export function outputCharacters(part: {
  content?: unknown;
  tool_calls?: { function?: { arguments?: string } }[];
  [field: string]: unknown;
}): number {
  let chars = typeof part.content === 'string' ? part.content.length : 0;
  for (const field of ['reasoning_content', 'reasoning', 'refusal'] as const) {
    const value = part[field];
    if (typeof value === 'string') chars += value.length;
  }
  for (const call of part.tool_calls ?? []) chars += call.function?.arguments?.length ?? 0;
  return chars;
}
