import type { RoutePricing } from '../catalogue/catalogue.js';
import { microsToUsdNumber } from '../money/micros.js';
import type { TokenUsage } from '../providers/chat-types.js';
import type { Micros } from '../storage/types.js';
import { computeTokenCost } from './compute-cost.js';

/** What a request is charged, and why it may be zero. */
export interface Charge {
  /** What the caller pays. */
  costMicros: Micros;
  /** What the request would otherwise have cost (non-zero only when waived). */
  savedMicros: Micros;
  waived: 'zero_completion' | null;
  tokenMicros: Micros;
}

/**
 * Prices a request's tokens on the route that served it and applies the `zero_completion` waiver:
 * no text and no tool calls cost nothing (a turn that only calls tools is billed).
 */
export function priceUsage(usage: TokenUsage, pricing: RoutePricing, producedOutput: boolean): Charge {
  const tokenMicros = computeTokenCost(usage, pricing).micros;
  if (!producedOutput && tokenMicros > 0) {
    return { costMicros: 0, savedMicros: tokenMicros, waived: 'zero_completion', tokenMicros };
  }
  return { costMicros: tokenMicros, savedMicros: 0, waived: null, tokenMicros };
}

/** The response's `gateway` object. */
export function gatewayCostView(
  charge: Charge,
  served: { requestId: string; model: string; provider: string; attempts: number; requestedModel: string },
) {
  return {
    request_id: served.requestId,
    cost_micros: charge.costMicros,
    cost_usd: microsToUsdNumber(charge.costMicros),
    model: served.model,
    ...(served.requestedModel !== served.model && { requested_model: served.requestedModel }),
    provider: served.provider,
    attempts: served.attempts,
    cost_breakdown: {
      tokens_micros: charge.waived ? 0 : charge.tokenMicros,
      tokens_usd: microsToUsdNumber(charge.waived ? 0 : charge.tokenMicros),
      non_token_micros: 0,
      non_token_usd: 0,
    },
    ...(charge.waived && { waived: charge.waived, saved_usd: microsToUsdNumber(charge.savedMicros) }),
  };
}
