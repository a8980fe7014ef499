import type { RoutePricing } from '../catalogue/catalogue.js';
import { ceilDivSaturating } from '../money/ceil-div.js';
import type { TokenUsage } from '../providers/chat-types.js';
import type { Micros } from '../storage/types.js';

const TOKENS_PER_PRICE_UNIT = 1_000_000n;

/** The exact cost of a request's tokens on one route. */
interface TokenCost {
  /** Σ parts, rounded up once to the whole micro. */
  micros: Micros;
  /** The parts before rounding, in micro-dollars × 10⁻⁶ (i.e. tokens × micros-per-million), exact. */
  parts: { uncachedPrompt: bigint; cachedPrompt: bigint; cacheWrite: bigint; completion: bigint };
}

/**
 * Cost rules 2 and 3 of the spec: the uncached prompt part, the cached part (at the route's cached
 * rate when it has one), the cache-write part (at the route's `cache_write` rate when it has one)
 * and the completion are each `tokens × price_per_mtok`, summed at full precision and rounded up
 * to the next micro once for the whole request — never per part.
 */
export function computeTokenCost(usage: TokenUsage, pricing: RoutePricing): TokenCost {
  const cached = clamp(usage.cachedTokens, usage.promptTokens);
  const cacheWrite = clamp(usage.cacheWriteTokens, usage.promptTokens - cached);
  const uncached = usage.promptTokens - cached - cacheWrite;
  const parts = {
    uncachedPrompt: BigInt(uncached) * BigInt(pricing.prompt),
    cachedPrompt: BigInt(cached) * BigInt(pricing.cachedPrompt ?? pricing.prompt),
    cacheWrite: BigInt(cacheWrite) * BigInt(pricing.cacheWrite ?? pricing.prompt),
    completion: BigInt(Math.max(0, usage.completionTokens)) * BigInt(pricing.completion),
  };
  const total = parts.uncachedPrompt + parts.cachedPrompt + parts.cacheWrite + parts.completion;
  return { micros: ceilDivSaturating(total, TOKENS_PER_PRICE_UNIT), parts };
}

function clamp(value: number, max: number): number {
  return Math.max(0, Math.min(value, max));
}
