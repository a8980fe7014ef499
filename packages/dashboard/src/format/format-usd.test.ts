import { describe, expect, it } from 'vitest';
import { formatLimitUsd, formatMicros, formatUsd } from './format-usd.js';

describe('formatMicros', () => {
  it.each([
    [0, '$0.00'],
    [4_990_000, '$4.99'],
    [5_000_000, '$5.00'],
    [123, '$0.000123'],
    [1_500, '$0.0015'],
    [10_000, '$0.01'],
    [1_234_500_000, '$1,234.50'],
    [-2_500_000, '-$2.50'],
    [-7, '-$0.000007'],
  ])('formatMicros - shows %d micros as %s', (micros, text) => {
    expect(formatMicros(micros)).toBe(text);
  });
});

describe('formatUsd', () => {
  it('formatUsd - rounds a float to the micro-dollar before formatting', () => {
    expect(formatUsd(4.99)).toBe('$4.99');
    expect(formatUsd(0.1 + 0.2)).toBe('$0.30');
    expect(formatUsd(0.0000015)).toBe('$0.000002');
  });

  it('formatLimitUsd - shows a null limit as none', () => {
    expect(formatLimitUsd(null)).toBe('none');
    expect(formatLimitUsd(10)).toBe('$10.00');
  });
});
