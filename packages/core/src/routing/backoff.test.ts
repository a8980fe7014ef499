import { describe, expect, it } from 'vitest';
import { fullJitterBackoff } from './backoff.js';

describe('fullJitterBackoff', () => {
  it.each([
    [0, 0.999999, 249],
    [1, 0.999999, 499],
    [2, 0.5, 500],
    [3, 0.999999, 1999],
    [4, 0.999999, 3999],
    [5, 0.999999, 3999],
    [30, 0.999999, 3999],
  ])('retry %d with random %d waits %d ms (capped exponential from 250 ms to 4 s)', (retry, r, ms) => {
    expect(fullJitterBackoff(retry, () => r)).toBe(ms);
  });

  it('can wait zero: the pick starts at 0', () => {
    expect(fullJitterBackoff(3, () => 0)).toBe(0);
  });
});
