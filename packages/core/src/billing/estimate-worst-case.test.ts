import { describe, expect, it } from 'vitest';
import type { RoutePricing } from '../catalogue/catalogue.js';
import { completionCeiling, estimateTokens, estimateWorstCase } from './estimate-worst-case.js';

const cheap: RoutePricing = { prompt: 150_000, completion: 600_000, cachedPrompt: null, cacheWrite: null };
const dear: RoutePricing = {
  prompt: 3_000_000,
  completion: 15_000_000,
  cachedPrompt: 300_000,
  cacheWrite: 3_750_000,
};

describe('estimateWorstCase', () => {
  it('uses ⌈chars/4⌉ over the serialised messages and tools', () => {
    const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hello' }] };
    const chars = JSON.stringify(request.messages).length; // 33
    expect(estimateTokens(chars)).toBe(9);
    expect(estimateWorstCase(request, [cheap], 100).promptTokens).toBe(9);
    const withTools = { ...request, tools: [{ type: 'function' as const, function: { name: 'f' } }] };
    expect(estimateWorstCase(withTools, [cheap], 100).promptTokens).toBe(
      estimateTokens(chars + JSON.stringify(withTools.tools).length),
    );
  });

  it('prices at the highest prompt and completion price among the candidate routes, rounded up once', () => {
    const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hello' }] };
    // 9 tokens × 3.75 (cache-write is the highest prompt-side rate) + 100 × 15 = 33.75 + 1500 → 1534
    expect(estimateWorstCase(request, [cheap, dear], 100).micros).toBe(1_534);
    // 9 × 0.15 + 100 × 0.6 = 1.35 + 60 → 62
    expect(estimateWorstCase(request, [cheap], 100).micros).toBe(62);
  });
});

describe('completionCeiling', () => {
  it.each([
    [{ max_tokens: 100 }, 100],
    [{ max_completion_tokens: 50 }, 50],
    [{}, 4096],
    [{ max_tokens: 100_000 }, 4096],
    [{ max_tokens: 0 }, 4096],
    [{ max_tokens: 1.5 }, 4096],
  ])('%j with a 4096 ceiling → %d', (fields, expected) => {
    expect(completionCeiling({ model: 'm', messages: [], ...fields }, 4096)).toBe(expected);
  });
});
