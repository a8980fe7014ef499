import type { RoutePricing } from '../catalogue/catalogue.js';
import { microsToUsdNumber } from '../money/micros.js';
import type { Micros } from '../storage/types.js';
import { computeTokenCost } from './compute-cost.js';
import type { MeteredUsage } from './usage.js';

/** Why a request that would have cost something is charged nothing. */
export type Waiver = 'zero_completion';

/** What a request is charged, and why it may be zero. */
export interface Charge {
  /** What the caller pays. */
  costMicros: Micros;
  /** What the request would otherwise have cost (non-zero only when waived). */
  savedMicros: Micros;
  waived: Waiver | null;
  /** The token lines, rounded up once. */
  tokenMicros: Micros;
  /** The per-unit lines (images, search units): whole micros, no rounding. */
  nonTokenMicros: Micros;
}

/**
 * Prices a request's usage on the route that served it — tokens (Cost rules 2–3), plus images ×
 * `image` and search units × `search` — and applies the `zero_completion` waiver: a chat answer with
 * no text and no tool calls costs nothing (a turn that only calls tools is billed).
 */
export function priceUsage(usage: MeteredUsage, pricing: RoutePricing, producedOutput: boolean): Charge {
  const tokenMicros = computeTokenCost(usage, pricing).micros;
  const nonTokenMicros = usage.images * pricing.image + usage.searchUnits * pricing.search;
  const total = tokenMicros + nonTokenMicros;
  if (!producedOutput && total > 0) {
    return { costMicros: 0, savedMicros: total, waived: 'zero_completion', tokenMicros, nonTokenMicros };
  }
  return { costMicros: total, savedMicros: 0, waived: null, tokenMicros, nonTokenMicros };
}

/** Who served a request, for the `gateway` object. */
export interface ServedView {
  requestId: string;
  model: string;
  provider: string;
  attempts: number;
  requestedModel: string;
}

/** The response's `gateway` object. */
export function gatewayCostView(charge: Charge, served: ServedView) {
  const tokens = charge.waived ? 0 : charge.tokenMicros;
  const nonTokens = charge.waived ? 0 : charge.nonTokenMicros;
  return {
    request_id: served.requestId,
    cost_micros: charge.costMicros,
    cost_usd: microsToUsdNumber(charge.costMicros),
    model: served.model,
    ...(served.requestedModel !== served.model && { requested_model: served.requestedModel }),
    provider: served.provider,
    attempts: served.attempts,
    cost_breakdown: {
      tokens_micros: tokens,
      tokens_usd: microsToUsdNumber(tokens),
      non_token_micros: nonTokens,
      non_token_usd: microsToUsdNumber(nonTokens),
    },
    ...(charge.waived && { waived: charge.waived, saved_usd: microsToUsdNumber(charge.savedMicros) }),
  };
}
