import type { RoutePricing } from '../catalogue/catalogue.js';
import { ceilDiv } from '../money/ceil-div.js';
import type { ChatRequest } from '../providers/chat-types.js';
import type { Micros } from '../storage/types.js';

/** Rough tokens of a text: ⌈characters / 4⌉, the estimate product.md fixes for the pre-flight. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/** The completion tokens a request may produce: its `max_tokens` (or `max_completion_tokens`), else the model's ceiling. */
export function completionCeiling(request: ChatRequest, modelMaxOutputTokens: number): number {
  const asked = request.max_tokens ?? request.max_completion_tokens;
  return typeof asked === 'number' && Number.isInteger(asked) && asked > 0
    ? Math.min(asked, modelMaxOutputTokens)
    : modelMaxOutputTokens;
}

export interface WorstCase {
  micros: Micros;
  promptTokens: number;
  completionTokens: number;
}

/**
 * The pre-flight worst case (product.md): prompt tokens estimated as ⌈characters / 4⌉ over the
 * serialised messages and tools at the highest prompt price among the candidate routes, plus the
 * completion ceiling at the highest completion price among them, rounded up once.
 */
export function estimateWorstCase(
  request: ChatRequest,
  routes: readonly RoutePricing[],
  completionTokens: number,
): WorstCase {
  const characters =
    JSON.stringify(request.messages).length + (request.tools ? JSON.stringify(request.tools).length : 0);
  const promptTokens = estimateTokens(characters);
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
