import { describe, expect, it } from 'vitest';
import type { RoutePricing } from '../catalogue/catalogue.js';
import { capAtHold, priceUsage, withChargeLines } from './price-usage.js';

const searchFee = (micros: number) => [{ id: 'web_search', micros }];

import { meteredUsage } from './usage.js';

const pricing: RoutePricing = {
  prompt: 3_000_000,
  completion: 15_000_000,
  cachedPrompt: null,
  cacheWrite: null,
  image: 40_000,
  search: 2_000,
};
const served = { producedOutput: true, byok: false };

describe('priceUsage', () => {
  it('prices absurd counts without throwing, saturating at the largest safe amount', () => {
    const absurd = meteredUsage({
      promptTokens: 1e15,
      completionTokens: 1e15,
      units: [
        { unit: 'image', count: 1e15 },
        { unit: 'search_unit', count: 1e15 },
      ],
    });
    const charge = priceUsage(absurd, pricing, served);
    expect(charge.costMicros).toBe(Number.MAX_SAFE_INTEGER);
    expect(Number.isSafeInteger(charge.tokenMicros)).toBe(true);
    expect(Number.isSafeInteger(charge.nonTokenMicros)).toBe(true);
    expect(withChargeLines(charge, searchFee(7_000)).costMicros).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('unit lines', () => {
  it('prices each line at the route price of its unit, whole micros', () => {
    const usage = meteredUsage({
      units: [
        { unit: 'image', count: 3 },
        { unit: 'search_unit', count: 5 },
      ],
    });
    const charge = priceUsage(usage, pricing, served);
    expect(charge.nonTokenMicros).toBe(3 * pricing.image + 5 * pricing.search);
    expect(charge.costMicros).toBe(charge.nonTokenMicros);
  });
});

describe('capAtHold', () => {
  it.each([
    ['a charge under its hold is kept', 900, 1_000, 900, 0],
    ['a charge equal to its hold is kept', 1_000, 1_000, 1_000, 0],
    ['a charge over its hold is cut to it', 1_500, 1_000, 1_000, 500],
  ])('%s', (_name, cost, hold, charged, overrun) => {
    const charge = { costMicros: cost, savedMicros: 0, waived: null, tokenMicros: cost, nonTokenMicros: 0 };
    const capped = capAtHold(charge, hold);
    expect(capped.charge.costMicros).toBe(charged);
    expect(capped.charge.tokenMicros).toBe(charged);
    expect(capped.overrunMicros).toBe(overrun);
  });

  it('cuts the token lines first, then the per-unit lines, and keeps the held search fee', () => {
    const charge = withChargeLines(
      { costMicros: 10_000, savedMicros: 0, waived: null, tokenMicros: 6_000, nonTokenMicros: 4_000 },
      searchFee(7_000),
    );
    const { charge: capped, overrunMicros } = capAtHold(charge, 12_000);
    expect(overrunMicros).toBe(5_000);
    expect(capped).toMatchObject({
      costMicros: 12_000,
      lines: { web_search: 7_000 },
      nonTokenMicros: 4_000,
      tokenMicros: 1_000,
    });
    const saturated = capAtHold(
      priceUsage(
        meteredUsage({ promptTokens: 1e15, units: [{ unit: 'image', count: 1e15 }] }),
        pricing,
        served,
      ),
      50_000,
    );
    expect(saturated.charge).toMatchObject({ costMicros: 50_000, nonTokenMicros: 50_000, tokenMicros: 0 });
    expect(saturated.overrunMicros).toBe(Number.MAX_SAFE_INTEGER - 50_000);
  });
});
