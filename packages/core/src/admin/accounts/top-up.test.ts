import { describe, expect, it } from 'vitest';
import { topUpEntries } from './top-up.js';

describe('topUpEntries', () => {
  it('writes the credit and a 5 % fee line: $10 leaves the balance $9.50 higher', () => {
    const entries = topUpEntries(10_000_000, 5_000_000);
    expect(entries.map((e) => [e.kind, e.amountMicros])).toEqual([
      ['credit', 10_000_000],
      ['fee', -500_000],
    ]);
    expect(entries.reduce((sum, e) => sum + e.amountMicros, 0)).toBe(9_500_000);
  });

  it('rounds the fee up to the micro', () => {
    // 3 % of 0.000033 USD = 0.00000099 → 1 micro
    expect(topUpEntries(33, 3_000_000)[1]?.amountMicros).toBe(-1);
    // 2.5 % of 1.000001 = 0.025000025 → 25001 micros
    expect(topUpEntries(1_000_001, 2_500_000)[1]?.amountMicros).toBe(-25_001);
  });

  it('writes no fee line when the fee is zero', () => {
    expect(topUpEntries(10_000_000, 0)).toHaveLength(1);
  });

  it('refuses a zero, negative or fractional amount', () => {
    expect(() => topUpEntries(0, 0)).toThrow(RangeError);
    expect(() => topUpEntries(-1, 0)).toThrow(RangeError);
    expect(() => topUpEntries(1.5, 0)).toThrow(RangeError);
  });
});
