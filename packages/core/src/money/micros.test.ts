import { describe, expect, it } from 'vitest';
import { ceilDiv } from './ceil-div.js';
import { formatMicrosAsUsd, parseUsdToMicros } from './micros.js';

describe('parseUsdToMicros', () => {
  it.each([
    ['0.15', 150_000],
    ['3', 3_000_000],
    ['0.000001', 1],
    ['0', 0],
    ['0.30', 300_000],
    ['12.5', 12_500_000],
    ['1.', 1_000_000],
    [' 2.25 ', 2_250_000],
    ['1000000', 1_000_000_000_000],
  ])('parses the string %j exactly into %d micros', (text, micros) => {
    expect(parseUsdToMicros(text)).toBe(micros);
  });

  it.each([
    [0.15, 150_000],
    [3, 3_000_000],
    [0.000001, 1],
  ])('parses the number %d exactly into %d micros', (value, micros) => {
    expect(parseUsdToMicros(value)).toBe(micros);
  });

  it('never goes through a float: 8.2 (8199999.999… as a float × 1e6) gives 8200000', () => {
    expect(8.2 * 1_000_000).not.toBe(8_200_000);
    expect(parseUsdToMicros('8.2')).toBe(8_200_000);
    expect(parseUsdToMicros(8.2)).toBe(8_200_000);
  });

  it.each(['0.0000001', '1.1234567', '-1', '-0.5', '1e-7', 'abc', '', '.5', '1,5', '+1', 'Infinity'])(
    'refuses %j',
    (text) => {
      expect(() => parseUsdToMicros(text)).toThrow(RangeError);
    },
  );

  it('refuses numbers with more than 6 decimals, negatives and non-finite numbers', () => {
    expect(() => parseUsdToMicros(1e-7)).toThrow(/decimal/);
    expect(() => parseUsdToMicros(-1)).toThrow(RangeError);
    expect(() => parseUsdToMicros(Number.NaN)).toThrow(RangeError);
  });
});

describe('formatMicrosAsUsd', () => {
  it.each([
    [0, '0.000000'],
    [1, '0.000001'],
    [150_000, '0.150000'],
    [9_500_000, '9.500000'],
    [-500_000, '-0.500000'],
  ])('formats %d as %s', (micros, text) => {
    expect(formatMicrosAsUsd(micros)).toBe(text);
  });
});

describe('ceilDiv', () => {
  it('rounds up only when there is a remainder', () => {
    expect(ceilDiv(10n, 5n)).toBe(2);
    expect(ceilDiv(11n, 5n)).toBe(3);
    expect(ceilDiv(0n, 7n)).toBe(0);
  });
  it('keeps precision beyond 2^53 in the product', () => {
    // 10^12 micros × 5 % in micro-percent = 5·10^18, far past 2^53, divides back exactly.
    expect(ceilDiv(1_000_000_000_001n * 5_000_000n, 100_000_000n)).toBe(50_000_000_001);
    expect(() => ceilDiv(2n ** 60n, 1n)).toThrow(RangeError);
  });
});
