import type { TokenUsage } from '../providers/chat-types.js';

/**
 * What a request consumed, in the units prices are given in: tokens (priced per million) and the
 * non-token lines (images generated, rerank search units), each priced per unit.
 */
export interface MeteredUsage extends TokenUsage {
  images: number;
  searchUnits: number;
}

/** A usage with every line not given at zero. */
export function meteredUsage(lines: Partial<MeteredUsage>): MeteredUsage {
  return {
    promptTokens: lines.promptTokens ?? 0,
    cachedTokens: lines.cachedTokens ?? 0,
    cacheWriteTokens: lines.cacheWriteTokens ?? 0,
    completionTokens: lines.completionTokens ?? 0,
    images: lines.images ?? 0,
    searchUnits: lines.searchUnits ?? 0,
  };
}

/**
 * Token counts to charge when the provider's own count is missing or incomplete (Cost rule 7): the
 * prompt as the provider reported it, else as the pre-flight estimated it; the completion at about
 * 4 characters per token over the text actually delivered (or the provider's partial count, if
 * higher), bounded by the completion ceiling the request was held against.
 */
export function estimatedUsage(
  worst: MeteredUsage,
  known: TokenUsage | null,
  deliveredChars: number,
): MeteredUsage {
  const fromText = Math.ceil(deliveredChars / 4);
  return meteredUsage({
    promptTokens: known && known.promptTokens > 0 ? known.promptTokens : worst.promptTokens,
    cachedTokens: known?.cachedTokens ?? 0,
    cacheWriteTokens: known?.cacheWriteTokens ?? 0,
    completionTokens: Math.min(Math.max(fromText, known?.completionTokens ?? 0), worst.completionTokens),
  });
}
