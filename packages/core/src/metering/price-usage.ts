import type { RoutePricing } from '../catalogue/catalogue.js';
import { saturatedMicros } from '../money/ceil-div.js';
import { microsToUsdNumber } from '../money/micros.js';
import type { Micros } from '../storage/types.js';
import { computeTokenCost } from './compute-cost.js';
import { type MeteredUsage, unitLinesMicros, unitPrice } from './usage.js';

/**
 * Why a request that would have cost something is charged nothing (spec Cost rule 5): the caller's
 * own provider key paid (`byok`), the model produced nothing (`zero_completion`), or the answer came
 * from the caller's response cache (`cache hit`).
 */
export type Waiver = 'byok' | 'zero_completion' | 'cache hit';

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
  /** Extra lines on top of the rest, by id (a plugin's fee: `web_search`), never waived (Cost rule 6). */
  lines?: Readonly<Record<string, Micros>>;
}

/** A line charged on top of the tokens, by id. */
interface ExtraLine {
  id: string;
  micros: Micros;
}

/**
 * Prices a request's usage on the route that served it — tokens (Cost rules 2–3), plus each unit
 * line × the route's price for that unit (`image`, `search`) — and applies a waiver: `byok` when the account's own key
 * paid the provider, else `zero_completion` for a chat answer with no text and no tool calls (a turn
 * that only calls tools is billed). A waived request costs nothing and saves what it would have cost.
 */
export function priceUsage(
  usage: MeteredUsage,
  pricing: RoutePricing,
  served: { producedOutput: boolean; byok: boolean },
): Charge {
  const tokenMicros = computeTokenCost(usage, pricing).micros;
  // Saturated, like the tokens: an absurd count is cut to the hold by `capAtHold`, never thrown.
  const nonTokenMicros = saturatedMicros(unitLinesMicros(usage, (unit) => unitPrice(pricing, unit)));
  const charge = {
    costMicros: saturatedMicros(BigInt(tokenMicros) + BigInt(nonTokenMicros)),
    savedMicros: 0,
    waived: null,
    tokenMicros,
    nonTokenMicros,
  };
  if (served.byok) return waive(charge, 'byok');
  if (!served.producedOutput) return waive(charge, 'zero_completion');
  return charge;
}

/** The charge with `waiver` applied: nothing to pay, the whole cost saved (no waiver on a zero cost). */
function waive(charge: Charge, waiver: Waiver): Charge {
  if (charge.costMicros === 0) return charge;
  return { ...charge, costMicros: 0, savedMicros: charge.costMicros, waived: waiver };
}

/**
 * The charge with extra lines on top (Cost rule 6: a plugin's fee): a waiver covers model tokens
 * only, so they are paid also when `byok`, `zero_completion` or a free route zeroes the rest.
 */
export function withChargeLines(charge: Charge, extra: readonly ExtraLine[]): Charge {
  if (extra.length === 0) return charge;
  const lines: Record<string, Micros> = { ...charge.lines };
  let costMicros = charge.costMicros;
  for (const { id, micros } of extra) {
    if (micros === 0) continue;
    lines[id] = (lines[id] ?? 0) + micros;
    costMicros = saturatedMicros(BigInt(costMicros) + BigInt(micros));
  }
  return costMicros === charge.costMicros ? charge : { ...charge, costMicros, lines };
}

/** What the extra lines of `charge` add up to. */
function extraMicros(charge: Charge): Micros {
  let sum = 0;
  for (const micros of Object.values(charge.lines ?? {})) sum += micros;
  return sum;
}

/**
 * A charge never exceeds its hold (product.md): the hold is the request's worst case, so usage an
 * upstream reports beyond it (a provider that ignored a limit, an absurd count) is charged at the
 * hold. What is cut comes off the token lines first, then the per-unit lines; an extra line (a
 * plugin's fee) was held in full and stays. `overrunMicros` is what was not charged (0 when the charge fits).
 */
export function capAtHold(charge: Charge, holdMicros: Micros): { charge: Charge; overrunMicros: Micros } {
  const overrunMicros = charge.costMicros - holdMicros;
  if (overrunMicros <= 0) return { charge, overrunMicros: 0 };
  const room = Math.max(0, holdMicros - extraMicros(charge));
  const nonTokenMicros = Math.min(charge.nonTokenMicros, room);
  const tokenMicros = Math.min(charge.tokenMicros, room - nonTokenMicros);
  return { charge: { ...charge, costMicros: holdMicros, tokenMicros, nonTokenMicros }, overrunMicros };
}

/** Who served a request, for the `gateway` object. */
export interface ServedView {
  requestId: string;
  model: string;
  provider: string;
  attempts: number;
  requestedModel: string;
  /** What transforms did to the request (`middle-out`), when it asked for any. */
  transforms?: readonly { id: string; dropped_messages: number }[];
}

/**
 * The response's `gateway` object. `lineIds`: the extra lines the gateway's features may charge,
 * each shown in `cost_breakdown` as `<id>_micros` and `<id>_usd` (0 when not charged).
 */
export function gatewayCostView(charge: Charge, served: ServedView, lineIds: readonly string[] = []) {
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
      ...extraLinesView(charge, lineIds),
    },
    ...(charge.waived && { waived: charge.waived, saved_usd: microsToUsdNumber(charge.savedMicros) }),
    ...(served.transforms && { transforms: served.transforms }),
  };
}

function extraLinesView(charge: Charge, lineIds: readonly string[]): Record<string, number> {
  const view: Record<string, number> = {};
  for (const id of lineIds) {
    const micros = charge.lines?.[id] ?? 0;
    view[`${id}_micros`] = micros;
    view[`${id}_usd`] = microsToUsdNumber(micros);
  }
  return view;
}
