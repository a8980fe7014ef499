import { describe, expect, it } from 'vitest';
import type { RoutePricing } from '../../catalogue/catalogue.js';
import { estimateTokens } from '../../metering/estimate-worst-case.js';
import { chatPromptTokens, choiceCount, completionCeiling, estimateWorstCase } from './chat-worst-case.js';

const cheap: RoutePricing = {
  prompt: 150_000,
  completion: 600_000,
  cachedPrompt: null,
  cacheWrite: null,
  image: 0,
  search: 0,
};
const dear: RoutePricing = {
  prompt: 3_000_000,
  completion: 15_000_000,
  cachedPrompt: 300_000,
  cacheWrite: 3_750_000,
  image: 0,
  search: 0,
};

describe('estimateWorstCase', () => {
  it('uses ⌈chars/4⌉ over the serialised messages and tools', () => {
    const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hello' }] };
    const json = JSON.stringify(request.messages); // 33 ASCII characters
    expect(estimateTokens(json)).toBe(9);
    expect(estimateWorstCase(request, [cheap], 100).usage.promptTokens).toBe(9);
    const withTools = { ...request, tools: [{ type: 'function' as const, function: { name: 'f' } }] };
    expect(estimateWorstCase(withTools, [cheap], 100).usage.promptTokens).toBe(
      Math.ceil((json.length + JSON.stringify(withTools.tools).length) / 4),
    );
  });

  it('prices at the highest prompt and completion price among the candidate routes, rounded up once', () => {
    const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hello' }] };
    // 9 tokens × 3.75 (cache-write is the highest prompt-side rate) + 100 × 15 = 33.75 + 1500 → 1534
    expect(estimateWorstCase(request, [cheap, dear], 100).micros).toBe(1_534);
    // 9 × 0.15 + 100 × 0.6 = 1.35 + 60 → 62
    expect(estimateWorstCase(request, [cheap], 100).micros).toBe(62);
  });

  it('holds each image part at the image price in tokens, not at the length of its URL or data', () => {
    const part = (url: string) => ({ type: 'image_url', image_url: { url } });
    const text = { type: 'text', text: 'what is this?' };
    const bare = { model: 'm', messages: [{ role: 'user' as const, content: [text] }] };
    const base = chatPromptTokens(bare, 3_000);
    const huge = `data:image/png;base64,${'A'.repeat(1_000_000)}`;
    const withData = { model: 'm', messages: [{ role: 'user' as const, content: [text, part(huge)] }] };
    const withUrl = {
      model: 'm',
      messages: [{ role: 'user' as const, content: [text, part('https://x.test/a.png')] }],
    };
    const two = {
      model: 'm',
      messages: [{ role: 'user' as const, content: [part('https://x.test/a.png'), text, part(huge)] }],
    };
    // The data URL alone would be 250,000 tokens at 4 characters a token.
    expect(chatPromptTokens(withData, 3_000)).toBeLessThan(base + 3_020);
    expect(chatPromptTokens(withData, 3_000)).toBeGreaterThanOrEqual(base + 3_000);
    expect(chatPromptTokens(withUrl, 765)).toBeGreaterThanOrEqual(base + 765);
    expect(chatPromptTokens(two, 3_000)).toBeGreaterThanOrEqual(base + 6_000);
    // The Responses wire's part name counts too.
    const responses = {
      model: 'm',
      messages: [{ role: 'user' as const, content: [{ type: 'input_image', image_url: huge }] }],
    };
    expect(chatPromptTokens(responses, 3_000)).toBeLessThan(3_100);
  });
});

describe('estimateTokens', () => {
  it.each([
    ['', 0],
    ['abcd', 1],
    ['abcde', 2],
    // CJK runs about one token per character: each non-ASCII unit is a token of its own.
    ['你好世界', 4],
    ['ab你好', 1 + 2],
    // An astral character is two UTF-16 units: counted twice, never under.
    ['😀', 2],
  ])('%j → %d tokens', (text, expected) => {
    expect(estimateTokens(text)).toBe(expected);
  });

  it('counts the ASCII of several texts together before rounding up once', () => {
    expect(estimateTokens('ab', 'cd')).toBe(1);
    expect(estimateTokens('ab', '你', 'cd')).toBe(2);
  });

  it('a CJK prompt is held at about one token per character, not one per four', () => {
    const cjk = '漢'.repeat(4000);
    const request = { model: 'm', messages: [{ role: 'user' as const, content: cjk }] };
    expect(estimateWorstCase(request, [cheap], 0).usage.promptTokens).toBeGreaterThanOrEqual(4000);
  });
});

describe('choiceCount', () => {
  it.each([
    [{}, 1],
    [{ n: 1 }, 1],
    [{ n: 10 }, 10],
    [{ best_of: 5 }, 5],
    [{ n: 3, best_of: 7 }, 7],
    [{ n: 'x' }, 1],
  ])('%j → %d', (fields, expected) => {
    expect(choiceCount({ model: 'm', messages: [], ...fields })).toBe(expected);
  });
});

describe('completionCeiling', () => {
  it('multiplies the per-choice ceiling by n (and best_of)', () => {
    expect(completionCeiling({ model: 'm', messages: [], max_tokens: 10, n: 128 }, 4096)).toBe(1280);
    expect(completionCeiling({ model: 'm', messages: [], n: 2 }, 4096)).toBe(8192);
    expect(completionCeiling({ model: 'm', messages: [], max_tokens: 10, best_of: 4 }, 4096)).toBe(40);
  });

  it.each([
    [{ max_tokens: 100 }, 100],
    [{ max_completion_tokens: 50 }, 50],
    [{}, 4096],
    [{ max_tokens: 100_000 }, 100_000],
    [{ max_tokens: 1, max_completion_tokens: 4096 }, 4096],
    [{ max_completion_tokens: 9, max_tokens: 3 }, 9],
    [{ max_tokens: 0 }, 4096],
    [{ max_tokens: 1.5 }, 4096],
  ])('%j with a 4096 ceiling → %d', (fields, expected) => {
    expect(completionCeiling({ model: 'm', messages: [], ...fields }, 4096)).toBe(expected);
  });
});
