import type { RoutePricing } from '../catalogue/catalogue.js';
import type { TokenUsage } from '../providers/chat-types.js';
import type { Micros } from '../storage/types.js';

/** A non-token unit a request can consume, each priced per unit on the route. */
export type Unit = 'image' | 'search_unit';

/** A non-token line of usage: how many of one unit a request consumed. */
export interface UnitLine {
  unit: Unit;
  count: number;
}

/**
 * What a request consumed, in the units prices are given in: tokens (priced per million) and a list
 * of unit lines (images generated, rerank search units), each priced per unit.
 */
export interface MeteredUsage extends TokenUsage {
  units: readonly UnitLine[];
}

/** The route price of one unit (whole micros): the one rule every unit line is priced by. */
const UNIT_PRICE: Readonly<Record<Unit, (pricing: RoutePricing) => Micros>> = {
  image: (pricing) => pricing.image,
  search_unit: (pricing) => pricing.search,
};

/** What one `unit` costs on the route priced by `pricing`. */
export function unitPrice(pricing: RoutePricing, unit: Unit): Micros {
  return UNIT_PRICE[unit](pricing);
}

/** What the unit lines of `usage` cost at `priceOf` per unit, exact (callers saturate). */
export function unitLinesMicros(usage: MeteredUsage, priceOf: (unit: Unit) => Micros): bigint {
  let sum = 0n;
  for (const line of usage.units) sum += BigInt(line.count) * BigInt(priceOf(line.unit));
  return sum;
}

/** How many of `unit` the usage has (0 when it has no such line). */
export function unitCount(usage: MeteredUsage, unit: Unit): number {
  let count = 0;
  for (const line of usage.units) if (line.unit === unit) count += line.count;
  return count;
}

/** A usage with every token line not given at zero, and the unit lines given (none by default). */
export function meteredUsage(lines: Partial<TokenUsage> & { units?: readonly UnitLine[] }): MeteredUsage {
  return {
    promptTokens: lines.promptTokens ?? 0,
    cachedTokens: lines.cachedTokens ?? 0,
    cacheWriteTokens: lines.cacheWriteTokens ?? 0,
    completionTokens: lines.completionTokens ?? 0,
    units: lines.units ?? [],
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
