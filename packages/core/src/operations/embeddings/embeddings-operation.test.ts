import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../metering/estimate-worst-case.js';
import { embeddingInputTokens } from './embeddings-operation.js';

describe('embeddingInputTokens', () => {
  it('counts each text by its own estimate (an upstream tokenizes each apart), token ids one each, token arrays by length', () => {
    expect(embeddingInputTokens('abcdefgh')).toBe(2);
    expect(embeddingInputTokens(['abc', 'de', 'Ünï'])).toBe(
      estimateTokens('abc') + estimateTokens('de') + estimateTokens('Ünï'),
    );
    expect(embeddingInputTokens(['a', 'b', 'c', 'd'])).toBe(4);
    expect(embeddingInputTokens([5, 6, 7])).toBe(3);
    expect(embeddingInputTokens([[1, 2], [3]])).toBe(3);
  });

  it('counts 500,000 texts without overflowing the call stack', () => {
    const texts = Array.from({ length: 500_000 }, () => 'abcd');
    expect(embeddingInputTokens(texts)).toBe(500_000);
  });
});
