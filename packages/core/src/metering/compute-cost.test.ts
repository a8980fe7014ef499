import { describe, expect, it } from 'vitest';
import type { RoutePricing } from '../catalogue/catalogue.js';
import { computeTokenCost } from './compute-cost.js';

const sonnet: RoutePricing = {
  prompt: 3_000_000,
  completion: 15_000_000,
  cachedPrompt: 300_000,
  cacheWrite: 3_750_000,
  image: 0,
  search: 0,
};
const mini: RoutePricing = {
  prompt: 150_000,
  completion: 600_000,
  cachedPrompt: 75_000,
  cacheWrite: null,
  image: 0,
  search: 0,
};
const noCache: RoutePricing = {
  prompt: 150_000,
  completion: 600_000,
  cachedPrompt: null,
  cacheWrite: null,
  image: 0,
  search: 0,
};
const usage = (promptTokens: number, completionTokens: number, cachedTokens = 0, cacheWriteTokens = 0) => ({
  promptTokens,
  completionTokens,
  cachedTokens,
  cacheWriteTokens,
});

describe('computeTokenCost', () => {
  it.each([
    // 1000 × 3 + 500 × 15 = 10500 micros exactly
    ['sonnet, no cache', usage(1000, 500), sonnet, 10_500],
    // 7 × 0.15 + 3 × 0.6 = 1.05 + 1.8 = 2.85 → 3 (each part rounded up alone would give 2 + 2 = 4)
    ['rounds the sum up once, not each part', usage(7, 3), mini, 3],
    // 1 × 0.15 + 1 × 0.6 = 0.75 → 1 (per part: 1 + 1 = 2)
    ['one token each way costs one micro, not two', usage(1, 1), mini, 1],
    // uncached 122 × 3 = 366, cached 10000 × 0.3 = 3000, completion 10 × 15 = 150 → 3516
    ['charges cached prompt tokens at the cached rate', usage(10_122, 10, 10_000), sonnet, 3_516],
    // cached tokens without a cached rate: 10 × 0.15 + 0 = 1.5 → 2
    ['charges cached tokens at the full rate when the route has no cached rate', usage(10, 0, 8), noCache, 2],
    // 18639 cache-write × 3.75 = 69896.25, 3 × 3 = 9, 50 × 15 = 750 → 70655.25 → 70656
    ['charges cache writes at the cache_write rate', usage(18_642, 50, 0, 18_639), sonnet, 70_656],
    // cache write without a cache_write rate: at the prompt rate; 11 × 0.15 = 1.65 → 2
    ['charges cache writes at the prompt rate when the route has none', usage(11, 0, 0, 11), mini, 2],
    ['zero tokens cost zero', usage(0, 0), sonnet, 0],
  ])('%s', (_name, u, pricing, micros) => {
    expect(computeTokenCost(u, pricing).micros).toBe(micros);
  });

  it('keeps the parts exact before rounding', () => {
    expect(computeTokenCost(usage(7, 3), mini).parts).toEqual({
      uncachedPrompt: 1_050_000n,
      cachedPrompt: 0n,
      cacheWrite: 0n,
      completion: 1_800_000n,
    });
  });

  it('never counts more cached tokens than prompt tokens', () => {
    expect(computeTokenCost(usage(10, 0, 50), sonnet).micros).toBe(3);
  });

  it('stays exact for very large requests', () => {
    // 2,000,000 prompt tokens × 3 = 6,000,000 micros; 1,000,000 completion × 15 = 15,000,000
    expect(computeTokenCost(usage(2_000_000, 1_000_000), sonnet).micros).toBe(21_000_000);
  });
});
