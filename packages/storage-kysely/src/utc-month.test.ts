import { describe, expect, it } from 'vitest';
import { utcMonthContaining } from './utc-month.js';

const utc = (iso: string) => Date.parse(iso);

describe('utcMonthContaining', () => {
  it.each([
    ['mid-month', '2025-06-15T12:00:00.000Z', '2025-06-01T00:00:00.000Z', '2025-07-01T00:00:00.000Z'],
    [
      'the first millisecond',
      '2025-06-01T00:00:00.000Z',
      '2025-06-01T00:00:00.000Z',
      '2025-07-01T00:00:00.000Z',
    ],
    [
      'the last millisecond',
      '2025-06-30T23:59:59.999Z',
      '2025-06-01T00:00:00.000Z',
      '2025-07-01T00:00:00.000Z',
    ],
    [
      'December rolls into next year',
      '2025-12-31T23:59:59.999Z',
      '2025-12-01T00:00:00.000Z',
      '2026-01-01T00:00:00.000Z',
    ],
    ['a leap February', '2024-02-29T08:00:00.000Z', '2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z'],
    ['before 1970', '1969-07-20T20:17:00.000Z', '1969-07-01T00:00:00.000Z', '1969-08-01T00:00:00.000Z'],
  ])('%s', (_, at, start, end) => {
    expect(utcMonthContaining(utc(at))).toEqual({ start: utc(start), end: utc(end) });
  });

  it('refuses a time that is not a finite number', () => {
    expect(() => utcMonthContaining(Number.NaN)).toThrow(RangeError);
  });
});
