import type { RoutePricing } from '../catalogue/catalogue.js';
import { ceilDiv } from '../money/ceil-div.js';
import type { ChatRequest } from '../providers/chat-types.js';
import type { Micros } from '../storage/types.js';

/**
 * Most completions one request may ask an upstream to generate (`n`, `best_of`). Each multiplies
 * the output, so the worst case must too; above this the request is refused `400 invalid_request`
 * by the body schema rather than held against a figure no real client needs.
 */
export const MAX_CHOICES = 128;

/**
 * Estimated tokens of a text for the pre-flight (product.md): ⌈ASCII characters / 4⌉ plus one token
 * per non-ASCII UTF-16 unit, since CJK and similar scripts run about a token per character. Counting
 * units rather than code points can only over-estimate (an astral character counts twice).
 */
export function estimateTokens(...texts: string[]): number {
  let ascii = 0;
  let other = 0;
  for (const text of texts) {
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) < 0x80) ascii++;
      else other++;
    }
  }
  return Math.ceil(ascii / 4) + other;
}

/**
 * How many completions the upstream may generate: the largest of `n` and `best_of` (a multiplier
 * an OpenAI-compatible upstream may honour when it is passed through), at least 1. The schema has
 * already refused values that are not integers from 1 to {@link MAX_CHOICES}.
 */
export function choiceCount(request: ChatRequest): number {
  let count = 1;
  for (const field of ['n', 'best_of'] as const) {
    const value = request[field];
    if (typeof value === 'number' && Number.isInteger(value) && value > count) count = value;
  }
  return count;
}

/**
 * The completion tokens a request may produce: its `max_tokens` (or `max_completion_tokens`), else
 * the model's ceiling, for each of the {@link choiceCount} completions it asks for.
 */
export function completionCeiling(request: ChatRequest, modelMaxOutputTokens: number): number {
  const asked = request.max_tokens ?? request.max_completion_tokens;
  const perChoice =
    typeof asked === 'number' && Number.isInteger(asked) && asked > 0
      ? Math.min(asked, modelMaxOutputTokens)
      : modelMaxOutputTokens;
  return perChoice * choiceCount(request);
}

export interface WorstCase {
  micros: Micros;
  promptTokens: number;
  completionTokens: number;
}

/**
 * The pre-flight worst case (product.md): prompt tokens estimated by {@link estimateTokens} over the
 * serialised messages and tools at the highest prompt price among the candidate routes, plus the
 * completion ceiling at the highest completion price among them, rounded up once.
 */
export function estimateWorstCase(
  request: ChatRequest,
  routes: readonly RoutePricing[],
  completionTokens: number,
): WorstCase {
  const promptTokens = estimateTokens(
    JSON.stringify(request.messages),
    request.tools ? JSON.stringify(request.tools) : '',
  );
  let promptPrice = 0;
  let completionPrice = 0;
  for (const route of routes) {
    promptPrice = Math.max(promptPrice, route.prompt, route.cacheWrite ?? 0);
    completionPrice = Math.max(completionPrice, route.completion);
  }
  const total =
    BigInt(promptTokens) * BigInt(promptPrice) + BigInt(completionTokens) * BigInt(completionPrice);
  return { micros: ceilDiv(total, 1_000_000n), promptTokens, completionTokens };
}
