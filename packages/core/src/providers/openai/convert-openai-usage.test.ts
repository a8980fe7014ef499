import { describe, expect, it } from 'vitest';
import { convertOpenAIUsage } from './convert-openai-usage.js';

describe('convertOpenAIUsage', () => {
  it.each([
    [
      'OpenAI, cache read in prompt_tokens_details',
      {
        prompt_tokens: 10122,
        completion_tokens: 1,
        total_tokens: 10123,
        prompt_tokens_details: { cached_tokens: 9984 },
      },
      { promptTokens: 10122, cachedTokens: 9984, cacheWriteTokens: 0, completionTokens: 1 },
    ],
    [
      'DeepSeek, both fields (prompt_tokens_details wins)',
      {
        prompt_tokens: 339,
        completion_tokens: 83,
        total_tokens: 422,
        prompt_tokens_details: { cached_tokens: 320 },
        prompt_cache_hit_tokens: 320,
        prompt_cache_miss_tokens: 19,
      },
      { promptTokens: 339, cachedTokens: 320, cacheWriteTokens: 0, completionTokens: 83 },
    ],
    [
      'DeepSeek, prompt_cache_hit_tokens only',
      {
        prompt_tokens: 339,
        completion_tokens: 83,
        prompt_cache_hit_tokens: 300,
        prompt_cache_miss_tokens: 39,
      },
      { promptTokens: 339, cachedTokens: 300, cacheWriteTokens: 0, completionTokens: 83 },
    ],
    [
      'Groq, float timings beside the counts',
      { queue_time: 0.04, prompt_tokens: 210, prompt_time: 0.01, completion_tokens: 15, total_tokens: 225 },
      { promptTokens: 210, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 15 },
    ],
    [
      'null cached_tokens',
      { prompt_tokens: 5, completion_tokens: 2, prompt_tokens_details: { cached_tokens: null } },
      { promptTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 2 },
    ],
    [
      'more cached than prompt tokens (clamped to the prompt)',
      { prompt_tokens: 5, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 9 } },
      { promptTokens: 5, cachedTokens: 5, cacheWriteTokens: 0, completionTokens: 2 },
    ],
  ])('%s', (_name, usage, expected) => {
    expect(convertOpenAIUsage(usage)).toEqual(expected);
  });

  it.each([
    ['absent', undefined],
    ['null', null],
    ['no completion count', { prompt_tokens: 5 }],
    ['a count as a string', { prompt_tokens: '5', completion_tokens: 2 }],
    ['a negative count', { prompt_tokens: -1, completion_tokens: 2 }],
    ['a fractional count', { prompt_tokens: 1.5, completion_tokens: 2 }],
  ])('is null when usage is %s', (_name, usage) => {
    expect(convertOpenAIUsage(usage)).toBeNull();
  });
});
